package io.fencelock;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What the backend knows about one lock name, read in one round trip.
 *
 * @param name       the lock name
 * @param held       whether a lease holds it now, judged by the backend's clock
 * @param leaseId    the holding lease's id, or {@code null} when free
 * @param token      the last fencing token issued for this name ({@code 0} when none is known)
 * @param expiresAt  the holder's server-side expiry, or {@code null} when free
 * @param serverTime the backend's clock when it answered
 */
public record LockInfo(String name, boolean held, String leaseId, long token, Instant expiresAt, Instant serverTime) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
    }

    /** The holding lease's id, when the lock is held. */
    public Optional<String> holder() {
        return held ? Optional.ofNullable(leaseId) : Optional.empty();
    }
}
