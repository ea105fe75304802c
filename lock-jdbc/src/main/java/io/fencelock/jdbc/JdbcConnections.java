package io.fencelock.jdbc;

import io.fencelock.LockInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Where a JDBC backend's connections come from: its own HikariCP pool over a DataSource that
 * holds the URL and the credentials (so that the pool's configuration, which HikariCP logs at
 * DEBUG, names none of them), or the application's DataSource, which stays the application's to
 * close. Every connection handed out is in autocommit, whatever the pool's default.
 */
public final class JdbcConnections implements AutoCloseable {
    private final DataSource dataSource;
    private final DataSource ownPool; // null with the application's DataSource; never typed as HikariCP's
    private final ConnectionGate gate; // the own pool's; null with the application's DataSource
    private final JdbcFailures failures;
    private final String url; // the raw URL, only to redact its echoes from start-up failures
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcConnections(
            DataSource dataSource, DataSource ownPool, ConnectionGate gate, JdbcFailures failures, String url) {
        this.dataSource = dataSource;
        this.ownPool = ownPool;
        this.gate = gate;
        this.failures = failures;
        this.url = url;
    }

    /** The application's DataSource; no pool code is loaded, so HikariCP may be absent. */
    public static JdbcConnections application(DataSource dataSource, JdbcFailures failures) {
        return new JdbcConnections(dataSource, null, null, failures, null);
    }

    /**
     * The backend's own pool of {@code settings.poolSize()} connections from {@code direct}, which
     * makes connections to {@code settings.jdbcUrl()}, behind a {@link ConnectionGate} that admits as many
     * borrowers as it has connections; {@code initSql} (or null) runs on each new connection. Opens the
     * first connection now: a failure to connect is a {@code LockBackendException}
     * ({@link JdbcFailures#failure(String, SQLException, String)}, operation "connect").
     */
    public static JdbcConnections ownPool(
            DataSource direct, JdbcSettings settings, String poolName, String initSql, JdbcFailures failures) {
        DataSource pool;
        try {
            pool = OwnPool.open(direct, poolName, settings, initSql, failures);
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException(
                    "a backend built from a jdbcUrl runs its own HikariCP pool, and HikariCP"
                            + " (com.zaxxer:HikariCP) is not on the class path (on the module path: not resolved, add"
                            + " --add-modules com.zaxxer.hikari): add it, or build with dataSource(...)",
                    e);
        }
        ConnectionGate gate =
                new ConnectionGate(settings.poolSize(), OwnPool.connectionTimeoutMillis(settings), poolName);
        return new JdbcConnections(pool, pool, gate, failures, settings.jdbcUrl());
    }

    /** A connection in autocommit (an application's pool may hand out transactional ones). */
    public Connection connection() throws SQLException {
        Connection c = gate != null ? gate.borrow(dataSource) : dataSource.getConnection();
        try {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * Runs a start-up {@code check} on one connection (create the table, verify it, learn about the
     * server). A failure closes the own pool and is thrown as a {@code LockBackendException} naming
     * {@code what}, the URL's echoes redacted; the check's own exceptions (an
     * {@link IllegalStateException} saying how to fix the table) pass as they are.
     */
    public <T> T startUp(String what, Check<T> check) {
        try (Connection c = connection()) {
            return check.run(c);
        } catch (SQLException e) {
            close();
            throw failures.failure(what, e, url);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Runs a query of {@link LockInfoRows}' columns with one string parameter on a connection of
     * its own; {@code timed} (or null) learns when the statement went out and its answer was read.
     */
    public List<LockInfo> lockInfos(String operation, String sql, String parameter, SqlTime.Reader time, Timed timed) {
        try (Connection c = connection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            Instant sent = Instant.now();
            List<LockInfo> infos = LockInfoRows.read(ps, time);
            if (timed != null) {
                timed.answered(sent, infos, Instant.now());
            }
            return infos;
        } catch (SQLException e) {
            throw failures.failure(operation, e);
        }
    }

    /** Learns the round trip of a query (local wall-clock times), for a backend that samples the server's clock. */
    @FunctionalInterface
    public interface Timed {
        void answered(Instant sent, List<LockInfo> rows, Instant received);
    }

    /**
     * The start-up of a backend: on one connection, runs {@code first} (a server the backend must not write on
     * is refused before anything is created), creates the lock table if asked, verifies it, then runs {@code
     * then} (to learn about the server), with {@link #startUp(String, Check)}'s handling of failures.
     */
    public <T> T startUp(JdbcLockTable table, boolean createTable, Requirement first, Check<T> then) {
        return startUp("start-up check of " + table.qualifiedName(), c -> {
            first.check(c);
            if (createTable) {
                table.create(c);
            }
            table.verify(c);
            return then.run(c);
        });
    }

    /** A start-up check on one connection. */
    @FunctionalInterface
    public interface Check<T> {
        T run(Connection c) throws SQLException;
    }

    /** What the server must be for the backend to write on it: refuses it with an {@link IllegalStateException}. */
    @FunctionalInterface
    public interface Requirement {
        void check(Connection c) throws SQLException;
    }

    public JdbcFailures failures() {
        return failures;
    }

    /** The server, without credentials. */
    public String where() {
        return failures.where();
    }

    /** The backend's own pool, null with the application's DataSource (for tests of what the pool shows). */
    public DataSource ownPool() {
        return ownPool;
    }

    /**
     * Borrowers the own pool's gate would still admit now (its size when none is in); -1 with the
     * application's DataSource (for tests).
     */
    public int freeAdmissions() {
        return gate == null ? -1 : gate.free();
    }

    /** Closes the own pool; the application's DataSource is left alone. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && ownPool instanceof AutoCloseable pool) {
            try {
                pool.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the pool of " + where() + " failed", e);
            }
        }
    }
}
