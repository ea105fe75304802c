package io.fencelock.postgres;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.jdbc.JdbcBuilder;
import io.fencelock.jdbc.JdbcConnections;
import io.fencelock.jdbc.JdbcFailures;
import io.fencelock.jdbc.JdbcSettings;
import io.fencelock.jdbc.KnownRows;
import io.fencelock.jdbc.LockInfoRows;
import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL primitive: autocommit statements decided by the server's {@code clock_timestamp()},
 * one round trip on each operation's common path (a grant of a free name, a mutex release); a
 * refused acquire adds its decision statement, a shared release its function's call. Fencing tokens come from a {@code CACHE 1} sequence,
 * drawn inside {@code DO UPDATE} after the row lock is taken, so they rise across release and
 * re-acquire, expiry and takeover, deletion of rows and restarts. A purge deletes a free row only
 * while no acquire of its name is in flight (a transaction-scoped advisory lock per name, shared by
 * acquires, tried exclusively by the purge), so a new row's token, drawn when its statement starts,
 * still exceeds every token of the rows it replaces. A name whose row this backend has seen is granted by a
 * plain update of the row, drawing its token after the row lock and needing no guard ({@link KnownRows}). A release {@code NOTIFY}s waiters
 * when a caller was refused since the grant (the row's {@code contended} flag). A grant stores its
 * {@link LockMetadata} and its server time in the row with it; renewals keep them, a release clears them.
 * Semaphores, read-write locks and the fair mutex keep their grants and waiters in a companion table,
 * changed by one PL/pgSQL function per operation under the name's row lock ({@link SharedFunctions}).
 *
 * <pre>{@code
 * LockBackend backend = PostgresLockBackend.builder()
 *         .jdbcUrl("jdbc:postgresql://db:5432/app").user("app").password(secret)
 *         .createTable(true)
 *         .build();
 * }</pre>
 */
public final class PostgresLockBackend implements LockBackend {
    /**
     * Declared always; {@link Capability#LINEARIZABLE} and {@link Capability#DURABLE_TOKENS} as {@link
     * Builder#commitGuarantees} finds the server's commits.
     */
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(
            Capability.FENCING,
            Capability.SERVER_TIME,
            Capability.WAKE_ON_RELEASE,
            Capability.BATCH_RENEW,
            Capability.TOKEN_PERIOD,
            Capability.PURGE_FREE,
            Capability.METADATA,
            Capability.EXTENDABLE_TTL,
            Capability.SHARED_LOCKS,
            Capability.FAIR_ORDER,
            Capability.HAND_OVER,
            Capability.GRANT_ON_RELEASE));

    private static final Logger LOG = LoggerFactory.getLogger(PostgresLockBackend.class);
    private static final SqlTime.Reader TIME = SqlTime.TIMESTAMPTZ;
    /** Connection trouble, a serialization failure or deadlock, a cancelled statement, a server going down or full. */
    private static final JdbcFailures.Retryable RETRYABLE = new JdbcFailures.Retryable(
            Set.of("08", "40001", "40P01", "57014", "57P01", "57P02", "57P03", "53300"), Set.of(), false);
    /** Rows a purge statement considers at once (tests use it). */
    static final int PURGE_BATCH = Statements.PURGE_BATCH;

    private final JdbcConnections connections;
    private final JdbcFailures failures;
    private final LockTable table;
    private final ReleaseListener listener;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final Statements sql;
    private final KnownRows knownRows = new KnownRows();
    private final Set<Capability> capabilities;

    private PostgresLockBackend(
            JdbcConnections connections, DataSource listenerSource, LockTable table, Set<Capability> commitGuarantees) {
        this.connections = connections;
        EnumSet<Capability> caps = EnumSet.copyOf(CAPABILITIES);
        caps.addAll(commitGuarantees);
        this.capabilities = Collections.unmodifiableSet(caps);
        this.failures = connections.failures();
        this.table = table;
        this.listener = new ReleaseListener(
                listenerSource, connections.ownPool() == null, table.channel, this::leaveQueue, connections.where());
        this.sql = new Statements(table);
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
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /**
     * The grant writes the metadata and its server time in the same statement; a refusal leaves the holder's.
     * A free name is granted by the small grant statement; only when it grants nothing does the acquire's
     * full decision run (a second round trip, on the same connection).
     */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        String waiter = listener.waiterFor(name);
        AcquireResult result = grantOrDecide(name, leaseId, SqlTime.micros(ttl), metadata, waiter);
        if (waiter != null) {
            queuedBy(name, result);
        }
        return result;
    }

    /** A refusal that names the waiter queues it on the row; a grant takes it out. */
    private void queuedBy(String name, AcquireResult result) {
        if (result.acquired()) {
            listener.granted(name);
        } else {
            listener.refused(name);
        }
    }

    private AcquireResult grantOrDecide(
            String name, String leaseId, long ttlMicros, LockMetadata metadata, String waiter) {
        try (Connection c = connections.connection()) {
            boolean known = knownRows.contains(name);
            try (PreparedStatement ps = c.prepareStatement(known ? sql.grantOnRow : sql.grant)) {
                if (known) {
                    ps.setString(bindNewGrant(ps, leaseId, ttlMicros, metadata, waiter), name);
                } else {
                    ps.setString(1, name);
                    ps.setString(2, name);
                    ps.setString(3, leaseId);
                    ps.setLong(4, ttlMicros);
                    int next = LockInfoRows.bindMetadata(ps, 5, metadata);
                    ps.setString(next, name);
                    LockInfoRows.bindText(ps, next + 1, waiter);
                    LockInfoRows.bindText(ps, next + 2, waiter);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        if (!known) {
                            knownRows.add(name);
                        }
                        return AcquireResult.granted(rs.getLong(1), TIME.read(rs, 2));
                    }
                }
            }
            AcquireResult decided = decide(c, name, leaseId, ttlMicros, metadata, waiter);
            if (!known) {
                knownRows.add(name); // granted, refused or queued: the row is there either way
            }
            return decided;
        } catch (SQLException e) {
            throw failures.failure("tryAcquire of '" + name + "'", e);
        }
    }

    /** Binds a new grant's columns written by an UPDATE of the row (Statements' newGrant) from 1; returns the next index. */
    private static int bindNewGrant(
            PreparedStatement ps, String leaseId, long ttlMicros, LockMetadata metadata, String waiter)
            throws SQLException {
        ps.setString(1, leaseId);
        ps.setLong(2, ttlMicros);
        int next = LockInfoRows.bindMetadata(ps, 3, metadata);
        LockInfoRows.bindText(ps, next, waiter);
        LockInfoRows.bindText(ps, next + 1, waiter);
        return next + 2;
    }

    /** The acquire's full decision (see Statements): a grant, or a refusal recorded for the release to signal. */
    private AcquireResult decide(
            Connection c, String name, String leaseId, long ttlMicros, LockMetadata metadata, String waiter)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquire)) {
            ps.setString(1, name);
            LockInfoRows.bindText(ps, 2, waiter);
            ps.setString(3, leaseId);
            ps.setString(4, name);
            ps.setString(5, name);
            ps.setLong(6, ttlMicros);
            ps.setString(LockInfoRows.bindMetadata(ps, 7, metadata), name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return AcquireResult.held(null);
                }
                if (rs.getString(5) != null) { // the name's live shared grants or waiters are of another kind
                    throw SharedRows.refusal(name, rs.getString(5), rs.getInt(6), "a mutex");
                }
                if (rs.getBoolean(1)) {
                    return AcquireResult.granted(rs.getLong(2), TIME.read(rs, 3));
                }
                String queuedAs = rs.getString(7);
                if (queuedAs == null) {
                    return AcquireResult.held(SharedRows.remaining(rs, 4));
                }
                return rs.getBoolean(8)
                        ? AcquireResult.queuedGrant(queuedAs, rs.getLong(2), TIME.read(rs, 3))
                        : AcquireResult.queued(SharedRows.remaining(rs, 4), queuedAs);
            }
        }
    }

    /**
     * One conditional update of the name's row (see Statements): the holder's grant becomes the new lease's,
     * with a new token from the sequence; no NOTIFY, since the name was never free.
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        long ttlMicros = SqlTime.micros(ttl);
        String waiter = listener.waiterFor(name);
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.handOver)) {
            int next = bindNewGrant(ps, leaseId, ttlMicros, metadata, waiter);
            ps.setString(next, name);
            ps.setString(next + 1, fromLeaseId);
            ps.setString(next + 2, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return AcquireResult.held(null);
                }
                if (rs.getBoolean(1)) {
                    if (waiter != null) {
                        listener.granted(name);
                    }
                    return AcquireResult.granted(rs.getLong(2), TIME.read(rs, 3));
                }
                return AcquireResult.held(SharedRows.remaining(rs, 4));
            }
        } catch (SQLException e) {
            throw failures.failure("hand-over of '" + name + "'", e);
        }
    }

    /**
     * Takes this client's waiter out of {@code name}'s queue and, when the name is free, wakes the next
     * queued waiter instead (see Statements). Run by the listener's leaving thread, and as it closes; a
     * failure only leaves a stale entry, which the next release wakes in vain (the others still poll).
     */
    private void leaveQueue(String name) {
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.leave)) {
            ps.setString(1, listener.waiterId());
            ps.setString(2, name);
            ps.setString(3, table.channel);
            ps.execute();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("fencelock: leaving the wake-up queue of '{}' failed: {}", name, e.toString());
        }
    }

    /** One call of the name's acquire function (SharedFunctions): the decision, the token and the waiter's record. */
    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.acquireShared)) {
            SharedRows.bindAcquire(ps, name, leaseId, ttl, request, metadata);
            try (ResultSet rs = ps.executeQuery()) {
                return SharedRows.acquired(rs, name, request);
            }
        } catch (SQLException e) {
            throw failures.failure("tryAcquireShared of '" + name + "'", e);
        }
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.downgrade)) {
            ps.setString(1, name);
            ps.setString(2, leaseId);
            ps.setLong(3, SqlTime.micros(ttl));
            ps.setString(4, table.channel);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long token = rs.getLong(1);
                return rs.wasNull() ? RenewResult.rejected() : RenewResult.renewed(token, TIME.read(rs, 2));
            }
        } catch (SQLException e) {
            throw failures.failure("downgrade of '" + name + "'", e);
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
            ttls[i] = SqlTime.micros(r.ttl());
            periods[i] = r.tokenPeriod() == null ? 0L : SqlTime.micros(r.tokenPeriod());
        }
        Map<Renewed, RenewResult> renewed = new HashMap<>(); // a name may have several shared grants in one batch
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.renew)) {
            ps.setArray(1, c.createArrayOf("text", names));
            ps.setArray(2, c.createArrayOf("text", leaseIds));
            ps.setArray(3, c.createArrayOf("bigint", ttls));
            ps.setArray(4, c.createArrayOf("bigint", periods));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.put(
                            new Renewed(rs.getString(1), rs.getString(2)),
                            RenewResult.renewed(rs.getLong(3), TIME.read(rs, 4)));
                }
            }
        } catch (SQLException e) {
            throw failures.failure("renew of " + n + " lease(s)", e);
        }
        List<RenewResult> results = new ArrayList<>(n);
        for (RenewRequest r : requests) {
            results.add(renewed.getOrDefault(new Renewed(r.name(), r.leaseId()), RenewResult.rejected()));
        }
        return results;
    }

    private record Renewed(String name, String leaseId) {}

    /**
     * The release of a mutex grant nobody is queued for first (a plain update); when that frees nothing, the
     * mutex's full release (waking or granting the first queued waiter); only when that freed no mutex grant
     * either, the release of a shared grant or waiter of that id: each statement's plan holds only its own
     * case, and the common one is the smallest. A release with a queue costs one more round trip, which
     * writes nothing.
     */
    @Override
    public boolean release(String name, String leaseId) {
        try (Connection c = connections.connection()) {
            if (releaseMutex(c, name, leaseId)) {
                return true;
            }
            try (PreparedStatement ps = c.prepareStatement(sql.withdraw)) {
                ps.setString(1, listener.waiterId());
                ps.setString(2, leaseId);
                ps.setString(3, name);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        // false: a queue place, withdrawn, nothing was held; true: a release granted the lease since
                        // releaseMutex looked, and it holds the name now
                        return rs.getBoolean(1) && releaseMutex(c, name, leaseId);
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(sql.releaseShared)) {
                ps.setString(1, name);
                ps.setString(2, leaseId);
                ps.setString(3, table.channel);
                ps.setString(4, name);
                ps.setString(5, leaseId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() && rs.getBoolean(1);
                }
            }
        } catch (SQLException e) {
            throw failures.failure("release of '" + name + "'", e);
        }
    }

    /** Frees the name if {@code leaseId} holds its mutex: the plain update when nobody is queued, else the full release. */
    private boolean releaseMutex(Connection c, String name, String leaseId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.releaseUnqueued)) {
            ps.setString(1, name);
            ps.setString(2, leaseId);
            ps.setString(3, table.channel);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return true;
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql.release)) {
            ps.setString(1, name);
            ps.setString(2, leaseId);
            ps.setString(3, table.channel);
            ps.setString(4, table.channel);
            ps.setString(5, table.channel);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        List<LockInfo> found = infos("inspect of '" + name + "'", sql.inspect, name);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        return infos("list of '" + prefix + "'", sql.list, prefix).stream()
                .filter(LockInfo::held)
                .toList();
    }

    private List<LockInfo> infos(String operation, String query, String parameter) {
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(query)) {
            ps.setString(1, parameter);
            return SharedRows.read(ps);
        } catch (SQLException e) {
            throw failures.failure(operation, e);
        }
    }

    /**
     * Safe for tokens at any age, {@code Duration.ZERO} included: every new token comes from the
     * sequence, and a row is deleted only while no acquire of its name is in flight (see
     * Statements). Deletes in batches of {@value #PURGE_BATCH}, each its own statement, so that a
     * purge holds few advisory locks at once and an acquire waits for one batch at most.
     */
    @Override
    public int purgeFree(Duration freeFor) {
        long ageMicros = SqlTime.micros(SqlTime.requireNotNegative("freeFor", freeFor));
        int deleted = 0;
        String after = "";
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.purge)) {
            while (true) {
                ps.setString(1, after);
                ps.setLong(2, ageMicros);
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
            throw failures.failure("purge of free locks (" + deleted + " deleted before the failure)", e);
        }
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(listener);
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            listener.close();
            connections.close();
        }
    }

    /** The backend's own pool, null with the application's DataSource; for tests of what the pool shows. */
    DataSource ownPool() {
        return connections.ownPool();
    }

    /** Where the backend's connections come from; for tests of the own pool's gate. */
    JdbcConnections connections() {
        return connections;
    }

    @Override
    public String toString() {
        return "PostgresLockBackend[" + table.qualifiedTable + " on " + connections.where() + "]";
    }

    /**
     * Configures a {@link PostgresLockBackend}. Either {@link #jdbcUrl(String)}, a
     * {@code jdbc:postgresql:} URL (with user and password; the backend runs its own small HikariCP
     * pool), or {@link #dataSource(javax.sql.DataSource)}: the application's pool of pgjdbc
     * connections, which the backend never closes. The schema defaults to {@code public}; the
     * table name is a plain identifier of at most 53 characters.
     */
    public static final class Builder extends JdbcBuilder<Builder> {
        private static final String URL_PREFIX = "jdbc:postgresql:";

        private Builder() {
            super("public", "fencelock_locks", LockTable::of);
        }

        @Override
        protected String checkUrl(String jdbcUrl) {
            if (!jdbcUrl.regionMatches(true, 0, URL_PREFIX, 0, URL_PREFIX.length())) {
                throw new IllegalArgumentException(
                        "jdbcUrl must start with " + URL_PREFIX + ", got " + Redaction.uri(jdbcUrl));
            }
            if (ConnectionString.parse(jdbcUrl).requireValidPorts().hasUserInfo()) {
                // pgjdbc would take "user:password@host" for a host name and look it up
                throw new IllegalArgumentException(
                        "jdbcUrl " + Redaction.uri(jdbcUrl) + " has a user-info (user:password@),"
                                + " which pgjdbc does not read: give them with user(...) and password(...) or as ?user=&password=");
            }
            return jdbcUrl;
        }

        /**
         * Validates the settings, opens the connections, creates the table if asked, and checks the
         * table and its sequence (throwing {@link IllegalStateException} saying how to fix them).
         */
        @Override
        public PostgresLockBackend build() {
            JdbcSettings settings = settings();
            LockTable lockTable = LockTable.of(settings.schema(), settings.table());
            JdbcFailures failures = new JdbcFailures("PostgreSQL", settings.where(), RETRYABLE, false);
            DataSource listenerSource = settings.dataSource();
            JdbcConnections connections;
            if (settings.ownPool()) {
                PGSimpleDataSource direct = pgDataSource(settings);
                connections = JdbcConnections.ownPool(direct, settings, "fencelock-postgres", null, failures);
                listenerSource = listenerDataSource(settings); // its own connection, outside the pool
            } else {
                connections = JdbcConnections.application(settings.dataSource(), failures);
            }
            DataSource second = listenerSource; // the own pool's: a direct connection; else the application's pool
            boolean ownPool = settings.ownPool();
            Set<Capability> commitGuarantees = connections.startUp(
                    lockTable, settings.createTable(), c -> requirePrimary(c, connections.where()), c -> {
                        requireSessionsOfItsOwn(c, second, ownPool, connections.where());
                        return commitGuarantees(c, connections.where());
                    });
            return new PostgresLockBackend(connections, listenerSource, lockTable, commitGuarantees);
        }

        /**
         * Refuses connections that reach PostgreSQL through a pooler in transaction or statement mode (PgBouncer's
         * {@code pool_mode=transaction}, say), seen as two client connections served by one server process: the
         * start-up's connection asks for its process id, then, while it stays open, a second connection does. Only
         * a pooler hands one process to two connections; PgBouncer hands the one it just freed to the next. Behind
         * such a pooler pgjdbc's prepared statements meet other clients' under the same names (the TCK through
         * PgBouncer 1.18 failed with "prepared statement S_1 already exists" and "bind message supplies 4
         * parameters, but prepared statement S_1 requires 12": a statement could run with another's parameters),
         * and the LISTEN that wakes waiters is lost. The own pool's second connection is a direct one; an
         * application's pool may have none free, so its second connection is waited for only briefly, in a
         * thread of its own, and the check is skipped (the connection closed when it comes) if it does not come.
         */
        private static void requireSessionsOfItsOwn(Connection first, DataSource second, boolean ownPool, String where)
                throws SQLException {
            int firstProcess = backendPid(first);
            Connection other;
            if (ownPool) {
                other = second.getConnection();
            } else {
                other = briefly(second, where);
                if (other == null) {
                    return;
                }
            }
            try (Connection c = other) {
                if (backendPid(c) == firstProcess) {
                    throw new IllegalStateException("the connections to " + where + " reach PostgreSQL through a"
                            + " pooler in transaction or statement mode (two connections were served by one server"
                            + " process, as PgBouncer's pool_mode=transaction does): fencelock needs sessions of its"
                            + " own, for its prepared statements, which such a pooler mixes up between clients, and"
                            + " for the LISTEN that wakes waiters. Connect to PostgreSQL directly, or through a pool"
                            + " in session mode");
                }
            }
        }

        /** A second connection of an application's pool if it comes within a second, else null (closed later). */
        private static Connection briefly(DataSource pool, String where) {
            CompletableFuture<Connection> borrowed = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return pool.getConnection();
                        } catch (SQLException e) {
                            throw new CompletionException(e);
                        }
                    },
                    task -> {
                        Thread t = new Thread(task, "fencelock-pooler-check");
                        t.setDaemon(true);
                        t.start();
                    });
            try {
                return borrowed.get(1, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                borrowed.thenAccept(Builder::closeQuietly);
                LOG.debug("fencelock: no second connection to {} within a second; the pooler check is skipped", where);
                return null;
            } catch (ExecutionException e) {
                LOG.debug("fencelock: no second connection to {}; the pooler check is skipped", where, e.getCause());
                return null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                borrowed.thenAccept(Builder::closeQuietly);
                return null;
            }
        }

        private static void closeQuietly(Connection c) {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.debug("fencelock: closing the pooler check's connection failed", e);
            }
        }

        private static int backendPid(Connection c) throws SQLException {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                return rs.getInt(1);
            }
        }

        /**
         * Refuses a server in recovery (a hot standby): it refuses every write, so every acquire would fail, and a
         * table to create would fail with a read-only transaction's error. The start-up's first check, before the
         * table is created or verified.
         */
        private static void requirePrimary(Connection c, String where) throws SQLException {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
                if (rs.next() && rs.getBoolean(1)) {
                    throw new IllegalStateException(where + " is a standby (in recovery), which takes no writes:"
                            + " fencelock writes its locks on the primary; name the primary's address (with several"
                            + " hosts in the URL, targetServerType=primary)");
                }
            }
        }

        /**
         * What the server's commits keep, read on the start-up's connection (the pool's sessions alike):
         * <ul>
         *   <li>{@link Capability#DURABLE_TOKENS} when a grant's commit is on disk before the statement returns, so
         *       that a crash cannot lose it and hand out its token (a sequence's value) again: {@code fsync} on, and
         *       the session's {@code synchronous_commit} anything but {@code off} (set per server, database, role
         *       or session);
         *   <li>both it and {@link Capability#LINEARIZABLE} only when no physical standby streams from this primary
         *       at start-up, or every commit waits for a synchronous one ({@code synchronous_standby_names} set,
         *       {@code synchronous_commit} {@code on}, {@code remote_write} or {@code remote_apply}). A standby
         *       streaming asynchronously may lack the last grants when a failover (Patroni's, an operator's, a
         *       platform's) promotes it: those locks would be granted again, and their tokens issued twice, since
         *       the sequence's last values went with them. A physical standby's WAL sender belongs to no
         *       database; a logical one (a subscription, a change-data-capture consumer), which no failover
         *       promotes, belongs to one and is not counted. A WAL archive's {@code pg_receivewal} is physical and
         *       counts, on the safe side (no column an unprivileged role may read tells it from a standby).
         * </ul>
         */
        private static Set<Capability> commitGuarantees(Connection c, String where) throws SQLException {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT current_setting('fsync'),"
                            + " current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),"
                            + " (SELECT count(*) FROM pg_stat_replication r JOIN pg_stat_activity a ON a.pid = r.pid"
                            + " WHERE a.datid IS NULL)")) {
                rs.next();
                String fsync = rs.getString(1);
                String synchronousCommit = rs.getString(2);
                boolean waitsForAStandby = !rs.getString(3).isBlank()
                        && List.of("on", "remote_write", "remote_apply").contains(synchronousCommit);
                long standbys = rs.getLong(4);
                if (standbys > 0 && !waitsForAStandby) {
                    LOG.warn(
                            "fencelock: {} streams to {} standby(s) asynchronously (synchronous_commit={},"
                                    + " synchronous_standby_names unset or not waited for): a failover to one of them"
                                    + " can lose the last grants and issue their tokens again, so LINEARIZABLE and"
                                    + " DURABLE_TOKENS are not declared. A primary whose commits wait for a"
                                    + " synchronous standby declares them (a failover must then promote that one).",
                            where,
                            standbys,
                            synchronousCommit);
                    return Set.of();
                }
                boolean durable = "on".equals(fsync) && !"off".equals(synchronousCommit);
                if (!durable) {
                    LOG.warn(
                            "fencelock: {} runs with fsync={} and synchronous_commit={}: a crash may lose the last"
                                    + " grants and issue their tokens again, so DURABLE_TOKENS is not declared (set"
                                    + " synchronous_commit to on for the lock's sessions, e.g. with the URL's"
                                    + " options=-c synchronous_commit=on, and fsync to on)",
                            where,
                            fsync,
                            synchronousCommit);
                    return Set.of(Capability.LINEARIZABLE);
                }
                return Set.of(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS);
            }
        }

        /**
         * The listener's connection: the pool's settings, and sockets on which pgjdbc's check for a
         * further message after each notification does not wait ({@link ListenerSocketFactory}),
         * unless the URL names a socket factory of its own.
         */
        private static PGSimpleDataSource listenerDataSource(JdbcSettings settings) {
            PGSimpleDataSource ds = pgDataSource(settings);
            if (ds.getSocketFactory() == null) {
                ds.setSocketFactory(ListenerSocketFactory.class.getName());
            }
            return ds;
        }

        private static PGSimpleDataSource pgDataSource(JdbcSettings settings) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            try {
                ds.setURL(settings.jdbcUrl());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("jdbcUrl is not a valid PostgreSQL URL: " + settings.where());
            }
            if (settings.user() != null) {
                ds.setUser(settings.user());
            }
            if (settings.password() != null) {
                ds.setPassword(settings.password());
            }
            ds.setConnectTimeout(SqlTime.seconds(settings.connectTimeout()));
            ds.setSocketTimeout(SqlTime.seconds(settings.socketTimeout()));
            ds.setTcpKeepAlive(true);
            if (ds.getApplicationName() == null || ds.getApplicationName().startsWith("PostgreSQL JDBC")) {
                ds.setApplicationName("fencelock");
            }
            return ds;
        }
    }
}
