package io.fencelock.fencing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;

/**
 * One fenced write at a time on PostgreSQL or MySQL/MariaDB: the highest accepted token of each
 * resource lives in a small table, and a write runs only if its token is at least that one.
 *
 * <pre>{@code
 * JdbcFence fence = JdbcFence.builder(SqlDialect.POSTGRESQL).build();   // table fencelock_fences
 * fence.createTable(connection);                                           // or run ddl() in a migration
 * fence.write(connection, "invoice:42", lease.fencingToken(), c -> {
 *     try (PreparedStatement ps = c.prepareStatement("UPDATE invoices SET total = ? WHERE id = 42")) {
 *         ps.setBigDecimal(1, total);
 *         return ps.executeUpdate();
 *     }
 * });                                                                      // StaleTokenException if stale
 * }</pre>
 *
 * <p>The check is one statement, race-free on the server: an upsert whose update branch is
 * conditional ({@code ... WHERE fence_token <= ?}); it leaves the resource's row locked until the
 * transaction ends, so the write that follows in the same transaction is ordered after every
 * write with a lower token and before every write with a higher one. A refused check writes
 * nothing and the work is not run.
 *
 * <p>On an autocommit connection {@link #write} runs the check and the work in a transaction of
 * its own and commits it (retrying the check alone after a deadlock, which InnoDB can report for
 * concurrent first writes of one resource). On a connection already in a transaction it runs both
 * in that transaction and leaves the commit to the caller; a refusal leaves the transaction
 * usable. A writer frozen inside its transaction keeps the row locked and so holds back the next
 * holder's write until the server ends that transaction: set {@code idle_in_transaction_session_timeout}
 * (PostgreSQL) or {@code idle_transaction_timeout} / {@code wait_timeout} (MariaDB, MySQL).
 *
 * <p>On MySQL the check reports its outcome through {@code LAST_INSERT_ID}, so the session's
 * {@code LAST_INSERT_ID()} is the check's until the work's own inserts set it. Thread-safe; holds
 * no connection of its own.
 */
public final class JdbcFence {
    /** The default name of the table of tokens. */
    public static final String DEFAULT_TABLE = "fencelock_fences";
    /** The longest resource key, the width of the table's key column. */
    public static final int MAX_RESOURCE_LENGTH = 255;
    /** The top bit of an unsigned LAST_INSERT_ID marks a refusal; tokens are below it. */
    private static final String REFUSED = "9223372036854775808";
    /** Attempts of the check in a transaction of our own when the server reports a deadlock. */
    private static final int DEADLOCK_ATTEMPTS = 5;
    /** What a claim returns when it accepted the token; otherwise the current token, or 0 if unknown. */
    private static final long ACCEPTED = -1;

    private final SqlDialect dialect;
    private final String qualifiedTable;
    private final String ddl;
    private final String claimSql;
    private final String currentSql;

    private JdbcFence(SqlDialect dialect, String schema, String table) {
        this.dialect = dialect;
        this.qualifiedTable = dialect.qualified(schema, "table", table);
        String t = qualifiedTable;
        if (dialect == SqlDialect.POSTGRESQL) {
            this.ddl =
                    "CREATE TABLE IF NOT EXISTS " + t + " (resource VARCHAR(" + MAX_RESOURCE_LENGTH + ") PRIMARY KEY,"
                            + " fence_token BIGINT NOT NULL CHECK (fence_token > 0), accepted_writes BIGINT NOT NULL)";
            // RETURNING yields a row only when the insert or the conditional update happened
            this.claimSql = "INSERT INTO " + t + " AS f (resource, fence_token, accepted_writes) VALUES (?, ?, 1)"
                    + " ON CONFLICT (resource) DO UPDATE SET fence_token = EXCLUDED.fence_token,"
                    + " accepted_writes = f.accepted_writes + 1 WHERE f.fence_token <= EXCLUDED.fence_token"
                    + " RETURNING f.fence_token";
        } else {
            this.ddl = "CREATE TABLE IF NOT EXISTS " + t + " (resource VARCHAR(" + MAX_RESOURCE_LENGTH + ")"
                    + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,"
                    + " fence_token BIGINT NOT NULL, accepted_writes BIGINT NOT NULL) ENGINE = InnoDB";
            // Affected-row counts cannot tell an insert from a refusal (Connector/J reports found
            // rows by default), so LAST_INSERT_ID carries the outcome back in the OK packet: the
            // token when accepted, REFUSED plus the current token when not. Assignments run left to
            // right, so accepted_writes still sees the old token; it changes on every accepted write,
            // so an accepted equal token is an affected row with or without useAffectedRows.
            this.claimSql =
                    "INSERT INTO " + t + " (resource, fence_token, accepted_writes) VALUES (?, LAST_INSERT_ID(?), 1)"
                            + " ON DUPLICATE KEY UPDATE"
                            + " accepted_writes = IF(fence_token <= ?, accepted_writes + 1, accepted_writes),"
                            + " fence_token = IF(fence_token <= ?, LAST_INSERT_ID(?),"
                            + " fence_token + 0 * LAST_INSERT_ID(" + REFUSED + " + fence_token))";
        }
        this.currentSql = "SELECT fence_token FROM " + t + " WHERE resource = ?";
    }

    /** A fence on {@code dialect}'s database, in the table {@value #DEFAULT_TABLE} unless the builder names another. */
    public static Builder builder(SqlDialect dialect) {
        return new Builder(Checks.notNull("dialect", dialect));
    }

    /** The DDL of the table of tokens ({@code CREATE TABLE IF NOT EXISTS}), for a migration tool. */
    public String ddl() {
        return ddl;
    }

    /** Creates the table of tokens if it does not exist. */
    public void createTable(Connection connection) throws SQLException {
        Checks.notNull("connection", connection);
        try (Statement s = connection.createStatement()) {
            s.execute(ddl);
        }
    }

    /**
     * Runs {@code work} on {@code connection} if {@code token} is at least the highest token
     * accepted for {@code resource}, and records {@code token} as the highest, in one transaction
     * (see the class comment for whose).
     *
     * @return what {@code work} returned
     * @throws StaleTokenException when {@code token} is lower; nothing was written and {@code work} did not run
     * @throws IllegalArgumentException for a null connection or work, a bad key or a non-positive token, before any I/O
     */
    public <T> T write(Connection connection, String resource, long token, Work<T> work) throws SQLException {
        Checks.notNull("connection", connection);
        Checks.key("resource key", resource, MAX_RESOURCE_LENGTH);
        Checks.token(token);
        Checks.notNull("work", work);
        if (!connection.getAutoCommit()) {
            claim(connection, resource, token);
            return work.run(connection);
        }
        connection.setAutoCommit(false);
        try {
            claimRetryingDeadlocks(connection, resource, token);
            T result = work.run(connection);
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException | Error e) {
            rollbackQuietly(connection, e);
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    /**
     * The check alone, in the caller's transaction: records {@code token} for {@code resource} if it
     * is at least the highest accepted one, and keeps the resource's row locked until the caller's
     * transaction ends. Run the write after it in the same transaction. On an autocommit connection
     * it only records the token: use {@link #write} there.
     *
     * @throws StaleTokenException when {@code token} is lower; nothing was written
     */
    public void claim(Connection connection, String resource, long token) throws SQLException {
        Checks.notNull("connection", connection);
        Checks.key("resource key", resource, MAX_RESOURCE_LENGTH);
        Checks.token(token);
        long current = dialect == SqlDialect.POSTGRESQL
                ? claimPostgres(connection, resource, token)
                : claimMySql(connection, resource, token);
        if (current != ACCEPTED) {
            throw new StaleTokenException(
                    resource,
                    token,
                    current > 0 ? current : currentToken(connection, resource).orElse(0));
        }
    }

    /** The highest token accepted for {@code resource}, empty when none was. */
    public OptionalLong currentToken(Connection connection, String resource) throws SQLException {
        Checks.notNull("connection", connection);
        Checks.key("resource key", resource, MAX_RESOURCE_LENGTH);
        try (PreparedStatement ps = connection.prepareStatement(currentSql)) {
            ps.setString(1, resource);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    private long claimPostgres(Connection connection, String resource, long token) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(claimSql)) {
            ps.setString(1, resource);
            ps.setLong(2, token);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? ACCEPTED : 0;
            }
        }
    }

    private long claimMySql(Connection connection, String resource, long token) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(claimSql, Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, resource);
            for (int i = 2; i <= 5; i++) {
                ps.setLong(i, token);
            }
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                // no key: an unchanged row under useAffectedRows=true, i.e. a refusal
                if (!keys.next()) {
                    return 0;
                }
                String value = keys.getString(1);
                // Connector/J reports the unsigned value; other drivers may hand the same bits signed
                long outcome = value.startsWith("-") ? Long.parseLong(value) : Long.parseUnsignedLong(value);
                return outcome < 0 ? outcome & Long.MAX_VALUE : ACCEPTED;
            }
        }
    }

    private void claimRetryingDeadlocks(Connection connection, String resource, long token) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                claim(connection, resource, token);
                return;
            } catch (SQLException e) {
                // a deadlock rolled back our own transaction, in which nothing else ran yet
                if (attempt >= DEADLOCK_ATTEMPTS
                        || e.getSQLState() == null
                        || !e.getSQLState().startsWith("40")) {
                    throw e;
                }
                connection.rollback();
            }
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "JdbcFence[" + dialect + " " + qualifiedTable + "]";
    }

    /** The write to run under the fence, on the connection it was given. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Where the tokens live; validated on {@link #build()}. */
    public static final class Builder {
        private final SqlDialect dialect;
        private String schema;
        private String table = DEFAULT_TABLE;

        private Builder(SqlDialect dialect) {
            this.dialect = dialect;
        }

        /** The schema (MySQL: database) of the table; by default the connection's current one. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** @throws IllegalArgumentException when the schema or table is not a plain SQL identifier */
        public JdbcFence build() {
            return new JdbcFence(dialect, schema, table);
        }
    }
}
