package io.fencelock.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.ReleaseFeed;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The PostgreSQL primitive: each operation is one autocommit statement, one round trip, decided
 * by the server's {@code clock_timestamp()}. Fencing tokens come from a {@code CACHE 1} sequence,
 * drawn inside {@code DO UPDATE} after the row lock is taken, so they rise across release and
 * re-acquire, expiry and takeover, deletion of rows and restarts. A purge deletes a free row only
 * while no acquire of its name is in flight (a transaction-scoped advisory lock per name, shared by
 * acquires, tried exclusively by the purge), so a new row's token, drawn when its statement starts,
 * still exceeds every token of the rows it replaces. A release {@code NOTIFY}s waiters
 * when a caller was refused since the grant (the row's {@code contended} flag).
 *
 * <pre>{@code
 * LockBackend backend = PostgresLockBackend.builder()
 *         .jdbcUrl("jdbc:postgresql://db:5432/app").user("app").password(secret)
 *         .createTable(true)
 *         .build();
 * }</pre>
 */
public final class PostgresLockBackend implements LockBackend {
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(
            Capability.FENCING, Capability.DURABLE_TOKENS, Capability.SERVER_TIME, Capability.WAKE_ON_RELEASE,
            Capability.BATCH_RENEW, Capability.TOKEN_PERIOD, Capability.LINEARIZABLE, Capability.PURGE_FREE));
    private static final String MICROS = " * interval '1 microsecond'";
    /** Rows a purge statement considers at once: each deleted row holds one advisory lock until its commit. */
    static final int PURGE_BATCH = 500;

    private final DataSource dataSource;
    private final HikariDataSource ownPool; // null when the user's DataSource is used: theirs to close
    private final LockTable table;
    private final String where;
    private final ReleaseListener listener;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final String acquireSql;
    private final String renewSql;
    private final String releaseSql;
    private final String inspectSql;
    private final String listSql;
    private final String purgeSql;

    private PostgresLockBackend(DataSource dataSource, HikariDataSource ownPool, DataSource listenerSource,
                                LockTable table, String where) {
        this.dataSource = dataSource;
        this.ownPool = ownPool;
        this.table = table;
        this.where = where;
        this.listener = new ReleaseListener(listenerSource, ownPool == null, table.channel, where);
        String t = table.qualifiedTable;
        String nextToken = "nextval('" + table.qualifiedSequence + "'::regclass)";
        // The name's guard: a transaction-scoped advisory lock keyed by this table and the name.
        String guard = "('" + t + "'::regclass::oid::int, hashtext(%s))";
        // One "now" per statement (c), so that every CASE below takes the same decision. The token of
        // a takeover is drawn in DO UPDATE, after the row lock: never EXCLUDED.token, whose nextval
        // ran before the conflict was seen and may be older than a concurrent grant's. The insert
        // branch has no choice but that early nextval; c first takes the name's guard (shared), and
        // the projection that draws it reads c, so the guard is held from before the draw to the
        // commit: no purge can delete the name's row in between, and if the row is gone when the
        // insert looks, it was deleted before the draw, with every token it carried lower.
        String free = "(l.lease_id IS NULL OR l.expires_at <= EXCLUDED.token_issued_at)";
        this.acquireSql = "WITH c AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared" + guard.formatted("?")
                + " AS guarded, clock_timestamp() AS now), acquired AS ("
                + " INSERT INTO " + t + " AS l (name, lease_id, token, token_issued_at, expires_at, contended)"
                + " SELECT ?, ?, " + nextToken + ", c.now, c.now + ?" + MICROS + ", false FROM c"
                + " ON CONFLICT (name) DO UPDATE SET"
                + " lease_id = CASE WHEN " + free + " THEN EXCLUDED.lease_id ELSE l.lease_id END,"
                + " token = CASE WHEN " + free + " THEN " + nextToken + " ELSE l.token END,"
                + " token_issued_at = CASE WHEN " + free + " THEN EXCLUDED.token_issued_at ELSE l.token_issued_at END,"
                + " expires_at = CASE WHEN " + free + " THEN EXCLUDED.expires_at ELSE l.expires_at END,"
                // a refused caller may be about to wait: the holder's release must wake it
                + " contended = NOT " + free
                // a refusal writes only the first time after a grant
                + " WHERE " + free + " OR NOT l.contended"
                + " RETURNING NOT l.contended AS granted, l.token, l.expires_at)"
                + " SELECT a.granted, a.token, a.expires_at, (extract(epoch FROM a.expires_at - c.now) * 1000000)::bigint"
                + " FROM acquired a, c"
                // refused without a write: the holder's remaining time, as the statement's snapshot shows it (a hint)
                + " UNION ALL SELECT false, NULL, NULL, (extract(epoch FROM h.expires_at - c.now) * 1000000)::bigint"
                + " FROM " + t + " h, c WHERE h.name = ? AND NOT EXISTS (SELECT 1 FROM acquired)"
                + " AND h.lease_id IS NOT NULL AND h.expires_at > c.now";
        // one "now" per statement, so the expiry check, the new expiry and the token age agree
        String due = "req.period_us > 0 AND l.token_issued_at + req.period_us" + MICROS + " <= c.now";
        this.renewSql = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " UPDATE " + t + " AS l SET expires_at = c.now + req.ttl_us" + MICROS + ","
                + " token = CASE WHEN " + due + " THEN " + nextToken + " ELSE l.token END,"
                + " token_issued_at = CASE WHEN " + due + " THEN c.now ELSE l.token_issued_at END"
                + " FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[]) AS req(name, lease_id, ttl_us, period_us), c"
                + " WHERE l.name = req.name AND l.lease_id = req.lease_id AND l.expires_at > c.now"
                + " RETURNING l.name, l.lease_id, l.token, l.expires_at";
        // Rows are never deleted on release: the free row keeps the name's history. NOTIFY only when
        // a caller was refused since the grant: a NOTIFY serialises commits database-wide, so the
        // uncontended release stays a plain update. "contended" is reset by the next grant.
        this.releaseSql = "WITH r AS (UPDATE " + t + " SET lease_id = NULL, expires_at = clock_timestamp()"
                + " WHERE name = ? AND lease_id = ? AND expires_at > clock_timestamp() RETURNING name, contended)"
                + " SELECT CASE WHEN r.contended THEN pg_notify(?, r.name) END FROM r";
        String info = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " SELECT l.name, l.lease_id IS NOT NULL AND l.expires_at > c.now, l.lease_id, l.token, l.expires_at, c.now"
                + " FROM " + t + " l, c WHERE ";
        this.inspectSql = info + "l.name = ?";
        this.listSql = info + "l.lease_id IS NOT NULL AND l.expires_at > c.now AND starts_with(l.name, ?)"
                + " ORDER BY l.name COLLATE \"C\""; // Java's order of the names, whatever the database collation
        // A batch of free rows in name order (resumed after the last name of the previous batch);
        // of those, the ones whose guard is free right now, taken exclusively without waiting (an
        // acquire in flight holds it: the row stays for a later purge); then the delete, which
        // re-checks that each row is still free long enough on its latest version.
        String freeLongEnough = "(%1$slease_id IS NULL OR %1$sexpires_at <= clock_timestamp())"
                + " AND %1$sexpires_at <= clock_timestamp() - ?" + MICROS;
        this.purgeSql = "WITH batch AS MATERIALIZED (SELECT name FROM " + t + " WHERE name > ? AND "
                + freeLongEnough.formatted("") + " ORDER BY name LIMIT " + PURGE_BATCH + "),"
                + " guarded AS MATERIALIZED (SELECT name FROM batch WHERE pg_try_advisory_xact_lock"
                + guard.formatted("name") + "),"
                + " gone AS (DELETE FROM " + t + " l USING guarded g WHERE l.name = g.name AND " + freeLongEnough.formatted("l.")
                + " RETURNING 1)"
                + " SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM batch), (SELECT max(name) FROM batch)";
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The DDL of the lock table and its sequence, for migration tools (Flyway, Liquibase...). */
    public static String ddl(String schema, String table) {
        return LockTable.of(schema, table).ddl();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        long ttlMicros = micros(ttl);
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(acquireSql)) {
            ps.setString(1, name);
            ps.setString(2, name);
            ps.setString(3, leaseId);
            ps.setLong(4, ttlMicros);
            ps.setString(5, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return AcquireResult.held(null);
                }
                if (rs.getBoolean(1)) {
                    return AcquireResult.granted(rs.getLong(2), instant(rs, 3));
                }
                return AcquireResult.held(Duration.of(rs.getLong(4), ChronoUnit.MICROS));
            }
        } catch (SQLException e) {
            throw failure("tryAcquire of '" + name + "'", e);
        }
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        int n = requests.size();
        String[] names = new String[n];
        String[] leaseIds = new String[n];
        Long[] ttls = new Long[n];
        Long[] periods = new Long[n];
        for (int i = 0; i < n; i++) {
            RenewRequest r = requests.get(i);
            names[i] = r.name();
            leaseIds[i] = r.leaseId();
            ttls[i] = micros(r.ttl());
            periods[i] = r.tokenPeriod() == null ? 0L : micros(r.tokenPeriod());
        }
        Map<String, Renewed> renewed = new HashMap<>();
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(renewSql)) {
            ps.setArray(1, c.createArrayOf("text", names));
            ps.setArray(2, c.createArrayOf("text", leaseIds));
            ps.setArray(3, c.createArrayOf("bigint", ttls));
            ps.setArray(4, c.createArrayOf("bigint", periods));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.put(rs.getString(1), new Renewed(rs.getString(2),
                            RenewResult.renewed(rs.getLong(3), instant(rs, 4))));
                }
            }
        } catch (SQLException e) {
            throw failure("renew of " + n + " lease(s)", e);
        }
        List<RenewResult> results = new ArrayList<>(n);
        for (RenewRequest r : requests) {
            Renewed row = renewed.get(r.name());
            results.add(row != null && row.leaseId.equals(r.leaseId()) ? row.result : RenewResult.rejected());
        }
        return results;
    }

    private record Renewed(String leaseId, RenewResult result) {
    }

    @Override
    public boolean release(String name, String leaseId) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setString(1, name);
            ps.setString(2, leaseId);
            ps.setString(3, table.channel);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
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
        return query("list of '" + prefix + "'", listSql, prefix);
    }

    private List<LockInfo> query(String operation, String sql, String parameter) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            List<LockInfo> infos = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    boolean held = rs.getBoolean(2);
                    infos.add(new LockInfo(rs.getString(1), held, held ? rs.getString(3) : null, rs.getLong(4),
                            held ? instant(rs, 5) : null, instant(rs, 6)));
                }
            }
            return infos;
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * Safe for tokens at any age, {@code Duration.ZERO} included: every new token comes from the
     * sequence, and a row is deleted only while no acquire of its name is in flight (see the
     * constructor). Deletes in batches of {@value #PURGE_BATCH}, each its own statement, so that a
     * purge holds few advisory locks at once and an acquire waits for one batch at most.
     */
    @Override
    public int purgeFree(Duration freeFor) {
        if (freeFor == null || freeFor.isNegative()) {
            throw new IllegalArgumentException("freeFor must not be negative, got " + freeFor);
        }
        long ageMicros = micros(freeFor);
        int deleted = 0;
        String after = "";
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(purgeSql)) {
            while (true) {
                ps.setString(1, after);
                ps.setLong(2, ageMicros);
                ps.setLong(3, ageMicros);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    deleted += rs.getInt(1);
                    if (rs.getInt(2) < PURGE_BATCH) {
                        return deleted;
                    }
                    after = rs.getString(3);
                }
            }
        } catch (SQLException e) {
            throw failure("purge of free locks (" + deleted + " deleted before the failure)", e);
        }
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(listener);
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            listener.close();
            if (ownPool != null) {
                ownPool.close();
            }
        }
    }

    /** The backend's own pool, null with the application's DataSource; for tests of what the pool shows. */
    HikariDataSource ownPool() {
        return ownPool;
    }

    @Override
    public String toString() {
        return "PostgresLockBackend[" + table.qualifiedTable + " on " + where + "]";
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
        return new LockBackendException("PostgreSQL " + operation + " failed on " + where + ": "
                + (e.getSQLState() == null ? "" : "[" + e.getSQLState() + "] ") + Redaction.message(e.getMessage(), url),
                e, isRetryable(e));
    }

    /** Whether the same call may succeed later: the connection or the server had a moment, not a bug. */
    static boolean isRetryable(SQLException e) {
        String state = e.getSQLState();
        if (state == null) {
            return e instanceof SQLTransientException || e instanceof SQLRecoverableException;
        }
        return state.startsWith("08") // connection exceptions
                || state.equals("40001") || state.equals("40P01") // serialization failure, deadlock
                || state.equals("57014") // query cancelled (a timeout)
                || state.equals("57P01") || state.equals("57P02") || state.equals("57P03") // shutdown, crash, starting up
                || state.equals("53300"); // too many connections
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    private static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    /**
     * Configures a {@link PostgresLockBackend}. Either {@link #jdbcUrl(String)} (with user and
     * password; the backend runs its own small HikariCP pool) or {@link #dataSource(DataSource)}
     * (the application's pool, which the backend never closes).
     */
    public static final class Builder {
        private static final String URL_PREFIX = "jdbc:postgresql:";
        private String jdbcUrl;
        private String user;
        private String password;
        private DataSource dataSource;
        private String schema = "public";
        private String table = "fencelock_locks";
        private boolean createTable;
        private int poolSize = 8;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration socketTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /** A {@code jdbc:postgresql:} URL; credentials may be given here or with user/password. */
        public Builder jdbcUrl(String jdbcUrl) {
            Objects.requireNonNull(jdbcUrl, "jdbcUrl");
            if (!jdbcUrl.regionMatches(true, 0, URL_PREFIX, 0, URL_PREFIX.length())) {
                throw new IllegalArgumentException("jdbcUrl must start with " + URL_PREFIX + ", got " + Redaction.uri(jdbcUrl));
            }
            if (ConnectionString.parse(jdbcUrl).requireValidPorts().hasUserInfo()) {
                // pgjdbc would take "user:password@host" for a host name and look it up
                throw new IllegalArgumentException("jdbcUrl " + Redaction.uri(jdbcUrl) + " has a user-info (user:password@),"
                        + " which pgjdbc does not read: give them with user(...) and password(...) or as ?user=&password=");
            }
            this.jdbcUrl = jdbcUrl;
            return this;
        }

        public Builder user(String user) {
            this.user = user;
            return this;
        }

        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** The application's PostgreSQL DataSource, instead of a URL; it must hand out pgjdbc connections. */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            return this;
        }

        /** The schema of the lock table (default {@code public}); a plain identifier. */
        public Builder schema(String schema) {
            LockTable.of(schema, table); // validates before keeping it
            this.schema = schema;
            return this;
        }

        /** The lock table (default {@code fencelock_locks}); a plain identifier of at most 53 characters. */
        public Builder table(String table) {
            LockTable.of(schema, table);
            this.table = table;
            return this;
        }

        /** Whether {@link #build()} creates the table and its sequence when absent (default false). */
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
            this.connectTimeout = requireSeconds("connectTimeout", connectTimeout);
            return this;
        }

        /**
         * How long a statement may wait for the server's answer (default 10 s), so that a dead or
         * frozen server fails a renewal instead of hanging it; ignored with {@link #dataSource(DataSource)}.
         */
        public Builder socketTimeout(Duration socketTimeout) {
            this.socketTimeout = requireSeconds("socketTimeout", socketTimeout);
            return this;
        }

        /**
         * Validates the settings, opens the connections, creates the table if asked, and checks the
         * table and its sequence (throwing {@link IllegalStateException} saying how to fix them).
         */
        public PostgresLockBackend build() {
            LockTable lockTable = LockTable.of(schema, table);
            if ((jdbcUrl == null) == (dataSource == null)) {
                throw new IllegalArgumentException("set exactly one of jdbcUrl and dataSource");
            }
            HikariDataSource pool = null;
            DataSource connections = dataSource;
            DataSource listenerSource = dataSource;
            String where = "a DataSource of the application";
            if (jdbcUrl != null) {
                where = Redaction.uri(jdbcUrl);
                PGSimpleDataSource direct = pgDataSource(where);
                pool = pool(direct, where);
                connections = pool;
                listenerSource = direct; // the listener keeps its own connection, outside the pool
            }
            PostgresLockBackend backend = new PostgresLockBackend(connections, pool, listenerSource, lockTable, where);
            try (Connection c = backend.connection()) {
                if (createTable) {
                    lockTable.create(c);
                }
                lockTable.verify(c);
                return backend;
            } catch (SQLException e) {
                backend.close();
                throw failure("start-up check of " + lockTable.qualifiedTable, e, where, jdbcUrl);
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
        }

        private PGSimpleDataSource pgDataSource(String where) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            try {
                ds.setURL(jdbcUrl);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("jdbcUrl is not a valid PostgreSQL URL: " + where);
            }
            if (user != null) {
                ds.setUser(user);
            }
            if (password != null) {
                ds.setPassword(password);
            }
            ds.setConnectTimeout(seconds(connectTimeout));
            ds.setSocketTimeout(seconds(socketTimeout));
            ds.setTcpKeepAlive(true);
            if (ds.getApplicationName() == null || ds.getApplicationName().startsWith("PostgreSQL JDBC")) {
                ds.setApplicationName("fencelock");
            }
            return ds;
        }

        private HikariDataSource pool(PGSimpleDataSource direct, String where) {
            HikariConfig config = new HikariConfig();
            config.setDataSource(direct);
            config.setPoolName("fencelock-postgres");
            config.setMaximumPoolSize(poolSize);
            config.setMinimumIdle(Math.min(2, poolSize));
            config.setAutoCommit(true);
            config.setConnectionTimeout(Math.max(250, connectTimeout.toMillis()));
            try {
                return new HikariDataSource(config);
            } catch (HikariPool.PoolInitializationException e) {
                // the first connection failed: report it like any other SQL failure
                if (e.getCause() instanceof SQLException sql) {
                    throw failure("connect", sql, where, jdbcUrl);
                }
                throw new LockBackendException("PostgreSQL connect failed on " + where, e, true);
            }
        }

        private static Duration requireSeconds(String what, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }

        private static int seconds(Duration d) {
            return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (d.toMillis() + 999) / 1000));
        }
    }
}
