package io.fencelock;

import java.time.Instant;
import java.util.Objects;

/**
 * One live grant of a name, as the backend shows it: a mutex has at most one, a semaphore or a
 * read-write lock may have several.
 *
 * @param leaseId   the grant's lease id
 * @param mode      how it holds the name
 * @param permits   the permits it holds (1 unless {@link LockMode#PERMITS})
 * @param token     its fencing token
 * @param expiresAt its server-side expiry
 * @param metadata  its owner, type and data ({@link LockMetadata#NONE} where not kept)
 * @param heldSince when it was granted, on the backend's clock, or {@code null} when unknown
 */
public record LockHolder(
        String leaseId,
        LockMode mode,
        int permits,
        long token,
        Instant expiresAt,
        LockMetadata metadata,
        Instant heldSince) {
    public LockHolder {
        Objects.requireNonNull(leaseId, "leaseId");
        Objects.requireNonNull(mode, "mode");
        metadata = metadata == null ? LockMetadata.NONE : metadata;
    }
}
