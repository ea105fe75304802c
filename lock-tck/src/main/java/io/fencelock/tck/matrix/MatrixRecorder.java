package io.fencelock.tck.matrix;

import io.fencelock.tck.matrix.GuaranteeMatrix.Outcome;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import org.opentest4j.TestAbortedException;

/**
 * Fills a test class's {@link GuaranteeMatrix} from its tests' outcomes and writes it after the
 * class: a passed property that recorded no cells of its own held in normal operation, one
 * aborted as "not claimed" was not run, a failure is a violation with the failure as its
 * counter-example. Fault properties record their own cells (one per fault).
 */
public final class MatrixRecorder implements TestWatcher, AfterAllCallback {
    /** The configuration parameter (or system property) that moves the matrices. */
    public static final String DIRECTORY_PARAMETER = "fencelock.tck.matrixDir";

    /**
     * Where the matrices go: the JUnit configuration parameter {@value #DIRECTORY_PARAMETER} (which
     * JUnit also reads from system properties), by default {@code target/fencelock-tck}.
     */
    public static Path directory(ExtensionContext context) {
        return Path.of(context.getConfigurationParameter(DIRECTORY_PARAMETER).orElse("target/fencelock-tck"));
    }

    /** Implemented by a test class that keeps a matrix. */
    public interface Source {
        GuaranteeMatrix guaranteeMatrix();
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        matrix(context).ifPresent(m -> {
            String property = property(context);
            if (!m.hasEntriesFor(property)) {
                m.record(property, GuaranteeMatrix.NO_FAULT, true, Outcome.HELD, "held", null);
            }
        });
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        matrix(context).ifPresent(m -> {
            String property = property(context);
            if (!m.hasEntriesFor(property)) {
                String why = cause == null ? "aborted" : cause.getMessage();
                boolean notClaimed =
                        cause instanceof TestAbortedException && why != null && why.contains("not claimed");
                m.record(property, GuaranteeMatrix.NO_FAULT, !notClaimed, Outcome.NOT_RUN, why, null);
            }
        });
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        matrix(context).ifPresent(m -> {
            String property = property(context);
            boolean recorded = m.entries().stream()
                    .anyMatch(e -> e.property().equals(property) && e.outcome() == Outcome.VIOLATED);
            if (!recorded) {
                String message = String.valueOf(cause);
                m.record(property, GuaranteeMatrix.NO_FAULT, true, Outcome.VIOLATED, firstLine(message), message);
            }
        });
    }

    @Override
    public void afterAll(ExtensionContext context) {
        context.getTestInstance()
                .filter(Source.class::isInstance)
                .map(i -> ((Source) i).guaranteeMatrix())
                .ifPresent(m -> {
                    Path file = m.write(directory(context));
                    System.out.println(
                            "[fencelock-tck] guarantee matrix " + file.toAbsolutePath() + ":\n" + m.summary());
                });
    }

    private static Optional<GuaranteeMatrix> matrix(ExtensionContext context) {
        return context.getTestInstance().filter(Source.class::isInstance).map(i -> ((Source) i).guaranteeMatrix());
    }

    private static String property(ExtensionContext context) {
        return context.getTestMethod().map(java.lang.reflect.Method::getName).orElse(context.getDisplayName());
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
