package io.fencelock.postgres;

import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.jdbc.LockInfoRows;
import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.SharedRequest;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Binds and reads what the shared functions and the inspect and list queries exchange: a shared
 * acquire's parameters and answer, the refusal of a request of another kind, and lock records with
 * every live holder.
 */
final class SharedRows {
    private static final SqlTime.Reader TIME = SqlTime.TIMESTAMPTZ;

    private SharedRows() {}

    /** Binds the acquire function's parameters (SharedFunctions' order). */
    static void bindAcquire(
            PreparedStatement ps, String name, String leaseId, Duration ttl, SharedRequest r, LockMetadata metadata)
            throws SQLException {
        ps.setString(1, name);
        ps.setString(2, leaseId);
        ps.setLong(3, SqlTime.micros(ttl));
        ps.setString(4, r.mode().name());
        ps.setInt(5, r.permits());
        ps.setInt(6, r.limit());
        ps.setString(7, r.waiterId());
        ps.setBoolean(8, r.waits());
        ps.setBoolean(9, r.fair());
        LockInfoRows.bindMetadata(ps, 10, metadata);
    }

    /** The acquire function's answer: granted, token, expiry, remaining µs, and a refusing kind and limit. */
    static AcquireResult acquired(ResultSet rs, String name, SharedRequest r) throws SQLException {
        rs.next();
        String kind = rs.getString(5);
        if (kind != null) {
            throw refusal(
                    name,
                    kind,
                    rs.getInt(6),
                    describe(r.mode() == LockMode.WRITE ? "READ" : r.mode().name(), r.limit()));
        }
        if (rs.getBoolean(1)) {
            return AcquireResult.granted(rs.getLong(2), TIME.read(rs, 3));
        }
        return AcquireResult.held(remaining(rs, 4));
    }

    /** The holder's remaining time in a column of microseconds, or null. */
    static Duration remaining(ResultSet rs, int column) throws SQLException {
        long micros = rs.getLong(column);
        return rs.wasNull() ? null : Duration.of(micros, ChronoUnit.MICROS);
    }

    /** A request refused because the name's live grants are of another kind or limit: nothing changed. */
    static IllegalArgumentException refusal(String name, String kind, int limit, String requested) {
        return new IllegalArgumentException(
                "lock '" + name + "' is " + describe(kind, limit) + "; a request for " + requested + " is refused");
    }

    static String describe(String kind, int limit) {
        return switch (kind) {
            case "PERMITS" -> "a semaphore of " + limit + " permits";
            case "READ", "WRITE" -> "a read-write lock";
            default -> "a mutex";
        };
    }

    /**
     * Executes an inspect or list query (its parameter bound) and reads one record per name: a name
     * with live shared grants as held by them all (the single-holder fields those of the latest), any
     * other as its mutex row says.
     */
    static List<LockInfo> read(PreparedStatement ps) throws SQLException {
        List<LockInfo> infos = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            boolean more = rs.next();
            while (more) {
                String name = rs.getString(1);
                boolean mutexHeld = rs.getBoolean(2);
                String leaseId = rs.getString(3);
                long token = rs.getLong(4);
                Instant expiresAt = TIME.read(rs, 5);
                Instant serverTime = TIME.read(rs, 6);
                LockMetadata metadata = metadata(rs, 7);
                Instant grantedAt = TIME.read(rs, 10);
                String kind = rs.getString(11);
                int limit = rs.getInt(12);
                List<LockHolder> holders = new ArrayList<>();
                do {
                    String id = rs.getString(13);
                    if (id != null) {
                        holders.add(new LockHolder(
                                id,
                                LockMode.valueOf(rs.getString(14)),
                                rs.getInt(15),
                                rs.getLong(16),
                                TIME.read(rs, 17),
                                metadata(rs, 18),
                                TIME.read(rs, 21)));
                    }
                    more = rs.next();
                } while (more && name.equals(rs.getString(1)));
                if (!holders.isEmpty()) {
                    LockHolder latest = holders.stream()
                            .max(Comparator.comparingLong(LockHolder::token))
                            .orElseThrow();
                    infos.add(new LockInfo(
                            name,
                            true,
                            latest.leaseId(),
                            token,
                            latest.expiresAt(),
                            serverTime,
                            latest.metadata(),
                            latest.heldSince(),
                            LockMode.valueOf(kind),
                            kind.equals("PERMITS") ? limit : 0,
                            holders));
                } else {
                    infos.add(new LockInfo(
                            name,
                            mutexHeld,
                            mutexHeld ? leaseId : null,
                            token,
                            mutexHeld ? expiresAt : null,
                            serverTime,
                            mutexHeld ? metadata : LockMetadata.NONE,
                            mutexHeld ? grantedAt : null));
                }
            }
        }
        return infos;
    }

    /** Owner, type and data (JSON text) from three columns. */
    private static LockMetadata metadata(ResultSet rs, int column) throws SQLException {
        return LockInfoRows.metadata(rs.getString(column), rs.getString(column + 1), rs.getString(column + 2));
    }
}
