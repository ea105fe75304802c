package io.fencelock;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What the backend knows about one lock name, read in one round trip.
 *
 * @param name       the lock name
 * @param held       whether a lease holds it now, judged by the backend's clock
 * @param leaseId    the holding lease's id, or {@code null} when free
 * @param token      the last fencing token issued for this name ({@code 0} when none is known)
 * @param expiresAt  the holder's server-side expiry, or {@code null} when free
 * @param serverTime the backend's clock when it answered
 * @param metadata   the holder's owner, type and data ({@link LockMetadata#NONE} when free, or on a
 *                   backend without {@link Capability#METADATA})
 * @param heldSince  when the holding grant was made, on the backend's clock (renewals keep it), or
 *                   {@code null} when free or unknown
 */
public record LockInfo(
        String name,
        boolean held,
        String leaseId,
        long token,
        Instant expiresAt,
        Instant serverTime,
        LockMetadata metadata,
        Instant heldSince) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
        metadata = metadata == null ? LockMetadata.NONE : metadata;
    }

    /** A record without metadata (a backend without {@link Capability#METADATA}). */
    public LockInfo(String name, boolean held, String leaseId, long token, Instant expiresAt, Instant serverTime) {
        this(name, held, leaseId, token, expiresAt, serverTime, LockMetadata.NONE, null);
    }

    /** The holding lease's id, when the lock is held. */
    public Optional<String> holder() {
        return held ? Optional.ofNullable(leaseId) : Optional.empty();
    }

    /** The holder's owner description, when held and known. */
    public Optional<String> owner() {
        return held ? Optional.ofNullable(metadata.owner()) : Optional.empty();
    }

    /** The holder's lock type, when held and given. */
    public Optional<String> type() {
        return held ? Optional.ofNullable(metadata.type()) : Optional.empty();
    }

    /** The holder's user data (empty when free). */
    public Map<String, String> data() {
        return held ? metadata.data() : Map.of();
    }

    /** Selects held locks of lock type {@code type}, for {@link LockClient#list(String, Predicate)}. */
    public static Predicate<LockInfo> ofType(String type) {
        Objects.requireNonNull(type, "type");
        return info -> info.type().filter(type::equals).isPresent();
    }

    /** Selects held locks whose owner description is {@code owner}, for {@link LockClient#list(String, Predicate)}. */
    public static Predicate<LockInfo> ownedBy(String owner) {
        Objects.requireNonNull(owner, "owner");
        return info -> info.owner().filter(owner::equals).isPresent();
    }
}
