package io.fencelock.spi;

import java.time.Duration;
import java.time.Instant;

/**
 * The answer to one acquire attempt.
 *
 * @param acquired        whether the lock was granted
 * @param token           the fencing token of the grant (0 when not acquired)
 * @param expiresAt       the server-side expiry of the grant (null when not acquired), for display:
 *                        it may be an estimate within one round trip (the engine's validity
 *                        deadline never depends on it)
 * @param holderRemaining when not acquired: how long the current holder's lease has left on the
 *                        backend's clock, if known (null otherwise); waiters never sleep past it
 */
public record AcquireResult(boolean acquired, long token, Instant expiresAt, Duration holderRemaining) {

    public static AcquireResult granted(long token, Instant expiresAt) {
        if (token <= 0) {
            throw new IllegalArgumentException("fencing token must be positive, got " + token);
        }
        return new AcquireResult(true, token, expiresAt, null);
    }

    public static AcquireResult held(Duration holderRemaining) {
        return new AcquireResult(false, 0, null, holderRemaining);
    }
}
