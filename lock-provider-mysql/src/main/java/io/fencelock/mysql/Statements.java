package io.fencelock.mysql;

import io.fencelock.LockMetadata;
import io.fencelock.jdbc.LockInfoRows;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The single-statement SQL of one lock table's mutex (acquire, release), decided by the
 * server's {@code UTC_TIMESTAMP(6)}, and the acquire's parameters in the order its SQL takes them.
 * Identifiers are the table's validated, quoted names; every value is a bind parameter.
 */
final class Statements {
    static final String NOW = "UTC_TIMESTAMP(6)";
    /** The top bit of LAST_INSERT_ID (an unsigned BIGINT) marks a refusal; tokens stay below it. */
    private static final String REFUSED = "9223372036854775808";
    /** With REFUSED, bit 62 marks a name of another kind: bits 32-33 its kind (1 semaphore, 2 read-write), 0-31 its limit. */
    static final long KIND_REFUSED_BIT = 1L << 62;

    private static final String KIND_REFUSED = Long.toString(KIND_REFUSED_BIT);

    /** See {@link #bindAcquire}. */
    final String acquire;
    /** {@link #acquire}'s update alone, for a name whose row exists: see {@link #bindAcquireExisting}. */
    final String acquireExisting;
    /** name, lease id. */
    final String release;
    /** See {@link #bindHandOver}. */
    final String handOver;

    Statements(LockTable table) {
        String t = table.qualifiedTable;
        // A lock is free when released (no holder) or expired; "already ours" makes a retried acquire
        // of the same lease id idempotent, and makes "lease_id = ours" below mean "granted".
        // Shared grants (see SharedTable) keep a summary in the row: a live semaphore or read-write
        // lock refuses the mutex outright (its kind and limit coded into the answer, for the
        // IllegalArgumentException), and a live fair-mutex holder holds the name like a mutex holder.
        String sharedLives = "COALESCE(share_until > " + NOW + ", FALSE)";
        String otherKind = "(" + sharedLives + " AND COALESCE(share_kind, '') <> 'EXCLUSIVE')";
        String fairHeld = "COALESCE(share_held_until > " + NOW + ", FALSE)";
        String free = "((lease_id IS NULL OR expires_at <= " + NOW + " OR lease_id = ?) AND NOT " + otherKind
                + " AND NOT " + fairHeld + ")";
        String refusal = "IF(" + otherKind + ", " + REFUSED + " + " + KIND_REFUSED + " + 4294967296 * IF(share_kind"
                + " = 'PERMITS', 1, 2) + COALESCE(share_limit, 0), " + REFUSED + " + COALESCE(GREATEST(0,"
                + " TIMESTAMPDIFF(MICROSECOND, " + NOW + ", IF(lease_id IS NOT NULL AND expires_at > " + NOW
                + ", expires_at, share_held_until))), 0))";
        // ON DUPLICATE KEY UPDATE assigns left to right, each expression seeing the columns assigned
        // before it: the token and its time are decided while lease_id and expires_at are still the
        // old holder's; lease_id is decided last of the three; expires_at, the grant's metadata and
        // its time then test the new lease_id, so a refusal leaves the holder's row as it was.
        // LAST_INSERT_ID(x) carries the outcome back in the OK packet, so one statement is the whole
        // round trip: the new token (below 2^63), or REFUSED plus the holder's remaining microseconds.
        // A new row's token comes from the floor, read with a shared lock so a purge in progress
        // (which holds the floor exclusively until it has deleted) is waited for, never half seen.
        StringBuilder granted = new StringBuilder();
        for (String column : new String[] {"lock_owner", "lock_type", "lock_data"}) {
            granted.append(", ")
                    .append(column)
                    .append(" = IF(lease_id = ?, ?, ")
                    .append(column)
                    .append(')');
        }
        String update = " token = IF(" + free + ", LAST_INSERT_ID(token + 1), token + 0 * LAST_INSERT_ID(" + refusal
                + ")),"
                + " token_issued_at = IF(" + free + ", " + NOW + ", token_issued_at),"
                + " lease_id = IF(" + free + ", ?, lease_id),"
                + " expires_at = IF(lease_id = ?, " + NOW + " + INTERVAL ? MICROSECOND, expires_at)"
                + granted
                + ", granted_at = IF(lease_id = ?, " + NOW + ", granted_at)";
        this.acquire = "INSERT INTO " + t
                + " (name, lease_id, token, token_issued_at, expires_at, lock_owner, lock_type, lock_data, granted_at)"
                + " VALUES (?, ?, LAST_INSERT_ID((SELECT f.token_floor FROM " + table.qualifiedFloor
                + " f WHERE f.id = 1 LOCK IN SHARE MODE) + 1), " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND,"
                + " ?, ?, ?, " + NOW + ")"
                + " ON DUPLICATE KEY UPDATE" + update;
        // The same decision where the row is known to exist: no floor to read (a row carries its token),
        // and no insert attempt to fail on the key first. It locks the row only, so it never waits for a
        // purge's floor; a purge that deleted the row first leaves it nothing to match, and the caller then
        // takes the INSERT above, which reads the floor that purge raised before deleting.
        this.acquireExisting = "UPDATE " + t + " SET" + update + " WHERE name = ?";
        // A hand-over: the holder's grant becomes the new lease's in one UPDATE of the row, which holds the
        // row lock from its read to its commit, so the name is never free. The token is the row's counter
        // plus one, as a takeover's, and LAST_INSERT_ID carries it back in the OK packet; an UPDATE that
        // matches nothing (the holder no longer holds as the acquire would see it) changes nothing.
        this.handOver = "UPDATE " + t + " SET token = LAST_INSERT_ID(token + 1), token_issued_at = " + NOW
                + ", lease_id = ?, expires_at = " + NOW + " + INTERVAL ? MICROSECOND, lock_owner = ?, lock_type = ?,"
                + " lock_data = ?, granted_at = " + NOW
                + " WHERE name = ? AND lease_id = ? AND expires_at > " + NOW + " AND NOT " + otherKind + " AND NOT "
                + fairHeld;
        // the row stays: it carries the name's token history, and none of the holder's metadata
        this.release = "UPDATE " + t + " SET lease_id = NULL, expires_at = " + NOW
                + ", lock_owner = NULL, lock_type = NULL, lock_data = NULL, granted_at = NULL"
                + " WHERE name = ? AND lease_id = ? AND expires_at > " + NOW;
    }

    /** Binds {@link #handOver}'s parameters: the new lease's values, then the row and its holder. */
    static void bindHandOver(
            PreparedStatement ps,
            String name,
            String fromLeaseId,
            String leaseId,
            long ttlMicros,
            LockMetadata metadata)
            throws SQLException {
        ps.setString(1, leaseId);
        ps.setLong(2, ttlMicros);
        int i = LockInfoRows.bindMetadata(ps, 3, metadata);
        ps.setString(i++, name);
        ps.setString(i, fromLeaseId);
    }

    /** Binds {@link #acquire}'s parameters: the new row's values, then the update's, in the SQL's order. */
    static void bindAcquire(PreparedStatement ps, String name, String leaseId, long ttlMicros, LockMetadata metadata)
            throws SQLException {
        int i = 1;
        ps.setString(i++, name);
        ps.setString(i++, leaseId);
        ps.setLong(i++, ttlMicros);
        String[] values = LockInfoRows.metadataValues(metadata);
        for (String value : values) {
            LockInfoRows.bindText(ps, i++, value);
        }
        bindUpdate(ps, i, leaseId, ttlMicros, values);
    }

    /** Binds {@link #acquireExisting}'s parameters: the update's, then the row's name. */
    static void bindAcquireExisting(
            PreparedStatement ps, String name, String leaseId, long ttlMicros, LockMetadata metadata)
            throws SQLException {
        int i = bindUpdate(ps, 1, leaseId, ttlMicros, LockInfoRows.metadataValues(metadata));
        ps.setString(i, name);
    }

    /** The update's parameters from {@code i} on, in its SQL's order; returns the next index. */
    private static int bindUpdate(PreparedStatement ps, int i, String leaseId, long ttlMicros, String[] values)
            throws SQLException {
        for (int free = 0; free < 3; free++) {
            ps.setString(i++, leaseId);
        }
        ps.setString(i++, leaseId);
        ps.setString(i++, leaseId);
        ps.setLong(i++, ttlMicros);
        for (String value : values) { // owner, type, data: each after the lease id its IF tests
            ps.setString(i++, leaseId);
            LockInfoRows.bindText(ps, i++, value);
        }
        ps.setString(i++, leaseId);
        return i;
    }
}
