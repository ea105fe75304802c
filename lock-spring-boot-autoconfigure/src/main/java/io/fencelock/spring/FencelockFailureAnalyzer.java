package io.fencelock.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a bad {@code fencelock.*} property at start-up by its name and rule. */
public class FencelockFailureAnalyzer extends AbstractFailureAnalyzer<FencelockPropertyException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, FencelockPropertyException cause) {
        return new FailureAnalysis(
                "The fencelock property '" + cause.property() + "' is invalid: " + cause.reason(),
                "Update '" + cause.property() + "' in the application's configuration.",
                cause);
    }
}
