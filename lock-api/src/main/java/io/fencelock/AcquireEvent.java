package io.fencelock;

import java.time.Duration;
import java.util.Objects;

/**
 * How one call to acquire a lock ended ({@link LockClient#tryAcquire}, {@link LockClient#acquire},
 * {@link LockRequest}): one event per call, however many attempts it made.
 *
 * @param name    the lock name
 * @param outcome granted, refused (one attempt, held by another lease), timed out (the wait ran
 *                out) or failed (the backend failed or the thread was interrupted)
 * @param waited  how long the call took, from its start until it returned
 * @param ttl     the TTL asked for
 * @param lease   the granted lease, or {@code null} unless granted
 * @param failure what failed, or {@code null} unless failed
 */
public record AcquireEvent(
        String name, Outcome outcome, Duration waited, Duration ttl, Lease lease, Throwable failure) {
    public AcquireEvent {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(waited, "waited");
    }

    /** How an acquire call ended. */
    public enum Outcome {
        /** The lock was granted. */
        GRANTED,
        /** A single attempt found the lock held by another lease. */
        REFUSED,
        /** The wait ran out before the lock was free. */
        TIMED_OUT,
        /** The backend failed (see {@link AcquireEvent#failure()}) or the waiting thread was interrupted. */
        FAILED
    }
}
