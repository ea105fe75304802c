package io.fencelock;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What the backend knows about one lock name, read in one round trip.
 *
 * <p>A shared name (a semaphore or a read-write lock, {@link Capability#SHARED_LOCKS}) may have several
 * live grants: {@link #holders()} lists them all, and the single-holder fields describe the latest
 * live grant (the one with the highest token).
 *
 * @param name       the lock name
 * @param held       whether a lease holds it now, judged by the backend's clock
 * @param leaseId    the holding lease's id (for a shared name, the latest live grant's), or {@code null} when free
 * @param token      the last fencing token issued for this name ({@code 0} when none is known)
 * @param expiresAt  the holder's server-side expiry (the latest live grant's), or {@code null} when free
 * @param serverTime the backend's clock when it answered
 * @param metadata   the holder's owner, type and data ({@link LockMetadata#NONE} when free, or on a
 *                   backend without {@link Capability#METADATA})
 * @param heldSince  when the holding grant was made, on the backend's clock (renewals keep it), or
 *                   {@code null} when free or unknown
 * @param kind       what kind of lock the name is: {@link LockMode#EXCLUSIVE} (the mutex),
 *                   {@link LockMode#PERMITS} (a semaphore) or {@link LockMode#READ} (a read-write lock)
 * @param limit      the semaphore's N, or 0 for other kinds
 * @param holders    every live grant (empty when free); for a mutex record made without it, the
 *                   one holder the other fields describe
 */
public record LockInfo(
        String name,
        boolean held,
        String leaseId,
        long token,
        Instant expiresAt,
        Instant serverTime,
        LockMetadata metadata,
        Instant heldSince,
        LockMode kind,
        int limit,
        List<LockHolder> holders) {
    public LockInfo {
        Objects.requireNonNull(name, "name");
        metadata = metadata == null ? LockMetadata.NONE : metadata;
        kind = kind == null ? LockMode.EXCLUSIVE : kind;
        if (holders == null) {
            holders = held && leaseId != null
                    ? List.of(new LockHolder(leaseId, LockMode.EXCLUSIVE, 1, token, expiresAt, metadata, heldSince))
                    : List.of();
        } else {
            holders = List.copyOf(holders);
        }
    }

    /** A mutex's record (its one holder, if held, is the one the fields describe). */
    public LockInfo(
            String name,
            boolean held,
            String leaseId,
            long token,
            Instant expiresAt,
            Instant serverTime,
            LockMetadata metadata,
            Instant heldSince) {
        this(name, held, leaseId, token, expiresAt, serverTime, metadata, heldSince, LockMode.EXCLUSIVE, 0, null);
    }

    /** A record without metadata (a backend without {@link Capability#METADATA}). */
    public LockInfo(String name, boolean held, String leaseId, long token, Instant expiresAt, Instant serverTime) {
        this(name, held, leaseId, token, expiresAt, serverTime, LockMetadata.NONE, null, LockMode.EXCLUSIVE, 0, null);
    }

    /** The holding lease's id, when the lock is held. */
    public Optional<String> holder() {
        return held ? Optional.ofNullable(leaseId) : Optional.empty();
    }

    /** The permits the live grants hold together (the number of holders, for readers and the mutex). */
    public int permitsHeld() {
        return held ? holders.stream().mapToInt(LockHolder::permits).sum() : 0;
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
