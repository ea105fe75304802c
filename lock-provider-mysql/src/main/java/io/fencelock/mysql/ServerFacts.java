package io.fencelock.mysql;

import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.Redaction;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the start-up check learned about the server: its product and version, whether a commit
 * survives a crash (only then are tokens durable), whether the connections take multi-statements,
 * and the first samples of its clock.
 */
record ServerFacts(String version, boolean durableCommits, boolean multiStatements, ServerClock clock) {
    private static final Logger log = LoggerFactory.getLogger(MySqlLockBackend.class);

    /** MariaDB's sql_mode that evaluates every assignment of an UPDATE on the row as it was (MySQL has none such). */
    static final String SIMULTANEOUS_ASSIGNMENT = "SIMULTANEOUS_ASSIGNMENT";

    /** The session's sql_mode without {@link #SIMULTANEOUS_ASSIGNMENT}, as an SQL expression. */
    static final String WITHOUT_SIMULTANEOUS_ASSIGNMENT =
            "TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), '," + SIMULTANEOUS_ASSIGNMENT
                    + ",', ','))";

    /**
     * Refuses a session whose sql_mode has {@link #SIMULTANEOUS_ASSIGNMENT}. The acquire's {@code ON DUPLICATE KEY
     * UPDATE} and the hand-over and renewal updates assign left to right, each assignment seeing the ones before it
     * (the token is decided on the old holder, the expiry on the new one); evaluated all on the old row, a grant
     * over a released or expired row would keep the old expiry and a rival would be granted at once. The own pool
     * takes the mode out of its sessions; an application's pool must not put it in. Stored procedures keep the
     * sql_mode they were created with, so this runs before the tables are created too.
     */
    static void requireLeftToRight(Connection c, String where) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT @@SESSION.sql_mode")) {
            String mode = rs.next() ? rs.getString(1) : null;
            if (mode != null
                    && (',' + mode.toUpperCase(Locale.ROOT) + ',').contains(',' + SIMULTANEOUS_ASSIGNMENT + ',')) {
                throw new IllegalStateException("the connections to " + where + " run with sql_mode " + mode + ": "
                        + SIMULTANEOUS_ASSIGNMENT + " would let a rival take a lock its holder still holds (the lock"
                        + " statements assign left to right); take it out of the DataSource's sessions, e.g. with the"
                        + " pool's init SQL SET SESSION sql_mode = " + WITHOUT_SIMULTANEOUS_ASSIGNMENT
                        + ", or let fencelock open its own pool (jdbcUrl), which does so");
            }
        }
    }

    static ServerFacts read(Connection c, String where) throws SQLException {
        requireLeftToRight(c, where);
        String version = null;
        String flush = null;
        ServerClock clock = new ServerClock();
        try (Statement s = c.createStatement()) {
            for (int sample = 0; sample < 3; sample++) { // the first may pay for warming up
                Instant sent = Instant.now();
                try (ResultSet rs = s.executeQuery("SELECT VERSION(), UTC_TIMESTAMP(6)")) {
                    rs.next();
                    version = rs.getString(1);
                    clock.observe(sent, SqlTime.UTC_DATETIME.read(rs, 2), Instant.now());
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
            log.warn(
                    "fencelock: {} runs with innodb_flush_log_at_trx_commit={}: a crash may lose the last grants,"
                            + " so DURABLE_TOKENS is not declared (set it to 1 for tokens that survive a crash)",
                    where,
                    flush);
        }
        boolean multi;
        try (Statement s = c.createStatement()) {
            s.execute("SELECT 1; SELECT 2");
            multi = s.getMoreResults();
        } catch (SQLException e) {
            multi = false;
            log.info(
                    "fencelock: the connections to {} do not allow multi-statements ({}); a batch of renewals"
                            + " takes two round trips instead of one (add allowMultiQueries=true to save one)",
                    where,
                    Redaction.message(e.getMessage()));
        }
        return new ServerFacts(product(version), durable, multi, clock);
    }

    private static String product(String version) {
        String v = version == null ? "unknown" : version;
        return (v.toLowerCase(Locale.ROOT).contains("mariadb") ? "MariaDB " : "MySQL ") + v.split("-")[0];
    }
}
