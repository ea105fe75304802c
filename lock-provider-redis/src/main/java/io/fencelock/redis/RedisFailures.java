package io.fencelock.redis;

import io.fencelock.LockBackendException;
import io.fencelock.spi.Redaction;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Lettuce's failures as {@link LockBackendException}s: whether the same call may succeed later, and a
 * message without credentials.
 */
final class RedisFailures {
    private RedisFailures() {}

    static LockBackendException failure(String operation, Throwable e, String where) {
        return failure(operation, e, where, null);
    }

    /** With the raw {@code uri} the client was made with, whose echoes in the driver's message are redacted. */
    static LockBackendException failure(String operation, Throwable e, String where, String uri) {
        Throwable cause = unwrap(e);
        return new LockBackendException(
                "Redis " + operation + " failed on " + where + ": " + Redaction.message(describe(cause), uri),
                cause,
                isRetryable(cause));
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            if (c.getMessage() != null && !sb.toString().contains(c.getMessage())) {
                sb.append(" (").append(c.getMessage()).append(')');
            }
        }
        return sb.toString();
    }

    /** Whether the same call may succeed later: the server or the network had a moment, not a bug or bad credentials. */
    static boolean isRetryable(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RedisCommandExecutionException && isAuthError(c.getMessage())) {
                return false;
            }
        }
        if (e instanceof RedisCommandExecutionException) {
            String m = String.valueOf(e.getMessage());
            // BUSY (a script runs), LOADING (the data set), TRYAGAIN/CLUSTERDOWN (resharding, failover),
            // MASTERDOWN/READONLY (Sentinel or Cluster failover in progress), NOREPLICAS, OOM (may pass)
            return m.startsWith("BUSY")
                    || m.startsWith("LOADING")
                    || m.startsWith("TRYAGAIN")
                    || m.startsWith("CLUSTERDOWN")
                    || m.startsWith("MASTERDOWN")
                    || m.startsWith("READONLY")
                    || m.startsWith("NOREPLICAS")
                    || m.startsWith("OOM");
        }
        return e instanceof RedisConnectionException
                || e instanceof RedisCommandTimeoutException
                || e instanceof RedisCommandInterruptedException
                || e instanceof IOException
                || e instanceof CancellationException
                || e
                        instanceof
                        RedisException; // "Connection disconnected", "Currently not connected. Commands are rejected."
    }

    private static boolean isAuthError(String message) {
        return message != null
                && (message.startsWith("NOAUTH")
                        || message.startsWith("WRONGPASS")
                        || message.startsWith("NOPERM")
                        || message.contains("invalid password")
                        || message.contains("invalid username-password"));
    }

    /** The failure inside a future's wrappers. */
    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
