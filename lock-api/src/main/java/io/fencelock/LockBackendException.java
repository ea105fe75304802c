package io.fencelock;

/**
 * The backend could not be reached or answered with an error. {@link #isRetryable()} tells whether
 * the same call may succeed later (a lost connection, a deadlock, a timeout) or cannot (a missing
 * table, bad credentials). Messages never contain credentials.
 */
public class LockBackendException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean retryable;

    public LockBackendException(String message, Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    public LockBackendException(String message, boolean retryable) {
        this(message, null, retryable);
    }

    public boolean isRetryable() {
        return retryable;
    }
}
