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

    /** The TTL this lease was taken with. */
    Duration ttl();

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
