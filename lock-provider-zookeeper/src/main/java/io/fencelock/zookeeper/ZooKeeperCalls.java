package io.fencelock.zookeeper;

import io.fencelock.LockBackendException;
import io.fencelock.spi.Replies;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

/**
 * The client's asynchronous calls as futures of a {@link Reply}, waiting for them within the request
 * timeout, and ZooKeeper's result codes as {@link LockBackendException}s (retryable or not; the
 * messages name the call, the subject and the servers, never a secret: there is none).
 */
final class ZooKeeperCalls {
    private final Duration timeout;
    private final String where;

    ZooKeeperCalls(Duration timeout, String where) {
        this.timeout = timeout;
        this.where = where;
    }

    /** A reply: the result code, the value, and the znode's stat where the call returns one. */
    record Reply<T>(Code code, T value, Stat stat) {}

    static CompletableFuture<Reply<Stat>> create(Session s, String path, byte[] data, CreateMode mode) {
        CompletableFuture<Reply<Stat>> f = new CompletableFuture<>();
        s.zk.create(
                path,
                data,
                ZooDefs.Ids.OPEN_ACL_UNSAFE,
                mode,
                (rc, p, ctx, name, stat) -> f.complete(new Reply<>(Code.get(rc), stat, stat)),
                null);
        return f;
    }

    static CompletableFuture<Reply<byte[]>> getData(Session s, String path) {
        CompletableFuture<Reply<byte[]>> f = new CompletableFuture<>();
        s.zk.getData(path, false, (rc, p, ctx, data, stat) -> f.complete(new Reply<>(Code.get(rc), data, stat)), null);
        return f;
    }

    static CompletableFuture<Reply<List<String>>> getChildren(Session s, String path) {
        CompletableFuture<Reply<List<String>>> f = new CompletableFuture<>();
        s.zk.getChildren(path, false, (rc, p, ctx, names) -> f.complete(new Reply<>(Code.get(rc), names, null)), null);
        return f;
    }

    static CompletableFuture<Reply<Void>> delete(Session s, String path, int version) {
        CompletableFuture<Reply<Void>> f = new CompletableFuture<>();
        s.zk.delete(path, version, (rc, p, ctx) -> f.complete(new Reply<>(Code.get(rc), null, null)), null);
        return f;
    }

    static CompletableFuture<Reply<List<OpResult>>> multi(Session s, List<Op> ops) {
        CompletableFuture<Reply<List<OpResult>>> f = new CompletableFuture<>();
        s.zk.multi(ops, (rc, p, ctx, results) -> f.complete(new Reply<>(Code.get(rc), results, null)), null);
        return f;
    }

    /** Sends a {@code sync}; the reads sent after it on the same session are served only once it is done. */
    static void sync(Session s, String path) {
        s.zk.sync(path, (rc, p, ctx) -> {}, null);
    }

    <T> T await(String operation, String subject, CompletableFuture<T> call) {
        return await(operation, subject, call, System.nanoTime());
    }

    /**
     * Waits for one call until the request timeout after {@code since}; a timeout is a retryable
     * failure with an unknown outcome. An interrupt does not abandon a request already sent (the
     * server may still apply it): the wait goes on, and the interrupt is set again afterwards.
     * {@code operation + subject} names the call in a failure, built only then.
     */
    <T> T await(String operation, String subject, CompletableFuture<T> call, long since) {
        try {
            return Replies.await(call, Math.max(1, since + timeout.toNanos() - System.nanoTime()));
        } catch (TimeoutException e) {
            throw new LockBackendException(what(operation, subject) + " timed out after " + timeout, e, true);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockBackendException l) {
                throw l;
            }
            throw new LockBackendException(what(operation, subject) + " failed: " + e.getCause(), e.getCause(), true);
        } catch (CancellationException e) {
            throw new LockBackendException(what(operation, subject) + " cancelled", e, true);
        }
    }

    /** A call that was answered {@code code}: retryable when the same call may succeed later. */
    LockBackendException failure(String operation, String subject, Code code) {
        boolean retryable = switch (code) {
            case CONNECTIONLOSS,
                    OPERATIONTIMEOUT,
                    SESSIONEXPIRED,
                    SESSIONMOVED,
                    NOTREADONLY,
                    RECONFIGINPROGRESS,
                    REQUESTTIMEOUT,
                    THROTTLEDOP,
                    NEWCONFIGNOQUORUM,
                    QUOTAEXCEEDED -> true;
            default -> false;
        };
        return new LockBackendException(what(operation, subject) + " failed (" + code + ")", retryable);
    }

    /** Codes after which a write may or may not have been applied. */
    static boolean outcomeUnknown(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT || code == Code.REQUESTTIMEOUT;
    }

    Duration timeout() {
        return timeout;
    }

    String where() {
        return where;
    }

    private String what(String operation, String subject) {
        return operation + subject + (operation.endsWith("'") ? "'" : "") + " on " + where;
    }
}
