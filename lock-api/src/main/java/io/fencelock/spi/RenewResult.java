package io.fencelock.spi;

import java.time.Instant;

/**
 * The answer for one lease of a batched renewal.
 *
 * @param renewed   whether the lease still held the lock and was extended
 * @param token     the token after the renewal (may have risen with a token period)
 * @param expiresAt the new server-side expiry
 */
public record RenewResult(boolean renewed, long token, Instant expiresAt) {
    private static final RenewResult REJECTED = new RenewResult(false, 0, null);

    public static RenewResult renewed(long token, Instant expiresAt) {
        return new RenewResult(true, token, expiresAt);
    }

    public static RenewResult rejected() {
        return REJECTED;
    }
}
