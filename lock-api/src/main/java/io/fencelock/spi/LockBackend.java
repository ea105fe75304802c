package io.fencelock.spi;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A backend's atomic primitive, and nothing more: each method is one round trip and atomic on
 * the server. Waiting, renewal scheduling, lease validity and lost signals live in the engine
 * ({@code io.fencelock.LockClient}); a provider never sleeps, retries or schedules.
 *
 * <p>Arguments arrive validated (names, lease ids, durations). Failures to reach the backend are
 * thrown as {@link LockBackendException}. Implementations are thread-safe.
 */
public interface LockBackend extends AutoCloseable {

    /**
     * Takes {@code name} for {@code leaseId} if it is free or its holder has expired on the
     * backend's clock, assigning a fencing token greater than every token issued for this name
     * before. Otherwise changes nothing and reports the holder's remaining time if it can.
     * A call with the lease id that already holds the lock may be granted again with a new token
     * (an idempotent retry) or refused; the engine never sends one (every attempt has a fresh id).
     */
    AcquireResult tryAcquire(String name, String leaseId, Duration ttl);

    /**
     * As {@link #tryAcquire(String, String, Duration)}, storing {@code metadata} with the grant in the
     * same round trip (only with {@link Capability#METADATA}; the default ignores it). A renewal keeps
     * the grant's metadata and its grant time; a release clears them. The engine always calls this
     * method, with metadata already validated and the owner filled in.
     */
    default AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        return tryAcquire(name, leaseId, ttl);
    }

    /**
     * Takes a shared grant of {@code name} for {@code leaseId} in one round trip (only with
     * {@link Capability#SHARED_LOCKS}): {@code request.permits()} of a semaphore of
     * {@code request.limit()}, a reader, a writer, or (with {@link Capability#FAIR_ORDER}) a fair
     * mutex. Granted only when the name's live grants (not expired on the backend's clock) leave room:
     * permits held plus the request at most the limit; a reader only without a live writer and
     * without a standing writer's intent; a writer or a mutex only with no live grant; a fair request
     * only when no live queue place of another waiter was taken before its own. The token is greater
     * than every token issued for this name before, as for the mutex; metadata and the grant time are
     * stored with the grant (where {@link Capability#METADATA} is declared).
     *
     * <p>A refused request that {@linkplain SharedRequest#waits() waits} records what the contract
     * asks under {@code request.waiterId()}, expiring {@code ttl} after this call: a writer's intent
     * (new readers are refused while it stands), and, when fair, its queue place (kept from its first
     * attempt). A grant removes both. A name whose live grants or standing intents are of another
     * kind, or a semaphore of another limit, refuses with an {@link IllegalArgumentException} naming
     * both, and nothing changes.
     *
     * @throws UnsupportedOperationException on a backend without {@link Capability#SHARED_LOCKS}
     */
    default AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        throw new UnsupportedOperationException("this backend does not declare SHARED_LOCKS");
    }

    /**
     * Turns {@code leaseId}'s live write grant of {@code name} into a read grant in one atomic step
     * (only with {@link Capability#SHARED_LOCKS}), extending it to {@code ttl} from now and keeping its
     * token: the name is never free in between, so no other writer can slip in. Rejected, changing
     * nothing, when the lease no longer holds the grant; a lease that already reads is renewed (a
     * downgrade retried after a lost answer).
     *
     * @throws UnsupportedOperationException on a backend without {@link Capability#SHARED_LOCKS}
     */
    default RenewResult downgrade(String name, String leaseId, Duration ttl) {
        throw new UnsupportedOperationException("this backend does not declare SHARED_LOCKS");
    }

    /**
     * Extends every lease that still holds its lock (owner matches and not expired on the backend's
     * clock) to {@code ttl} from now; the rest are rejected and left untouched. One round trip for
     * the whole list. Results come in the order of the requests. A request whose
     * {@linkplain RenewRequest#grant() grant} names the other call than the one that granted the lease
     * may be rejected; {@link GrantKind#EITHER} is always looked up in both places.
     */
    List<RenewResult> renew(List<RenewRequest> requests);

    /**
     * Hands the mutex grant of {@code fromLeaseId} on {@code name} to {@code leaseId} in one atomic step
     * (only with {@link Capability#HAND_OVER}): if {@code fromLeaseId} holds the name (owner matches, not
     * expired on the backend's clock), its grant ends and {@code leaseId} is granted as by
     * {@link #tryAcquire(String, String, Duration, LockMetadata)}: a token above every token the name had,
     * {@code ttl} from the backend's now, {@code metadata}; the name is never free in between, so nobody
     * else can take it, and waiters of other clients are not signalled (it was not released). Otherwise
     * nothing changes and the answer is a refusal. The engine calls it when a holder releases a name that a
     * waiter of its own client waits for.
     *
     * @throws UnsupportedOperationException on a backend without {@link Capability#HAND_OVER}
     */
    default AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        throw new UnsupportedOperationException("this backend does not declare HAND_OVER");
    }

    /**
     * Frees {@code name} if {@code leaseId} holds it, keeping the token history, and signals waiters
     * where the backend can. Returns whether this call freed it; never touches another lease's hold.
     * On a shared name, frees that one grant (the others keep holding); given a waiter id of
     * {@link SharedRequest#waiterId()}, withdraws its writer's intent and queue place (and returns
     * false: no grant was freed).
     */
    boolean release(String name, String leaseId);

    /**
     * {@link #release(String, String)} of a lease whose grant the caller knows ({@link GrantKind#EITHER}
     * when it does not, or for a waiter's id): a backend that keeps the mutex's holder and shared grants
     * apart frees it where it lives, without first trying the other place. A kind that is not the
     * lease's may free nothing. The default ignores the kind.
     */
    default boolean release(String name, String leaseId, GrantKind grant) {
        return release(name, leaseId);
    }

    /** The backend's record of one name, if it has one. */
    Optional<LockInfo> inspect(String name);

    /** The locks held now whose names start with {@code prefix} (empty for all), sorted by name. */
    List<LockInfo> list(String prefix);

    /** What this backend guarantees; see {@link Capability}. */
    Set<Capability> capabilities();

    /**
     * The backend's release signals (only when {@link Capability#WAKE_ON_RELEASE} is declared): a
     * feed the engine drives through its one wake-up registry ({@link WakeUpRegistry}), which
     * keeps the subscribers, isolates their callbacks, wakes everyone after a break and reconnects
     * with backoff. Called once per client; the backend returns the same feed each time or a new one.
     */
    default Optional<ReleaseFeed> releaseFeed() {
        return Optional.empty();
    }

    /**
     * Subscribes to releases of {@code name} (only when {@link Capability#WAKE_ON_RELEASE} is
     * declared and {@link #releaseFeed()} is empty). {@code onRelease} is called from a backend
     * thread and must return quickly. A subscription may miss signals: the engine polls as well.
     *
     * @deprecated a provider keeps its own registry, callback isolation and reconnect policy here;
     * implement {@link #releaseFeed()} instead: {@link ReleaseFeed#open} starts listening,
     * {@link ReleaseFeed#watch}/{@link ReleaseFeed#unwatch} follow the names with waiters (for a
     * per-name watch), and the feed passes each released name to its sink. The engine still calls
     * this method for a backend without a feed.
     */
    @Deprecated
    default WakeUpSubscription subscribe(String name, Runnable onRelease) {
        return WakeUpSubscription.NONE;
    }

    /**
     * The longest TTL this backend honours (default {@link io.fencelock.LockOptions#MAX_TTL}). The
     * engine refuses a longer one with an {@link IllegalArgumentException} before any request. A
     * backend whose limit is the server's setting may ask the server once and remember the answer.
     */
    default Duration maxTtl() {
        return io.fencelock.LockOptions.MAX_TTL;
    }

    /**
     * Deletes records of locks that have been free for at least {@code freeFor}, without ever
     * letting a later token for the same name be lower (only with {@link Capability#PURGE_FREE}).
     * Returns how many records were deleted.
     */
    default int purgeFree(Duration freeFor) {
        throw new UnsupportedOperationException("this backend does not purge lock records");
    }

    /** Closes connections and threads of this backend. Locks held stay held until they expire. */
    @Override
    void close();
}
