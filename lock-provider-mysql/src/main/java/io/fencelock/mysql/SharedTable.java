package io.fencelock.mysql;

import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.jdbc.LockInfoRows;
import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Shared grants (semaphore permits, readers, writers, the fair mutex) and waiters (a writer's
 * intent, a fair queue place) in a companion table, {@code <table>_share}, one row per grant or
 * waiter, and four stored procedures that change it, each called once per operation: acquire,
 * downgrade, release, renew. Each is one short READ COMMITTED transaction that first locks the
 * name's row in the lock table (taking the floor before it, as the mutex statement and the purge
 * do), then reads the server's clock, so that every change to a name's shared rows is serialized
 * on that row and judged by a time after the lock. Tokens come from the row's counter, the
 * mutex's. The procedures keep a summary in the lock table's row (kind, limit, the latest expiry
 * of any shared row and of any holder), which is what the one-statement mutex acquire and the
 * purge read. The SQL is in {@code shared.sql} beside this class; identifiers are the validated,
 * quoted names, every value a bind parameter.
 */
final class SharedTable {
    static final String SUFFIX = "_share";
    /** Kept in each procedure's comment: the start-up check and createTable(true) replace a procedure of another version. */
    static final String VERSION = "fencelock shared grants 1";

    private static final String[] PROCEDURES = {"_s_acq", "_s_dwn", "_s_rel", "_s_ren"};
    private static final SqlTime.Reader TIME = SqlTime.UTC_DATETIME;
    private static final String NOW = Statements.NOW;

    final String share;
    final String qualifiedShare;
    private final String qualifiedTable;
    private final String schema;
    private final String table;
    private final List<String> procedureNames = new ArrayList<>();
    /** The companion table's DDL, then each procedure's, as single statements (no DELIMITER). */
    private final List<String> ddl = new ArrayList<>();

    final String acquire;
    final String downgrade;
    final String release;
    final String renew;
    final String inspect;
    final String list;

    SharedTable(String schema, String table, String qualifiedTable, String qualifiedFloor) {
        this.schema = schema;
        this.table = table;
        this.share = table + SUFFIX;
        this.qualifiedTable = qualifiedTable;
        String prefix = schema == null ? "" : quote(schema) + ".";
        this.qualifiedShare = prefix + quote(share);
        Map<String, String> names = new LinkedHashMap<>();
        names.put("{table}", qualifiedTable);
        names.put("{floor}", qualifiedFloor);
        names.put("{share}", qualifiedShare);
        String[] keys = {"{acquire}", "{downgrade}", "{release}", "{renew}"};
        for (int i = 0; i < keys.length; i++) {
            procedureNames.add(table + PROCEDURES[i]);
            names.put(keys[i], prefix + quote(table + PROCEDURES[i]));
        }
        names.put("{version}", VERSION);
        names.put(
                "{leases}",
                "JSON_TABLE(p_leases, '$[*]' COLUMNS (name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin PATH"
                        + " '$[0]', id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin PATH '$[1]', ttl BIGINT PATH"
                        + " '$[2]', period BIGINT PATH '$[3]')) j");
        names.put("{summaryOfName}", summary(qualifiedTable, "v_name"));
        names.put("{summary}", summary(qualifiedTable, "p_name"));
        String text = template();
        for (Map.Entry<String, String> e : names.entrySet()) {
            text = text.replace(e.getKey(), e.getValue());
        }
        for (String statement : text.split("\n//\n")) {
            ddl.add(statement.strip());
        }
        this.acquire = "CALL " + names.get("{acquire}") + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        this.downgrade = "CALL " + names.get("{downgrade}") + "(?, ?, ?)";
        this.release = "CALL " + names.get("{release}") + "(?, ?)";
        this.renew = "CALL " + names.get("{renew}") + "(?)";
        // one statement: the name's row with its live holders, oldest grant first
        String info = "SELECT m.name, m.lease_id IS NOT NULL AND m.expires_at > " + NOW
                + ", m.lease_id, m.token, m.expires_at, " + NOW
                + ", m.lock_owner, m.lock_type, m.lock_data, m.granted_at, m.share_kind, m.share_limit,"
                + " s.id, s.grant_mode, s.permits, s.token, s.expires_at, s.lock_owner, s.lock_type, s.lock_data,"
                + " s.granted_at FROM " + qualifiedTable + " m LEFT JOIN " + qualifiedShare
                + " s ON s.name = m.name AND NOT s.waiter AND s.expires_at > " + NOW + " WHERE ";
        this.inspect = info + "m.name = ? ORDER BY s.token";
        this.list = info + "((m.lease_id IS NOT NULL AND m.expires_at > " + NOW + ") OR m.share_held_until > " + NOW
                + ") AND m.name LIKE ? ESCAPE '!' ORDER BY m.name, s.token";
    }

    /** Recomputes a name's summary in the lock table from its shared rows (all live: expired ones were deleted). */
    private String summary(String qualifiedTable, String name) {
        return "UPDATE " + qualifiedTable + " SET share_until = (SELECT MAX(s.expires_at) FROM " + qualifiedShare
                + " s WHERE s.name = " + name + "), share_held_until = (SELECT MAX(s.expires_at) FROM "
                + qualifiedShare + " s WHERE s.name = " + name + " AND NOT s.waiter) WHERE name = " + name;
    }

    private static String template() {
        try (InputStream in = SharedTable.class.getResourceAsStream("shared.sql")) {
            if (in == null) {
                throw new IllegalStateException("shared.sql is missing from the fencelock MySQL provider's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** For migration tools: the companion table and the procedures, in the mysql client's DELIMITER form. */
    String ddl() {
        return "DELIMITER //\n" + String.join("\n//\n", ddl) + "\n//\nDELIMITER ;";
    }

    /** Creates the companion table if absent and (re)creates the procedures that are absent or of another version. */
    void create(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(ddl.get(0));
            Map<String, String> found = procedures(c);
            for (int i = 0; i < procedureNames.size(); i++) {
                String procedure = procedureNames.get(i);
                if (!VERSION.equals(found.get(procedure.toLowerCase(Locale.ROOT)))) {
                    s.execute("DROP PROCEDURE IF EXISTS " + qualified(procedure));
                    s.execute(ddl.get(i + 1));
                }
            }
        }
    }

    /** Adds what is wrong with the companion table or the procedures to {@code problems}. */
    void verify(Connection c, String engine, List<String> key, List<String> problems) throws SQLException {
        if (engine == null) {
            problems.add("table " + share + " (shared grants) is missing");
        } else if (!engine.equalsIgnoreCase("InnoDB")) {
            problems.add("table " + share + " uses the " + engine + " engine, expected InnoDB: ALTER TABLE "
                    + qualifiedShare + " ENGINE=InnoDB");
        } else if (!key.equals(List.of("name", "id"))) {
            problems.add("the primary key of " + share + " is on " + key + ", expected (name, id)");
        }
        Map<String, String> found = procedures(c);
        List<String> stale = new ArrayList<>();
        for (String procedure : procedureNames) {
            if (!VERSION.equals(found.get(procedure.toLowerCase(Locale.ROOT)))) {
                stale.add(procedure);
            }
        }
        if (!stale.isEmpty()) {
            problems.add("procedures " + stale + " (shared grants) are missing or of another version than '" + VERSION
                    + "' (or this user may not see them): build with createTable(true), which (re)creates them");
        }
    }

    /** The procedures' names (lower case) in this schema with their comments. */
    private Map<String, String> procedures(Connection c) throws SQLException {
        Map<String, String> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT routine_name, routine_comment FROM"
                + " information_schema.routines WHERE routine_schema = COALESCE(?, DATABASE())"
                + " AND routine_type = 'PROCEDURE' AND routine_name LIKE ? ESCAPE '!'")) {
            ps.setString(1, schema);
            ps.setString(2, table.replace("!", "!!").replace("_", "!_") + "!_s!_%");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.put(rs.getString(1).toLowerCase(Locale.ROOT), rs.getString(2));
                }
            }
        }
        return found;
    }

    private String qualified(String name) {
        return schema == null ? quote(name) : quote(schema) + "." + quote(name);
    }

    private static String quote(String identifier) {
        return '`' + identifier + '`'; // a validated plain identifier: no backtick can be inside
    }

    // ------------------------------------------------------------------ operations

    /** One call of the acquire procedure. */
    AcquireResult acquire(
            Connection c, String name, String leaseId, long ttlMicros, SharedRequest request, LockMetadata metadata)
            throws SQLException {
        try (CallableStatement cs = c.prepareCall(acquire)) {
            int i = 1;
            cs.setString(i++, name);
            cs.setString(i++, leaseId);
            cs.setLong(i++, ttlMicros);
            cs.setString(i++, request.mode().name());
            cs.setInt(i++, request.permits());
            cs.setInt(i++, request.limit());
            cs.setString(i++, request.waiterId());
            cs.setBoolean(i++, request.waits());
            cs.setBoolean(i++, request.fair());
            LockInfoRows.bindMetadata(cs, i, metadata);
            try (ResultSet rs = cs.executeQuery()) {
                rs.next();
                switch (rs.getString(1)) {
                    case "G":
                        return AcquireResult.granted(rs.getLong(2), TIME.read(rs, 3));
                    case "K":
                        throw new IllegalArgumentException(refusal(
                                name, kind(rs.getString(5)), rs.getInt(6), kindOf(request.mode()), request.limit()));
                    default:
                        long remaining = rs.getLong(4);
                        return AcquireResult.held(
                                rs.wasNull() ? null : Duration.of(Math.max(0, remaining), ChronoUnit.MICROS));
                }
            }
        }
    }

    /** A second look after a refused mutex acquire that carried no answer: throws when the name is a live shared one of another kind. */
    void requireMutexKind(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT share_kind, share_limit FROM " + qualifiedTable
                + " WHERE name = ? AND share_until > " + NOW + " AND share_kind <> 'EXCLUSIVE'")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    throw new IllegalArgumentException(
                            refusal(name, kind(rs.getString(1)), rs.getInt(2), LockMode.EXCLUSIVE, 0));
                }
            }
        }
    }

    /** One call of the downgrade procedure: the token and new expiry, or rejected. */
    RenewResult downgrade(Connection c, String name, String leaseId, long ttlMicros) throws SQLException {
        try (CallableStatement cs = c.prepareCall(downgrade)) {
            cs.setString(1, name);
            cs.setString(2, leaseId);
            cs.setLong(3, ttlMicros);
            try (ResultSet rs = cs.executeQuery()) {
                rs.next();
                long token = rs.getLong(1);
                return rs.wasNull() ? RenewResult.rejected() : RenewResult.renewed(token, TIME.read(rs, 2));
            }
        }
    }

    /**
     * The renewal of the requests' shared grants, one call for the whole batch (a batch of mutex
     * leases only costs the procedure one indexed look); {@code renewed} receives each renewed
     * grant by name and lease id.
     */
    RoundTrip.Part renewPart(List<RenewRequest> requests, Map<List<String>, RenewResult> renewed) {
        StringBuilder json = new StringBuilder("[");
        for (RenewRequest r : requests) {
            long period = r.tokenPeriod() == null ? 0 : SqlTime.micros(r.tokenPeriod());
            json.append(json.length() == 1 ? "" : ",")
                    .append('[')
                    .append(MetadataCodec.quote(r.name()))
                    .append(',')
                    .append(MetadataCodec.quote(r.leaseId()))
                    .append(',')
                    .append(SqlTime.micros(r.ttl()))
                    .append(',')
                    .append(period)
                    .append(']');
        }
        String leases = json.append(']').toString();
        return RoundTrip.Part.query(
                renew,
                (ps, i) -> {
                    ps.setString(i++, leases);
                    return i;
                },
                rs -> {
                    while (rs.next()) {
                        renewed.put(
                                List.of(rs.getString(1), rs.getString(2)),
                                RenewResult.renewed(rs.getLong(3), TIME.read(rs, 4)));
                    }
                });
    }

    /** Reads {@link #inspect} or {@link #list} rows: one per live holder, or one for a name without any. */
    static List<LockInfo> read(PreparedStatement ps) throws SQLException {
        List<LockInfo> infos = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            String name = null;
            List<LockHolder> holders = new ArrayList<>();
            LockInfo mutex = null;
            LockMode kind = null;
            int limit = 0;
            while (rs.next()) {
                if (!rs.getString(1).equals(name)) {
                    if (name != null) {
                        infos.add(info(mutex, kind, limit, holders));
                    }
                    name = rs.getString(1);
                    holders = new ArrayList<>();
                    boolean held = rs.getBoolean(2);
                    mutex = new LockInfo(
                            name,
                            held,
                            held ? rs.getString(3) : null,
                            rs.getLong(4),
                            held ? TIME.read(rs, 5) : null,
                            TIME.read(rs, 6),
                            held ? metadata(rs.getString(7), rs.getString(8), rs.getString(9)) : LockMetadata.NONE,
                            held ? TIME.read(rs, 10) : null);
                    kind = rs.getString(11) == null ? LockMode.EXCLUSIVE : kind(rs.getString(11));
                    limit = rs.getInt(12);
                }
                if (rs.getString(13) != null) {
                    holders.add(new LockHolder(
                            rs.getString(13),
                            LockMode.valueOf(rs.getString(14)),
                            rs.getInt(15),
                            rs.getLong(16),
                            TIME.read(rs, 17),
                            metadata(rs.getString(18), rs.getString(19), rs.getString(20)),
                            TIME.read(rs, 21)));
                }
            }
            if (name != null) {
                infos.add(info(mutex, kind, limit, holders));
            }
        }
        return infos;
    }

    /** A name with live shared holders shows them all, its fields those of the latest grant; else the mutex's record. */
    private static LockInfo info(LockInfo mutex, LockMode kind, int limit, List<LockHolder> holders) {
        if (holders.isEmpty()) {
            return mutex;
        }
        LockHolder latest = holders.get(holders.size() - 1); // ordered by token
        return new LockInfo(
                mutex.name(),
                true,
                latest.leaseId(),
                mutex.token(),
                latest.expiresAt(),
                mutex.serverTime(),
                latest.metadata(),
                latest.heldSince(),
                kind,
                kind == LockMode.PERMITS ? limit : 0,
                holders);
    }

    /** The stored metadata; a row edited by hand past the rules reads as none rather than failing an inspect. */
    private static LockMetadata metadata(String owner, String type, String data) {
        if (owner == null && type == null && data == null) {
            return LockMetadata.NONE;
        }
        try {
            return new LockMetadata(owner, type, MetadataCodec.decodeData(data));
        } catch (IllegalArgumentException unreadable) {
            return LockMetadata.NONE;
        }
    }

    /** The kind a request asks the name to be: a writer's is the read-write lock's. */
    static LockMode kindOf(LockMode mode) {
        return mode == LockMode.WRITE ? LockMode.READ : mode;
    }

    private static LockMode kind(String stored) {
        return LockMode.valueOf(stored);
    }

    /** The kinds of the name as recorded in the lock table's row, coded into a refused mutex acquire's answer. */
    static final LockMode[] KIND_CODES = {LockMode.EXCLUSIVE, LockMode.PERMITS, LockMode.READ};

    /** "lock 'x' is a semaphore of 3 permits; a request for a semaphore of 5 is refused", as the in-memory backend says it. */
    static String refusal(String name, LockMode kind, int limit, LockMode requested, int requestedLimit) {
        return "lock '" + name + "' is " + describe(kind, limit) + "; a request for "
                + describe(requested, requestedLimit) + " is refused";
    }

    private static String describe(LockMode kind, int limit) {
        return switch (kind) {
            case PERMITS -> "a semaphore of " + limit + " permits";
            case READ, WRITE -> "a read-write lock";
            case EXCLUSIVE -> "a mutex";
        };
    }
}
