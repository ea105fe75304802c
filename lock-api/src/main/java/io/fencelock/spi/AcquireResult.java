package io.fencelock.spi;

import java.time.Duration;
import java.time.Instant;

/**
 * The answer to one acquire attempt.
 *
 * @param acquired        whether the lock was granted to the attempt's lease
 * @param token           the fencing token of the grant (0 when not acquired, unless {@link #queuedGrant()})
 * @param expiresAt       the server-side expiry of the grant (null when not acquired, unless
 *                        {@link #queuedGrant()}), for display: it may be an estimate within one round trip
 *                        (the engine's validity deadline never depends on it)
 * @param holderRemaining when not acquired: how long the current holder's lease has left on the
 *                        backend's clock, if known (null otherwise); waiters never sleep past it
 * @param queuedAs        when not acquired, on a backend with {@link io.fencelock.Capability#GRANT_ON_RELEASE}:
 *                        the lease id under which the caller's client waits in the name's queue for a grant by
 *                        a release (this attempt's lease id when this refusal queued it, else the one of the
 *                        earlier attempt that did), or null when it is not queued
 */
public record AcquireResult(
        boolean acquired, long token, Instant expiresAt, Duration holderRemaining, String queuedAs) {

    /** An answer without a queue (every backend without {@link io.fencelock.Capability#GRANT_ON_RELEASE}). */
    public AcquireResult(boolean acquired, long token, Instant expiresAt, Duration holderRemaining) {
        this(acquired, token, expiresAt, holderRemaining, null);
    }

    public static AcquireResult granted(long token, Instant expiresAt) {
        requirePositive(token);
        return new AcquireResult(true, token, expiresAt, null, null);
    }

    public static AcquireResult held(Duration holderRemaining) {
        return new AcquireResult(false, 0, null, holderRemaining, null);
    }

    /** Refused; the caller's client waits in the name's queue under {@code queuedAs} for a release to grant it. */
    public static AcquireResult queued(Duration holderRemaining, String queuedAs) {
        return new AcquireResult(false, 0, null, holderRemaining, requireLease(queuedAs));
    }

    /**
     * Refused for this attempt's lease: a release already granted the name to {@code queuedAs}, the lease
     * under which the caller's client was queued, with {@code token} (the client may not have heard yet).
     */
    public static AcquireResult queuedGrant(String queuedAs, long token, Instant expiresAt) {
        requirePositive(token);
        return new AcquireResult(false, token, expiresAt, null, requireLease(queuedAs));
    }

    /** Whether the name is held by the caller's queued lease ({@link #queuedAs}), granted by a release. */
    public boolean queuedGrant() {
        return !acquired && token > 0 && queuedAs != null;
    }

    private static void requirePositive(long token) {
        if (token <= 0) {
            throw new IllegalArgumentException("fencing token must be positive, got " + token);
        }
    }

    private static String requireLease(String leaseId) {
        if (leaseId == null) {
            throw new IllegalArgumentException("a queued lease id must not be null");
        }
        return leaseId;
    }
}
