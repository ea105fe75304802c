package io.fencelock.fencing;

/**
 * A write was refused because its fencing token is lower than one the resource has already
 * accepted: its writer lost the lock (a pause, a cut network) and someone else holds it now.
 * Nothing of the refused write was applied. Do not retry it with the same token; the writer must
 * take the lock again and redo its work from the current state.
 */
public final class StaleTokenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long offeredToken;
    private final long currentToken;

    /**
     * @param resource     the key of the fenced resource
     * @param offeredToken the token the refused write carried
     * @param currentToken the highest token the resource had accepted, 0 when it could not be read
     */
    public StaleTokenException(String resource, long offeredToken, long currentToken) {
        super("stale fencing token " + offeredToken + " for " + Checks.quote(String.valueOf(resource))
                + (currentToken > 0
                        ? ": the resource has already accepted token " + currentToken
                        : ": the resource has already accepted a higher token")
                + "; nothing was written");
        this.resource = resource;
        this.offeredToken = offeredToken;
        this.currentToken = currentToken;
    }

    /** The key of the fenced resource. */
    public String resource() {
        return resource;
    }

    /** The token the refused write carried. */
    public long offeredToken() {
        return offeredToken;
    }

    /** The highest token the resource had accepted when it refused the write (0 when unknown). */
    public long currentToken() {
        return currentToken;
    }
}
