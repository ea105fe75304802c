package io.fencelock.mysql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The MySQL / MariaDB primitive: each operation is one autocommit {@code INSERT ... ON DUPLICATE
 * KEY UPDATE} or {@code UPDATE} on an InnoDB table, decided by the server's {@code UTC_TIMESTAMP(6)},
 * one round trip each: an acquire answers through {@code LAST_INSERT_ID}, a batch of renewals reads
 * its rows back in the same multi-statement. A name's row is never deleted on release, so its token
 * ({@code token + 1} under the row lock) rises across release, expiry and takeover;
 * {@link #purgeFree(Duration)} deletes rows only after raising a one-row floor above their tokens,
 * and a name without a row starts above that floor. There is no release signal: waiters poll,
 * never past the holder's expiry, which every failed attempt reports.
 *
 * <pre>{@code
 * LockBackend backend = MySqlLockBackend.builder()
 *         .jdbcUrl("jdbc:mysql://db:3306/app").user("app").password(secret)
 *         .createTable(true)
 *         .build();
 * }</pre>
 */
public final class MySqlLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(MySqlLockBackend.class);
    /** Renewals per UPDATE statement: 3 parameters each stays far below the 65,535 placeholders of a prepared statement. */
    static final int RENEW_CHUNK = 5_000;
    /** Rows deleted per purge transaction, so that the floor is held only briefly. */
    static final int PURGE_BATCH = 500;
    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    private static final int ER_LOCK_DEADLOCK = 1213;
    private static final String NOW = "UTC_TIMESTAMP(6)";
    /** The top bit of LAST_INSERT_ID (an unsigned BIGINT) marks a refusal; tokens stay below it. */
    private static final String REFUSED = "9223372036854775808";

    private final DataSource dataSource;
    private final HikariDataSource ownPool; // null when the user's DataSource is used: theirs to close
    private final LockTable table;
    private final String where;
    private final boolean combined;
    private final Set<Capability> capabilities;
    private final String server;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final ServerClock serverClock;
    private final String acquireSql;
    private final String releaseSql;
    private final String inspectSql;
    private final String listSql;

    private MySqlLockBackend(DataSource dataSource, HikariDataSource ownPool, LockTable table, String where,
                             ServerFacts facts) {
        this.dataSource = dataSource;
        this.ownPool = ownPool;
        this.table = table;
        this.where = where;
        this.combined = facts.multiStatements;
        this.server = facts.version;
        this.serverClock = facts.clock;
        EnumSet<Capability> caps = EnumSet.of(Capability.FENCING, Capability.SERVER_TIME, Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD, Capability.LINEARIZABLE, Capability.PURGE_FREE);
        if (facts.durableCommits) {
            caps.add(Capability.DURABLE_TOKENS);
        }
        this.capabilities = Collections.unmodifiableSet(caps);
        String t = table.qualifiedTable;
        // A lock is free when released (no holder) or expired; "already ours" makes a retried acquire
        // of the same lease id idempotent, and makes "lease_id = ours" below mean "granted".
        String free = "(lease_id IS NULL OR expires_at <= " + NOW + " OR lease_id = ?)";
        // ON DUPLICATE KEY UPDATE assigns left to right, each expression seeing the columns assigned
        // before it: the token and its time are decided while lease_id and expires_at are still the
        // old holder's; lease_id is decided last of the three; expires_at then tests the new lease_id.
        // LAST_INSERT_ID(x) carries the outcome back in the OK packet, so one statement is the whole
        // round trip: the new token (below 2^63), or REFUSED plus the holder's remaining microseconds.
        // A new row's token comes from the floor, read with a shared lock so a purge in progress
        // (which holds the floor exclusively until it has deleted) is waited for, never half seen.
        this.acquireSql = "INSERT INTO " + t + " (name, lease_id, token, token_issued_at, expires_at)"
                + " VALUES (?, ?, LAST_INSERT_ID((SELECT f.token_floor FROM " + table.qualifiedFloor
                + " f WHERE f.id = 1 LOCK IN SHARE MODE) + 1), " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND)"
                + " ON DUPLICATE KEY UPDATE"
                + " token = IF(" + free + ", LAST_INSERT_ID(token + 1), token + 0 * LAST_INSERT_ID(" + REFUSED
                + " + GREATEST(0, TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at)))),"
                + " token_issued_at = IF(" + free + ", " + NOW + ", token_issued_at),"
                + " lease_id = IF(" + free + ", ?, lease_id),"
                + " expires_at = IF(lease_id = ?, " + NOW + " + INTERVAL ? MICROSECOND, expires_at)";
        // the row stays: it carries the name's token history
        this.releaseSql = "UPDATE " + t + " SET lease_id = NULL, expires_at = " + NOW
                + " WHERE name = ? AND lease_id = ? AND expires_at > " + NOW;
        String info = "SELECT name, lease_id IS NOT NULL AND expires_at > " + NOW + ", lease_id, token, expires_at, "
                + NOW + " FROM " + t + " WHERE ";
        this.inspectSql = info + "name = ?";
        // binary collation: ORDER BY is Java's order of the (ASCII) names, LIKE is case-sensitive
        this.listSql = info + "lease_id IS NOT NULL AND expires_at > " + NOW + " AND name LIKE ? ESCAPE '!' ORDER BY name";
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The DDL of the lock table and its floor, for migration tools (Flyway, Liquibase...); {@code schema} may be null. */
    public static String ddl(String schema, String table) {
        return LockTable.of(schema, table).ddl();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        long ttlMicros = micros(ttl);
        Instant sent = serverClock.now();
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement(acquireSql, Statement.RETURN_GENERATED_KEYS)) {
            int i = 1;
            ps.setString(i++, name);
            ps.setString(i++, leaseId);
            ps.setLong(i++, ttlMicros);
            for (int free = 0; free < 3; free++) {
                ps.setString(i++, leaseId);
            }
            ps.setString(i++, leaseId);
            ps.setString(i++, leaseId);
            ps.setLong(i, ttlMicros);
            ps.executeUpdate();
            long outcome = 0;
            try (ResultSet keys = ps.getGeneratedKeys()) {
                // Connector/J lists LAST_INSERT_ID once per affected row; with useAffectedRows=true an
                // unchanged row (a refusal) is no affected row, so the refusal carries no hint
                if (keys.next()) {
                    outcome = Long.parseUnsignedLong(keys.getString(1));
                }
            }
            if (outcome > 0) {
                // The statement returns only the token; the expiry it stored is the server's time
                // when the statement started plus the TTL, which we know to within a round trip.
                return AcquireResult.granted(outcome, sent.plus(ttl));
            }
            return AcquireResult.held(outcome == 0 ? null : Duration.of(outcome & Long.MAX_VALUE, ChronoUnit.MICROS));
        } catch (SQLException e) {
            if (e.getErrorCode() == ER_LOCK_DEADLOCK || e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT) {
                // InnoDB rolled the statement back whole (autocommit): a definite "not acquired".
                // The engine's waiters poll again within their wait.
                log.debug("fencelock: acquire of '{}' lost an InnoDB lock conflict ({}); not acquired", name, e.getErrorCode());
                return AcquireResult.held(null);
            }
            throw failure("tryAcquire of '" + name + "'", e);
        } catch (NumberFormatException e) {
            throw new LockBackendException("MySQL tryAcquire of '" + name + "' on " + where
                    + ": the driver reported no usable LAST_INSERT_ID (" + Redaction.message(e.getMessage()) + ")", e, false);
        }
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        // One UPDATE per TTL and token period (a client's leases usually share both), then one read
        // of all the rows: a lease was renewed iff its row still names it and has not expired. A
        // refused lease cannot look renewed, since nothing but its own renewal moves its expiry on.
        Map<List<Long>, List<RenewRequest>> groups = new LinkedHashMap<>();
        for (RenewRequest r : requests) {
            long period = r.tokenPeriod() == null ? 0 : micros(r.tokenPeriod());
            groups.computeIfAbsent(List.of(micros(r.ttl()), period), k -> new ArrayList<>()).add(r);
        }
        List<RoundTrip.Part> parts = new ArrayList<>();
        groups.forEach((key, group) -> {
            for (int from = 0; from < group.size(); from += RENEW_CHUNK) {
                parts.add(renewPart(group.subList(from, Math.min(group.size(), from + RENEW_CHUNK)), key.get(0), key.get(1)));
            }
        });
        List<String> names = new ArrayList<>(new LinkedHashSet<>(requests.stream().map(RenewRequest::name).toList()));
        Map<String, Row> rows = new HashMap<>();
        Instant[] serverTime = new Instant[1];
        for (int from = 0; from < names.size(); from += RENEW_CHUNK) {
            List<String> chunk = names.subList(from, Math.min(names.size(), from + RENEW_CHUNK));
            parts.add(RoundTrip.Part.query("SELECT name, lease_id, token, expires_at, expires_at > " + NOW + ", " + NOW
                    + " FROM " + table.qualifiedTable + " WHERE name IN (" + placeholders(chunk.size(), "?") + ")", (ps, i) -> {
                        for (String n : chunk) {
                            ps.setString(i++, n);
                        }
                        return i;
                    }, rs -> {
                        while (rs.next()) {
                            rows.put(rs.getString(1), new Row(rs.getString(2), rs.getLong(3), instant(rs, 4), rs.getBoolean(5)));
                            serverTime[0] = instant(rs, 6);
                        }
                    }));
        }
        try (Connection c = connection()) {
            Instant sent = Instant.now();
            RoundTrip.run(c, combined, parts);
            if (parts.size() == 2) { // one UPDATE and its read: a clean sample of the server's clock
                serverClock.observe(sent, serverTime[0], Instant.now());
            }
        } catch (SQLException e) {
            throw failure("renew of " + requests.size() + " lease(s)", e);
        }
        List<RenewResult> results = new ArrayList<>(requests.size());
        for (RenewRequest r : requests) {
            Row row = rows.get(r.name());
            results.add(row != null && row.live && r.leaseId().equals(row.leaseId)
                    ? RenewResult.renewed(row.token, row.expiresAt) : RenewResult.rejected());
        }
        return results;
    }

    private record Row(String leaseId, long token, Instant expiresAt, boolean live) {
    }

    /**
     * Extends the leases of one TTL that still hold their lock. With a token period, the token rises
     * once the current one is that old: single-table UPDATE assigns left to right, so both the token
     * and its time are decided from the old token_issued_at before it is overwritten.
     */
    private RoundTrip.Part renewPart(List<RenewRequest> chunk, long ttlMicros, long periodMicros) {
        String set = "expires_at = " + NOW + " + INTERVAL ? MICROSECOND";
        if (periodMicros > 0) {
            String due = "token_issued_at <= " + NOW + " - INTERVAL ? MICROSECOND";
            set = "token = IF(" + due + ", token + 1, token), token_issued_at = IF(" + due + ", " + NOW
                    + ", token_issued_at), " + set;
        }
        String sql = "UPDATE " + table.qualifiedTable + " SET " + set
                + " WHERE name IN (" + placeholders(chunk.size(), "?") + ")"
                + " AND (name, lease_id) IN (" + placeholders(chunk.size(), "(?, ?)") + ")"
                + " AND expires_at > " + NOW;
        return RoundTrip.Part.update(sql, (ps, i) -> {
            if (periodMicros > 0) {
                ps.setLong(i++, periodMicros);
                ps.setLong(i++, periodMicros);
            }
            ps.setLong(i++, ttlMicros);
            for (RenewRequest r : chunk) {
                ps.setString(i++, r.name());
            }
            for (RenewRequest r : chunk) {
                ps.setString(i++, r.name());
                ps.setString(i++, r.leaseId());
            }
            return i;
        });
    }

    @Override
    public boolean release(String name, String leaseId) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setString(1, name);
            ps.setString(2, leaseId);
            return ps.executeUpdate() > 0; // the holder always changes to NULL: 1 with or without useAffectedRows
        } catch (SQLException e) {
            throw failure("release of '" + name + "'", e);
        }
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        List<LockInfo> found = query("inspect of '" + name + "'", inspectSql, name);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        String pattern = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%";
        return query("list of '" + prefix + "'", listSql, pattern);
    }

    private List<LockInfo> query(String operation, String sql, String parameter) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            List<LockInfo> infos = new ArrayList<>();
            Instant sent = Instant.now();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    boolean held = rs.getBoolean(2);
                    infos.add(new LockInfo(rs.getString(1), held, held ? rs.getString(3) : null, rs.getLong(4),
                            held ? instant(rs, 5) : null, instant(rs, 6)));
                }
            }
            if (infos.size() == 1) {
                serverClock.observe(sent, infos.get(0).serverTime(), Instant.now());
            }
            return infos;
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * Deletes rows free for at least {@code freeFor}, in batches. Each batch is one transaction that
     * first locks the floor (so no acquire can read it meanwhile), then locks the rows that are still
     * free, raises the floor to their highest token and deletes them. An acquire that finds no row
     * reads the floor after that commit, so its token is higher than every deleted one.
     */
    @Override
    public int purgeFree(Duration freeFor) {
        if (freeFor == null || freeFor.isNegative()) {
            throw new IllegalArgumentException("freeFor must not be negative, got " + freeFor);
        }
        long ageMicros = micros(freeFor);
        String freeLongEnough = "expires_at <= " + NOW + " - INTERVAL ? MICROSECOND";
        int deleted = 0;
        String after = "";
        try (Connection c = connection()) {
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
                deleted += purgeBatch(c, candidates, freeLongEnough, ageMicros);
                if (candidates.size() < PURGE_BATCH) {
                    return deleted;
                }
                after = candidates.get(candidates.size() - 1);
            }
        } catch (SQLException e) {
            throw failure("purge of free locks (" + deleted + " deleted before the failure)", e);
        }
    }

    private int purgeBatch(Connection c, List<String> candidates, String freeLongEnough, long ageMicros) throws SQLException {
        c.setAutoCommit(false);
        try {
            List<String> names = new ArrayList<>();
            long[] highest = {0};
            RoundTrip.run(c, combined, List.of(
                    // the floor first: the same order as every acquire (floor, then row), so no deadlock
                    RoundTrip.Part.query("SELECT token_floor FROM " + table.qualifiedFloor + " WHERE id = 1 FOR UPDATE",
                            (ps, i) -> i, rs -> {
                                if (!rs.next()) {
                                    throw new SQLException("the floor row of " + table.qualifiedFloor + " is missing", "HY000");
                                }
                            }),
                    RoundTrip.Part.query("SELECT name, token FROM " + table.qualifiedTable + " WHERE name IN ("
                            + placeholders(candidates.size(), "?") + ") AND " + freeLongEnough + " FOR UPDATE", (ps, i) -> {
                        for (String n : candidates) {
                            ps.setString(i++, n);
                        }
                        ps.setLong(i++, ageMicros);
                        return i;
                    }, rs -> {
                        while (rs.next()) {
                            names.add(rs.getString(1));
                            highest[0] = Math.max(highest[0], rs.getLong(2));
                        }
                    })));
            if (!names.isEmpty()) {
                // the rows are locked and free: they can only be deleted now, with the floor above them
                RoundTrip.run(c, combined, List.of(
                        RoundTrip.Part.update("UPDATE " + table.qualifiedFloor
                                + " SET token_floor = GREATEST(token_floor, ?) WHERE id = 1", (ps, i) -> {
                            ps.setLong(i++, highest[0]);
                            return i;
                        }),
                        RoundTrip.Part.update("DELETE FROM " + table.qualifiedTable + " WHERE name IN ("
                                + placeholders(names.size(), "?") + ")", (ps, i) -> {
                            for (String n : names) {
                                ps.setString(i++, n);
                            }
                            return i;
                        })));
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

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    /** Whether operations travel as one multi-statement round trip (else their statements go one by one). */
    boolean multiStatements() {
        return combined;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && ownPool != null) {
            ownPool.close();
        }
    }

    /** The backend's own pool, null with the application's DataSource; for tests of what the pool shows. */
    HikariDataSource ownPool() {
        return ownPool;
    }

    @Override
    public String toString() {
        return "MySqlLockBackend[" + table.qualifiedTable + " on " + where + ", " + server + "]";
    }

    private Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        try {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // a user's pool may hand out transactional connections
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private LockBackendException failure(String operation, SQLException e) {
        return failure(operation, e, where);
    }

    static LockBackendException failure(String operation, SQLException e, String where) {
        return failure(operation, e, where, null);
    }

    /** With the raw {@code url} the failure's connection was made with, whose echoes in the driver's message are redacted. */
    static LockBackendException failure(String operation, SQLException e, String where, String url) {
        return new LockBackendException("MySQL " + operation + " failed on " + where + ": "
                + (e.getSQLState() == null ? "" : "[" + e.getSQLState() + "/" + e.getErrorCode() + "] ")
                + Redaction.message(e.getMessage(), url), e, isRetryable(e));
    }

    /** Whether the same call may succeed later: the connection, the server or a lock conflict had a moment, not a bug. */
    static boolean isRetryable(SQLException e) {
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
            return true; // deadlocks, timeouts, lost connections, an exhausted pool
        }
        String state = e.getSQLState();
        if (state != null && (state.startsWith("08") || state.startsWith("40"))) {
            return true; // connection exceptions, transaction rollbacks
        }
        return switch (e.getErrorCode()) {
            case ER_LOCK_WAIT_TIMEOUT, ER_LOCK_DEADLOCK,
                 1040, // too many connections
                 1053, // server shutdown in progress
                 1290, 1836, // read-only (a primary being switched over)
                 1317, 1927, // query interrupted, connection killed (MariaDB)
                 3024, // query execution was interrupted, maximum statement execution time exceeded
                 4031 -> true; // disconnected by the server for inactivity
            default -> false;
        };
    }

    private static String placeholders(int count, String one) {
        StringBuilder sb = new StringBuilder(count * (one.length() + 2));
        for (int i = 0; i < count; i++) {
            sb.append(i == 0 ? "" : ", ").append(one);
        }
        return sb.toString();
    }

    /** A DATETIME(6) written from UTC_TIMESTAMP(6): read as it is, with no session time zone involved. */
    private static Instant instant(ResultSet rs, int column) throws SQLException {
        LocalDateTime time = rs.getObject(column, LocalDateTime.class);
        return time == null ? null : time.toInstant(ZoneOffset.UTC);
    }

    private static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    /** What the start-up check learned about the server. */
    private record ServerFacts(String version, boolean durableCommits, boolean multiStatements, ServerClock clock) {
    }

    /**
     * Configures a {@link MySqlLockBackend}. Either {@link #jdbcUrl(String)} (with user and password;
     * the backend runs its own small HikariCP pool) or {@link #dataSource(DataSource)} (the
     * application's pool, which the backend never closes).
     */
    public static final class Builder {
        private static final String URL_PREFIX = "jdbc:mysql:";
        private static final String MARIADB_PREFIX = "jdbc:mariadb:";
        private String jdbcUrl;
        private String user;
        private String password;
        private DataSource dataSource;
        private String schema;
        private String table = "fencelock_locks";
        private boolean createTable;
        private int poolSize = 8;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration socketTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /**
         * A {@code jdbc:mysql:} URL, or a {@code jdbc:mariadb:} one (the same URL for MySQL
         * Connector/J, which speaks to MariaDB as well); credentials may be given here or with
         * user/password. The database in the URL holds the lock table unless {@link #schema(String)} says otherwise.
         */
        public Builder jdbcUrl(String jdbcUrl) {
            Objects.requireNonNull(jdbcUrl, "jdbcUrl");
            this.jdbcUrl = requireParsable(connectorJUrl(jdbcUrl));
            return this;
        }

        /** Connector/J's parse, before any I/O: a malformed URL or port is bad input, not a failed connect. */
        private static String requireParsable(String url) {
            ConnectionString.parse(url).requireValidPorts();
            try {
                ConnectorJDataSource.driver().getPropertyInfo(url, new Properties()); // parses, connects nowhere
            } catch (SQLException | RuntimeException e) {
                // no cause: the parser's message may quote pieces of the URL; Redaction withholds it if so
                throw new IllegalArgumentException("jdbcUrl " + Redaction.uri(url) + " is not a valid MySQL URL: "
                        + Redaction.message(e.getMessage(), url));
            }
            return url;
        }

        /** {@code jdbc:mariadb:...} as {@code jdbc:mysql:...}; anything else but {@code jdbc:mysql:} is refused. */
        static String connectorJUrl(String url) {
            if (url.regionMatches(true, 0, URL_PREFIX, 0, URL_PREFIX.length())) {
                return url;
            }
            if (url.regionMatches(true, 0, MARIADB_PREFIX, 0, MARIADB_PREFIX.length())) {
                return URL_PREFIX + url.substring(MARIADB_PREFIX.length());
            }
            throw new IllegalArgumentException("jdbcUrl must start with " + URL_PREFIX + " or " + MARIADB_PREFIX
                    + ", got " + Redaction.uri(url));
        }

        public Builder user(String user) {
            this.user = user;
            return this;
        }

        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /**
         * The application's DataSource, instead of a URL. It must hand out MySQL Connector/J
         * connections. With {@code allowMultiQueries=true} a batch of renewals is one round trip;
         * without it, its UPDATE and its read go one after the other (two round trips). With
         * {@code useAffectedRows=true} a refused acquire cannot report the holder's remaining time,
         * so waiters poll on their backoff alone.
         */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            return this;
        }

        /** The database (schema) of the lock table; default: the database of the connection. A plain identifier. */
        public Builder schema(String schema) {
            LockTable.of(Objects.requireNonNull(schema, "schema"), table); // validates before keeping it
            this.schema = schema;
            return this;
        }

        /** The lock table (default {@code fencelock_locks}); a plain identifier of at most 57 characters. */
        public Builder table(String table) {
            LockTable.of(schema, table);
            this.table = table;
            return this;
        }

        /** Whether {@link #build()} creates the table and its floor when absent (default false). */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /** Connections of the backend's own pool (default 8); ignored with {@link #dataSource(DataSource)}. */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
            }
            this.poolSize = poolSize;
            return this;
        }

        /** How long to wait for a connection, from the pool or the network (default 5 s). */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = requirePositive("connectTimeout", connectTimeout);
            return this;
        }

        /**
         * How long a statement may wait for the server's answer (default 10 s), so that a dead or
         * frozen server fails a renewal instead of hanging it; InnoDB lock waits are capped at half
         * of it. Ignored with {@link #dataSource(DataSource)}.
         */
        public Builder socketTimeout(Duration socketTimeout) {
            this.socketTimeout = requirePositive("socketTimeout", socketTimeout);
            return this;
        }

        /**
         * Validates the settings, opens the connections, creates the tables if asked, and checks
         * them (throwing {@link IllegalStateException} saying how to fix them).
         */
        public MySqlLockBackend build() {
            LockTable lockTable = LockTable.of(schema, table);
            if ((jdbcUrl == null) == (dataSource == null)) {
                throw new IllegalArgumentException("set exactly one of jdbcUrl and dataSource");
            }
            HikariDataSource pool = null;
            DataSource connections = dataSource;
            String where = "a DataSource of the application";
            if (jdbcUrl != null) {
                where = Redaction.uri(jdbcUrl);
                pool = pool(where);
                connections = pool;
            }
            try (Connection c = connections.getConnection()) {
                if (!c.getAutoCommit()) {
                    c.setAutoCommit(true);
                }
                if (createTable) {
                    lockTable.create(c);
                }
                lockTable.verify(c);
                ServerFacts facts = facts(c, where);
                return new MySqlLockBackend(connections, pool, lockTable, where, facts);
            } catch (SQLException e) {
                closeQuietly(pool);
                throw failure("start-up check of " + lockTable.qualifiedTable, e, where, jdbcUrl);
            } catch (RuntimeException e) {
                closeQuietly(pool);
                throw e;
            }
        }

        private static ServerFacts facts(Connection c, String where) throws SQLException {
            String version = null;
            String flush = null;
            ServerClock clock = new ServerClock();
            try (Statement s = c.createStatement()) {
                for (int sample = 0; sample < 3; sample++) { // the first may pay for warming up
                    Instant sent = Instant.now();
                    try (ResultSet rs = s.executeQuery("SELECT VERSION(), " + NOW)) {
                        rs.next();
                        version = rs.getString(1);
                        clock.observe(sent, instant(rs, 2), Instant.now());
                    }
                }
                try (ResultSet rs = s.executeQuery("SHOW VARIABLES LIKE 'innodb_flush_log_at_trx_commit'")) {
                    if (rs.next()) {
                        flush = rs.getString(2);
                    }
                }
            }
            boolean durable = "1".equals(flush);
            if (!durable) {
                // 0 or 2: a commit may be lost in a crash, and a token issued before it issued again
                log.warn("fencelock: {} runs with innodb_flush_log_at_trx_commit={}: a crash may lose the last grants,"
                        + " so DURABLE_TOKENS is not declared (set it to 1 for tokens that survive a crash)", where, flush);
            }
            boolean multi;
            try (Statement s = c.createStatement()) {
                s.execute("SELECT 1; SELECT 2");
                multi = s.getMoreResults();
            } catch (SQLException e) {
                multi = false;
                log.info("fencelock: the connections to {} do not allow multi-statements ({}); a batch of renewals"
                        + " takes two round trips instead of one (add allowMultiQueries=true to save one)", where,
                        Redaction.message(e.getMessage()));
            }
            return new ServerFacts(product(version), durable, multi, clock);
        }

        private static String product(String version) {
            String v = version == null ? "unknown" : version;
            return (v.toLowerCase(Locale.ROOT).contains("mariadb") ? "MariaDB " : "MySQL ") + v.split("-")[0];
        }

        private HikariDataSource pool(String where) {
            // the pool sees a DataSource only: no URL, user or password in its configuration or its log
            Properties connection = new Properties();
            if (user != null) {
                connection.setProperty("user", user);
            }
            if (password != null) {
                connection.setProperty("password", password);
            }
            HikariConfig config = new HikariConfig();
            config.setPoolName("fencelock-mysql");
            config.setMaximumPoolSize(poolSize);
            config.setMinimumIdle(Math.min(2, poolSize));
            config.setAutoCommit(true);
            config.setConnectionTimeout(Math.max(250, connectTimeout.toMillis()));
            // an acquire and its read-back, a renewal and its read-back: one round trip each
            connection.setProperty("allowMultiQueries", "true");
            connection.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
            connection.setProperty("socketTimeout", Long.toString(socketTimeout.toMillis()));
            connection.setProperty("tcpKeepAlive", "true");
            // server-side prepared statements, prepared once per connection: the acquire, release,
            // inspect and list statements skip parsing and planning (measured: about 10% of an
            // acquire + release). Multi-statements (a renewal and its read) go client-side by themselves.
            connection.setProperty("useServerPrepStmts", "true");
            connection.setProperty("cachePrepStmts", "true");
            connection.setProperty("prepStmtCacheSize", "32");
            connection.setProperty("prepStmtCacheSqlLimit", "2048");
            // and NOT useAffectedRows=true: a refused acquire changes no row, and Connector/J only
            // reports LAST_INSERT_ID (the holder's remaining time) for rows it counts as affected
            connection.setProperty("useLocalSessionState", "true");
            connection.setProperty("cacheServerConfiguration", "true");
            // a lock wait ends with a definite error before the socket gives up on the statement
            config.setConnectionInitSql("SET SESSION innodb_lock_wait_timeout = "
                    + Math.max(1, socketTimeout.toSeconds() / 2));
            config.setDataSource(new ConnectorJDataSource(jdbcUrl, connection));
            try {
                return new HikariDataSource(config);
            } catch (HikariPool.PoolInitializationException e) {
                // the first connection failed: report it like any other SQL failure
                if (e.getCause() instanceof SQLException sql) {
                    throw failure("connect", sql, where, jdbcUrl);
                }
                throw new LockBackendException("MySQL connect failed on " + where + ": "
                        + Redaction.message(e.getMessage(), jdbcUrl), e, true);
            } catch (RuntimeException e) {
                if (e.getCause() instanceof SQLException sql) {
                    throw failure("connect", sql, where, jdbcUrl);
                }
                throw e;
            }
        }

        private static void closeQuietly(HikariDataSource pool) {
            if (pool != null) {
                pool.close();
            }
        }

        private static Duration requirePositive(String what, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }
    }
}
