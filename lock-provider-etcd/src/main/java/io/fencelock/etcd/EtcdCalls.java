package io.fencelock.etcd;

import io.etcd.jetcd.common.exception.EtcdException;
import io.fencelock.LockBackendException;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.Replies;
import io.grpc.Status;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Waiting for jetcd's replies, bounded by the request timeout, and its failures as
 * {@link LockBackendException}s: retryable by gRPC status, messages without credentials.
 */
final class EtcdCalls {
    private final Duration timeout;
    private final String where;

    EtcdCalls(Duration timeout, String where) {
        this.timeout = timeout;
        this.where = where;
    }

    /**
     * Waits for one call, bounded by the request timeout; maps failures to {@link LockBackendException}.
     * An interrupt does not abandon a request already sent (etcd may still apply it, and nobody would
     * know): the wait goes on to the answer or the timeout, and the interrupt is set again afterwards.
     * {@code operation + subject} names the call in a failure, built only then.
     */
    <T> T await(String operation, String subject, CompletableFuture<T> call) {
        try {
            return Replies.await(call, timeout.toNanos());
        } catch (TimeoutException e) {
            String what = what(operation, subject);
            call.cancel(true);
            throw new LockBackendException(what + " timed out after " + timeout, e, true);
        } catch (CancellationException e) {
            throw new LockBackendException(what(operation, subject) + " cancelled", e, true);
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw failure(what(operation, subject), cause);
        }
    }

    private String what(String operation, String subject) {
        return operation + subject + (operation.endsWith("'") ? "'" : "") + " on " + where;
    }

    static LockBackendException failure(String what, Throwable cause) {
        String code = codeOf(cause);
        boolean retryable = switch (code) {
            case "UNAVAILABLE", "DEADLINE_EXCEEDED", "ABORTED", "RESOURCE_EXHAUSTED", "CANCELLED" -> true;
            default -> false;
        };
        String message =
                cause.getMessage() == null ? cause.getClass().getSimpleName() : Redaction.message(cause.getMessage());
        return new LockBackendException(what + " failed (" + code + "): " + message, cause, retryable);
    }

    private static String codeOf(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof EtcdException ee && ee.getErrorCode() != null) {
                return ee.getErrorCode().name();
            }
        }
        Status status = Status.fromThrowable(cause);
        if (status.getCode() == Status.Code.UNKNOWN && cause instanceof IOException) {
            return "UNAVAILABLE";
        }
        return status.getCode().name();
    }
}
