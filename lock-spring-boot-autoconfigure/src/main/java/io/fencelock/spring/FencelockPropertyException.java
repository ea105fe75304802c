package io.fencelock.spring;

/**
 * A {@code fencelock.*} property (or a missing one) stops start-up: names the property and the
 * rule, never a credential. {@link FencelockFailureAnalyzer} turns it into Boot's start-up report.
 */
public class FencelockPropertyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String property;
    private final String reason;

    public FencelockPropertyException(String property, String reason, Throwable cause) {
        super("invalid fencelock configuration: property '" + property + "': " + reason, cause);
        this.property = property;
        this.reason = reason;
    }

    /** The property to fix, e.g. {@code fencelock.ttl}. */
    public String property() {
        return property;
    }

    /** What is wrong with it. */
    public String reason() {
        return reason;
    }
}
