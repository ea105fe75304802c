package io.fencelock;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;

/**
 * One acquisition of a lock. Pass {@link #fencingToken()} to whatever the lock protects, and let
 * that resource reject tokens lower than the highest it has seen.
 *
 * <p>A lease is valid until its <em>local validity deadline</em>: the time the last successful
 * acquire or renew was <em>sent</em>, plus the TTL shortened by the clock drift allowance and the
 * safety margin. The backend's own expiry is never earlier, so while {@link #isValid()} is true no
 * other lease can hold the lock. Ownership is not tied to a thread: any thread may renew or
 * release it. Closing a lease releases it.
 */
public interface Lease extends AutoCloseable {

    /** The lock name. */
    String name();

    /** A fresh random id for this acquisition (never a host or thread name). */
    String leaseId();

    /** The fencing token of the latest grant; it never decreases within a lease. */
    long fencingToken();

    /** The expiry the backend reported for the latest grant, on the backend's clock (for display). */
    Instant serverExpiry();

    /** The lease's TTL: the one it was taken with, or the last one given to {@link #renew(Duration)}. */
    Duration ttl();

    /** The owner, type and data stored with the grant (the owner filled in with the client's default). */
    LockMetadata metadata();

    /**
     * How this lease holds its name: {@link LockMode#EXCLUSIVE} for the mutex, or the mode of a
     * semaphore's or read-write lock's grant ({@link LockMode#READ} after a downgrade).
     */
    default LockMode mode() {
        return LockMode.EXCLUSIVE;
    }

    /** The permits this lease holds (1 unless it is a semaphore's grant of several). */
    default int permits() {
        return 1;
    }

    /** Whether the lease is held and its local validity deadline has not passed. */
    boolean isValid();

    /** Time left until the local validity deadline ({@link Duration#ZERO} once invalid). */
    Duration remainingValidity();

    LeaseState state();

    /**
     * Renews now, in one round trip. Returns {@code true} when renewed; {@code false} when the lease
     * is no longer held (it is then lost, or was released).
     *
     * @throws LockBackendException when the backend cannot be reached; the lease stays held until
     *                              its deadline and the watchdog keeps trying
     */
    boolean renew();

    /**
     * Renews now to {@code ttl}, which becomes the lease's TTL (the watchdog renews with it from
     * now on). A shorter TTL shortens the lease: the local validity deadline moves to {@code ttl}
     * after this call was sent, before anything is sent (so a lost answer never leaves the deadline
     * later than the backend's expiry), and the backend frees the lock when the new TTL ends unless
     * the lease is renewed again. A longer TTL extends exclusivity once the backend has answered.
     *
     * @throws IllegalArgumentException when {@code ttl} is not usable with the client's options or
     *                                  longer than the backend allows (before any I/O)
     * @throws LockBackendException     as {@link #renew()}; after a lost answer to a shortening the
     *                                  deadline stays capped at the shorter TTL for the rest of the lease
     */
    boolean renew(Duration ttl);

    /**
     * Keeps the lock on the backend for {@code delay} more and then lets it expire there, with no
     * further request: one renewal to a TTL of {@code delay}, after which this client no longer holds
     * or renews the lease. For "hold at least until" (a scheduled job that must not run again on
     * another node in the same slot) without a sleeping thread. A delay under 1 ms releases at once.
     *
     * @return {@code true} when the lock now stays held until the delay ends (or was released at
     *         once); {@code false} when the lease was no longer held
     */
    boolean releaseAfter(Duration delay);

    /**
     * Releases the lock if this lease still holds it. Idempotent; returns whether this call freed
     * the lock on the backend. Works on an interrupted thread (a {@code finally} after a cancelled
     * task) and leaves the interrupt set for the caller.
     *
     * @throws LockBackendException when the backend cannot be reached (the lease is no longer
     *                              renewed; when the failure is retryable the client keeps releasing
     *                              it in the background until it would have expired on the backend)
     */
    boolean release();

    /** Completes when the lease is lost, with the reason; never completes for a lease that is released. */
    CompletionStage<LeaseLoss> lost();

    /** Releases the lease, as {@link #release()}; a backend failure is logged, not thrown. */
    @Override
    void close();
}
