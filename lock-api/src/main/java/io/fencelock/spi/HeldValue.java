package io.fencelock.spi;

import io.fencelock.LockMetadata;
import java.time.Instant;

/**
 * A holder as one string, for backends that keep a held lock as one value that lives and dies with
 * the grant (a Redis string key, an etcd key on a lease): {@code leaseId LF grantMillis LF metadata},
 * where {@code grantMillis} is the grant's time in epoch milliseconds and {@code metadata} is
 * {@link MetadataCodec#encode}'s JSON, or empty for {@link LockMetadata#NONE}. Metadata never holds a
 * raw line feed (the codec escapes control characters), and a lease id may not hold one
 * ({@link #requireLeaseId}), so the lease id is exactly the text before the first line feed and an
 * owner check is a prefix test: {@code leaseId LF}.
 *
 * @param leaseId   the holding lease id
 * @param heldSince the grant's time, or {@code null} when the value has none (written without it)
 * @param metadata  the holder's metadata ({@link LockMetadata#NONE} when none)
 */
public record HeldValue(String leaseId, Instant heldSince, LockMetadata metadata) {
    /** Between the parts. */
    public static final char SEPARATOR = '\n';

    /** The value for a grant of {@code leaseId} at {@code grantMillis} with {@code metadata}. */
    public static String encode(String leaseId, long grantMillis, LockMetadata metadata) {
        return leaseId + SEPARATOR + grantMillis + SEPARATOR + json(metadata);
    }

    /** The metadata part: the codec's JSON, or empty for no metadata (the common case costs no bytes). */
    public static String json(LockMetadata metadata) {
        return metadata.isEmpty() ? "" : MetadataCodec.encode(metadata);
    }

    /**
     * Reads {@link #encode}'s value. A value without a line feed (written before values carried
     * metadata) is a lease id alone; an unreadable time or metadata part reads as absent.
     */
    public static HeldValue decode(String value) {
        int lease = value.indexOf(SEPARATOR);
        if (lease < 0) {
            return new HeldValue(value, null, LockMetadata.NONE);
        }
        int time = value.indexOf(SEPARATOR, lease + 1);
        String millis = time < 0 ? value.substring(lease + 1) : value.substring(lease + 1, time);
        Instant heldSince;
        try {
            heldSince = Instant.ofEpochMilli(Long.parseLong(millis));
        } catch (NumberFormatException unreadable) {
            heldSince = null;
        }
        return new HeldValue(
                value.substring(0, lease),
                heldSince,
                time < 0 ? LockMetadata.NONE : MetadataCodec.decode(value.substring(time + 1)));
    }

    /** Whether {@code value} is a grant of {@code leaseId}, without reading the rest. */
    public static boolean heldBy(String value, String leaseId) {
        return value.length() > leaseId.length()
                && value.charAt(leaseId.length()) == SEPARATOR
                && value.startsWith(leaseId);
    }

    /**
     * {@code leaseId}, checked before any I/O: not null and without a line feed, which would make the
     * owner check ambiguous. The engine's lease ids are random UUIDs.
     */
    public static String requireLeaseId(String leaseId) {
        if (leaseId == null) {
            throw new IllegalArgumentException("lease id is null");
        }
        if (leaseId.indexOf(SEPARATOR) >= 0) {
            throw new IllegalArgumentException("lease id '" + leaseId.replace("\n", "\\n")
                    + "' contains a line feed; a lease id stored with its metadata must not");
        }
        return leaseId;
    }
}
