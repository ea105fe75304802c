package io.fencelock.mysql;

import static io.fencelock.mysql.RoundTrip.placeholders;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code purgeFree}: deletes rows free for at least its age, in batches. Each batch is one
 * transaction that first locks the floor (so no acquire can read it meanwhile), then locks the
 * rows that are still free, raises the floor to their highest token and deletes them. An acquire
 * that finds no row reads the floor after that commit, so its token is higher than every deleted one.
 */
final class FloorPurge {
    /** Rows deleted per purge transaction, so that the floor is held only briefly. */
    static final int PURGE_BATCH = 500;

    private static final String NOW = "UTC_TIMESTAMP(6)";

    private final LockTable table;
    private final boolean combined;
    private final long ageMicros;
    /** Free for long enough: the mutex's expiry and the latest of the name's shared grants and waiters (see SharedTable). */
    private final String freeLongEnough =
            "GREATEST(expires_at, COALESCE(share_until, expires_at)) <= " + NOW + " - INTERVAL ? MICROSECOND";
    /** Rows deleted so far, for the message of a failure half-way. */
    int deleted;

    FloorPurge(LockTable table, boolean combined, long ageMicros) {
        this.table = table;
        this.combined = combined;
        this.ageMicros = ageMicros;
    }

    int run(Connection c) throws SQLException {
        String after = "";
        while (true) {
            // candidates from a plain (non-locking) read, so that the floor is not held during a scan
            List<String> candidates = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT name FROM " + table.qualifiedTable
                    + " WHERE name > ? AND " + freeLongEnough + " ORDER BY name LIMIT " + PURGE_BATCH)) {
                ps.setString(1, after);
                ps.setLong(2, ageMicros);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        candidates.add(rs.getString(1));
                    }
                }
            }
            if (candidates.isEmpty()) {
                return deleted;
            }
            deleted += batch(c, candidates);
            if (candidates.size() < PURGE_BATCH) {
                return deleted;
            }
            after = candidates.get(candidates.size() - 1);
        }
    }

    private int batch(Connection c, List<String> candidates) throws SQLException {
        c.setAutoCommit(false);
        try {
            List<String> names = new ArrayList<>();
            long[] highest = {0};
            RoundTrip.run(
                    c,
                    combined,
                    List.of(
                            // the floor first: the same order as every acquire (floor, then row), so no deadlock
                            RoundTrip.Part.query(
                                    "SELECT token_floor FROM " + table.qualifiedFloor + " WHERE id = 1 FOR UPDATE",
                                    (ps, i) -> i,
                                    rs -> {
                                        if (!rs.next()) {
                                            throw new SQLException(
                                                    "the floor row of " + table.qualifiedFloor + " is missing",
                                                    "HY000");
                                        }
                                    }),
                            RoundTrip.Part.query(
                                    "SELECT name, token FROM " + table.qualifiedTable + " WHERE name IN ("
                                            + placeholders(candidates.size(), "?") + ") AND " + freeLongEnough
                                            + " FOR UPDATE",
                                    (ps, i) -> {
                                        for (String n : candidates) {
                                            ps.setString(i++, n);
                                        }
                                        ps.setLong(i++, ageMicros);
                                        return i;
                                    },
                                    rs -> {
                                        while (rs.next()) {
                                            names.add(rs.getString(1));
                                            highest[0] = Math.max(highest[0], rs.getLong(2));
                                        }
                                    })));
            if (!names.isEmpty()) {
                // the rows are locked and free: they can only be deleted now, with the floor above them
                RoundTrip.run(
                        c,
                        combined,
                        List.of(
                                RoundTrip.Part.update(
                                        "UPDATE " + table.qualifiedFloor
                                                + " SET token_floor = GREATEST(token_floor, ?) WHERE id = 1",
                                        (ps, i) -> {
                                            ps.setLong(i++, highest[0]);
                                            return i;
                                        }),
                                RoundTrip.Part.update(
                                        "DELETE FROM " + table.qualifiedTable + " WHERE name IN ("
                                                + placeholders(names.size(), "?") + ")",
                                        bindNames(names)),
                                // their shared rows, all expired (share_until is the latest): after the
                                // name's row, the order every procedure takes them in
                                RoundTrip.Part.update(
                                        "DELETE FROM " + table.shared.qualifiedShare + " WHERE name IN ("
                                                + placeholders(names.size(), "?") + ")",
                                        bindNames(names))));
            }
            c.commit();
            return names.size();
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    private static RoundTrip.Binder bindNames(List<String> names) {
        return (ps, i) -> {
            for (String n : names) {
                ps.setString(i++, n);
            }
            return i;
        };
    }
}
