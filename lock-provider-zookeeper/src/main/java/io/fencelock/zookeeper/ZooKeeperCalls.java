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
        Pending<Stat> f = new Pending<>(s);
        s.zk.create(
                path,
                data,
                ZooDefs.Ids.OPEN_ACL_UNSAFE,
                mode,
                (rc, p, ctx, name, stat) -> f.answer(rc, stat, stat),
                null);
        return f;
    }

    static CompletableFuture<Reply<byte[]>> getData(Session s, String path) {
        Pending<byte[]> f = new Pending<>(s);
        s.zk.getData(path, false, (rc, p, ctx, data, stat) -> f.answer(rc, data, stat), null);
        return f;
    }

    /** A read of whether {@code path} exists: the cheapest request, a heartbeat the backend can see answered. */
    static CompletableFuture<Reply<Stat>> exists(Session s, String path) {
        Pending<Stat> f = new Pending<>(s);
        s.zk.exists(path, false, (rc, p, ctx, stat) -> f.answer(rc, stat, stat), null);
        return f;
    }

    static CompletableFuture<Reply<List<String>>> getChildren(Session s, String path) {
        Pending<List<String>> f = new Pending<>(s);
        s.zk.getChildren(path, false, (rc, p, ctx, names) -> f.answer(rc, names, null), null);
        return f;
    }

    static CompletableFuture<Reply<List<OpResult>>> multi(Session s, List<Op> ops) {
        Pending<List<OpResult>> f = new Pending<>(s);
        s.zk.multi(ops, (rc, p, ctx, results) -> f.answer(rc, results, null), null);
        return f;
    }

    /** Sends a {@code sync}; the reads sent after it on the same session are served only once it is done. */
    static void sync(Session s, String path) {
        Pending<Void> f = new Pending<>(s);
        s.zk.sync(path, (rc, p, ctx) -> f.answer(rc, null, null), null);
    }

    /**
     * A call in flight on one session. An answer from a server tells the session's {@link LeaderView}
     * that a member touched the session between the send and the answer, before the caller sees it.
     */
    private static final class Pending<T> extends CompletableFuture<Reply<T>> {
        private final Session session;
        private final long sent = System.nanoTime();

        Pending(Session session) {
            this.session = session;
            LeaderView view = session.view();
            if (view != null) {
                view.sending(sent);
            }
        }

        void answer(int rc, T value, Stat stat) {
            Code code = Code.get(rc);
            LeaderView view = session.view();
            if (view != null && touched(code)) {
                view.heard(sent, System.nanoTime());
            }
            complete(new Reply<>(code, value, stat));
        }
    }

    /**
     * Answers a member gives only to a request it took in on this session (so touched it): the request's own
     * outcome, not a lost connection, an expired or moved session, or a throttled request.
     */
    static boolean touched(Code code) {
        return switch (code) {
            case OK, NONODE, NODEEXISTS, BADVERSION, NOTEMPTY, NOCHILDRENFOREPHEMERALS, RUNTIMEINCONSISTENCY -> true;
            default -> false;
        };
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
