package io.fencelock.mysql;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.jdbc.JdbcBuilder;
import io.fencelock.jdbc.JdbcConnections;
import io.fencelock.jdbc.JdbcFailures;
import io.fencelock.jdbc.JdbcSettings;
import io.fencelock.jdbc.KnownRows;
import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MySQL / MariaDB primitive: each operation is one autocommit {@code INSERT ... ON DUPLICATE
 * KEY UPDATE} or {@code UPDATE} on an InnoDB table, decided by the server's {@code UTC_TIMESTAMP(6)},
 * one round trip each: an acquire answers through {@code LAST_INSERT_ID}, a batch of renewals reads
 * its rows back in the same multi-statement (a shared grant's release takes a second, the procedure's). A name's row is never deleted on release, so its token
 * ({@code token + 1} under the row lock) rises across release, expiry and takeover;
 * {@link #purgeFree(Duration)} deletes rows only after raising a one-row floor above their tokens,
 * and a name without a row starts above that floor (a name whose row this backend has seen is acquired by a
 * plain {@code UPDATE}, which needs no floor: {@link KnownRows}). A grant stores its {@link LockMetadata} and its
 * server time in the row with it; renewals keep them, a release clears them. There is no release signal: waiters poll,
 * never past the holder's expiry, which every failed attempt reports. Semaphores, read-write locks
 * and the fair mutex keep their grants and waiters in a companion table changed by stored
 * procedures, one call per operation ({@link SharedTable}).
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

    static final int PURGE_BATCH = FloorPurge.PURGE_BATCH;
    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    private static final int ER_LOCK_DEADLOCK = 1213;

    private final JdbcConnections connections;
    private final JdbcFailures failures;
    private final LockTable table;
    private final boolean combined;
    private final Set<Capability> capabilities;
    private final String server;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final ServerClock serverClock;
    private final Statements sql;
    private final Renewals renewals;
    private final KnownRows knownRows = new KnownRows();

    private MySqlLockBackend(JdbcConnections connections, LockTable table, ServerFacts facts) {
        this.connections = connections;
        this.failures = connections.failures();
        this.table = table;
        this.combined = facts.multiStatements();
        this.server = facts.version();
        this.serverClock = facts.clock();
        EnumSet<Capability> caps = EnumSet.of(
                Capability.FENCING,
                Capability.SERVER_TIME,
                Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD,
                Capability.PURGE_FREE,
                Capability.METADATA,
                Capability.EXTENDABLE_TTL,
                Capability.SHARED_LOCKS,
                Capability.FAIR_ORDER,
                Capability.HAND_OVER);
        if (!facts.replicated()) { // a failover to a replica may lose the last grants and their tokens
            caps.add(Capability.LINEARIZABLE);
            if (facts.durableCommits()) {
                caps.add(Capability.DURABLE_TOKENS);
            }
        }
        this.capabilities = Collections.unmodifiableSet(caps);
        this.sql = new Statements(table);
        this.renewals = new Renewals(table, combined, serverClock);
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
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /** The grant writes the metadata and its server time in the same statement; a refusal leaves the holder's. */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        long ttlMicros = SqlTime.micros(ttl);
        Instant sent = serverClock.now();
        try (Connection c = connections.connection()) {
            boolean known = knownRows.contains(name);
            OptionalLong onRow = known ? acquireExisting(c, name, leaseId, ttlMicros, metadata) : OptionalLong.empty();
            long outcome;
            if (onRow.isPresent()) {
                outcome = onRow.getAsLong();
            } else {
                try (PreparedStatement ps = c.prepareStatement(sql.acquire, Statement.RETURN_GENERATED_KEYS)) {
                    Statements.bindAcquire(ps, name, leaseId, ttlMicros, metadata);
                    ps.executeUpdate();
                    outcome = outcome(ps);
                }
                if (!known) {
                    knownRows.add(name);
                }
            }
            if (outcome < 0 && (outcome & Statements.KIND_REFUSED_BIT) != 0) {
                // a live semaphore or read-write lock: its kind in bits 32-33, its limit below
                throw new IllegalArgumentException(SharedTable.refusal(
                        name,
                        SharedTable.KIND_CODES[(int) (outcome >>> 32) & 3],
                        (int) outcome,
                        io.fencelock.LockMode.EXCLUSIVE,
                        0));
            }
            if (outcome == 0) {
                // no hint (useAffectedRows=true): a name of another kind must still be refused outright
                table.shared.requireMutexKind(c, name);
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
                log.debug(
                        "fencelock: acquire of '{}' lost an InnoDB lock conflict ({}); not acquired",
                        name,
                        e.getErrorCode());
                return AcquireResult.held(null);
            }
            throw failures.failure("tryAcquire of '" + name + "'", e);
        } catch (NumberFormatException e) {
            throw new LockBackendException(
                    "MySQL tryAcquire of '" + name + "' on " + connections.where()
                            + ": the driver reported no usable LAST_INSERT_ID (" + Redaction.message(e.getMessage())
                            + ")",
                    e,
                    false);
        }
    }

    /**
     * The acquire as an UPDATE of a row this backend has seen; empty when no row matched: the row was purged
     * since (or, on a pool with {@code useAffectedRows=true}, the acquire was refused), and the insert decides.
     */
    private OptionalLong acquireExisting(
            Connection c, String name, String leaseId, long ttlMicros, LockMetadata metadata) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.acquireExisting, Statement.RETURN_GENERATED_KEYS)) {
            Statements.bindAcquireExisting(ps, name, leaseId, ttlMicros, metadata);
            // found rows (Connector/J's default): 1 whenever the row exists, granted or refused
            return ps.executeUpdate() == 0 ? OptionalLong.empty() : OptionalLong.of(outcome(ps));
        }
    }

    /**
     * What an acquire statement carried back in {@code LAST_INSERT_ID}: the token (positive), a refusal
     * (the top bit set, see {@link Statements}), or 0 for a refusal without a hint.
     */
    private static long outcome(PreparedStatement ps) throws SQLException {
        try (ResultSet keys = ps.getGeneratedKeys()) {
            // Connector/J lists LAST_INSERT_ID once per affected row; with useAffectedRows=true an
            // unchanged row (a refusal) is no affected row, so the refusal carries no hint
            return keys.next() ? Long.parseUnsignedLong(keys.getString(1)) : 0;
        }
    }

    /**
     * One UPDATE of the name's row (see {@link Statements}): the holder's grant becomes the new lease's, with
     * the row's next token. A lock conflict is a failure here, not a refusal: the holder may still hold.
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        long ttlMicros = SqlTime.micros(ttl);
        Instant sent = serverClock.now();
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql.handOver, Statement.RETURN_GENERATED_KEYS)) {
            Statements.bindHandOver(ps, name, fromLeaseId, leaseId, ttlMicros, metadata);
            if (ps.executeUpdate() == 0) {
                return AcquireResult.held(null);
            }
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("the hand-over changed the row but reported no token", "HY000");
                }
                // as for a grant by tryAcquire: the server's time when the statement started, plus the TTL
                return AcquireResult.granted(Long.parseUnsignedLong(keys.getString(1)), sent.plus(ttl));
            }
        } catch (SQLException e) {
            throw failures.failure("hand-over of '" + name + "'", e);
        }
    }

    /** One call of the acquire procedure (see {@link SharedTable}): one round trip. */
    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        try (Connection c = connections.connection()) {
            return table.shared.acquire(c, name, leaseId, SqlTime.micros(ttl), request, metadata);
        } catch (SQLException e) {
            if (e.getErrorCode() == ER_LOCK_DEADLOCK || e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT) {
                // the procedure rolled its transaction back whole: a definite "not acquired", as for the mutex
                log.debug(
                        "fencelock: shared acquire of '{}' lost an InnoDB lock conflict ({})", name, e.getErrorCode());
                return AcquireResult.held(null);
            }
            throw failures.failure("shared acquire of '" + name + "'", e);
        }
    }

    /** One call of the downgrade procedure: one round trip. */
    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        try (Connection c = connections.connection()) {
            return table.shared.downgrade(c, name, leaseId, SqlTime.micros(ttl));
        } catch (SQLException e) {
            throw failures.failure("downgrade of '" + name + "'", e);
        }
    }

    /** One round trip with multi-statements (see {@link Renewals}). */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        try (Connection c = connections.connection()) {
            return renewals.run(c, requests);
        } catch (SQLException e) {
            throw failures.failure("renew of " + requests.size() + " lease(s)", e);
        }
    }

    @Override
    public boolean release(String name, String leaseId) {
        return release(name, leaseId, GrantKind.EITHER);
    }

    /**
     * The mutex's UPDATE, and only when it freed nothing the release procedure, which frees a shared
     * grant or withdraws a waiter: a mutex's release is one plain statement (a procedure call costs the
     * server several times the UPDATE, even where it only looks). A lease whose grant is known takes
     * one of the two: a shared grant's release is then one round trip too.
     */
    @Override
    public boolean release(String name, String leaseId, GrantKind grant) {
        try (Connection c = connections.connection()) {
            if (grant.mayBeMutex()) {
                try (PreparedStatement mutex = c.prepareStatement(sql.release)) {
                    mutex.setString(1, name);
                    mutex.setString(2, leaseId);
                    // the holder always changes to NULL: 1 with or without useAffectedRows
                    if (mutex.executeUpdate() > 0) {
                        return true;
                    }
                }
                if (!grant.mayBeShared()) {
                    return false;
                }
            }
            // not the mutex's holder: the procedure frees a shared grant of that id, and answers whether it did
            try (PreparedStatement shared = c.prepareStatement(table.shared.release)) {
                shared.setString(1, name);
                shared.setString(2, leaseId);
                if (!shared.execute()) {
                    throw new SQLException("expected rows from: " + table.shared.release, "HY000");
                }
                try (ResultSet rs = shared.getResultSet()) {
                    return rs.next() && rs.getInt(1) > 0;
                }
            }
        } catch (SQLException e) {
            throw failures.failure("release of '" + name + "'", e);
        }
    }

    /** One statement: the name's row and its live shared holders (see {@link SharedTable#read}). */
    @Override
    public Optional<LockInfo> inspect(String name) {
        List<LockInfo> found = query("inspect of '" + name + "'", table.shared.inspect, name);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        String pattern = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%";
        return query("list of '" + prefix + "'", table.shared.list, pattern);
    }

    private List<LockInfo> query(String operation, String sql, String parameter) {
        try (Connection c = connections.connection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            Instant sent = Instant.now();
            List<LockInfo> infos = SharedTable.read(ps);
            if (infos.size() == 1) {
                serverClock.observe(sent, infos.get(0).serverTime(), Instant.now());
            }
            return infos;
        } catch (SQLException e) {
            throw failures.failure(operation, e);
        }
    }

    /** Deletes rows free for at least {@code freeFor}, raising the token floor above them first: see {@link FloorPurge}. */
    @Override
    public int purgeFree(Duration freeFor) {
        FloorPurge purge =
                new FloorPurge(table, combined, SqlTime.micros(SqlTime.requireNotNegative("freeFor", freeFor)));
        try (Connection c = connections.connection()) {
            return purge.run(c);
        } catch (SQLException e) {
            throw failures.failure("purge of free locks (" + purge.deleted + " deleted before the failure)", e);
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
        if (closed.compareAndSet(false, true)) {
            connections.close();
        }
    }

    /** The backend's own pool, null with the application's DataSource; for tests of what the pool shows. */
    DataSource ownPool() {
        return connections.ownPool();
    }

    @Override
    public String toString() {
        return "MySqlLockBackend[" + table.qualifiedTable + " on " + connections.where() + ", " + server + "]";
    }

    /** Whether the same call may succeed later: the connection, the server or a lock conflict had a moment, not a bug. */
    static boolean isRetryable(SQLException e) {
        return ConnectorJ.RETRYABLE.test(e);
    }

    /**
     * Configures a {@link MySqlLockBackend}. Either {@link #jdbcUrl(String)}, a {@code jdbc:mysql:}
     * URL or a {@code jdbc:mariadb:} one (the same URL for MySQL Connector/J, which speaks to
     * MariaDB as well), with user and password (the backend runs its own small HikariCP pool), or
     * {@link #dataSource(DataSource)}: the application's pool of Connector/J connections, which the
     * backend never closes. With {@code allowMultiQueries=true} on that pool a batch of renewals is
     * one round trip; without it, its UPDATE and its read go one after the other (two round trips).
     * With {@code useAffectedRows=true} a refused acquire cannot report the holder's remaining
     * time, so waiters poll on their backoff alone. The database in the URL holds the lock table
     * unless {@link #schema(String)} names another; the table name is a plain identifier of at most
     * 57 characters. InnoDB lock waits are capped at half the {@link #socketTimeout(Duration)}.
     */
    public static final class Builder extends JdbcBuilder<Builder> {
        private Builder() {
            super(null, "fencelock_locks", LockTable::of);
        }

        @Override
        protected String checkUrl(String jdbcUrl) {
            return ConnectorJ.url(jdbcUrl);
        }

        /**
         * Validates the settings, opens the connections, creates the tables if asked, and checks
         * them (throwing {@link IllegalStateException} saying how to fix them).
         */
        @Override
        public MySqlLockBackend build() {
            JdbcSettings settings = settings();
            LockTable lockTable = LockTable.of(settings.schema(), settings.table());
            JdbcFailures failures = new JdbcFailures("MySQL", settings.where(), ConnectorJ.RETRYABLE, true);
            JdbcConnections connections = settings.ownPool()
                    ? JdbcConnections.ownPool(
                            ConnectorJ.direct(settings),
                            settings,
                            "fencelock-mysql",
                            ConnectorJ.initSql(settings),
                            failures)
                    : JdbcConnections.application(settings.dataSource(), failures);
            ServerFacts facts = connections.startUp(
                    lockTable,
                    settings.createTable(),
                    c -> ServerFacts.requireWritableServer(c, settings.where()),
                    c -> ServerFacts.read(c, settings.where()));
            return new MySqlLockBackend(connections, lockTable, facts);
        }
    }
}
