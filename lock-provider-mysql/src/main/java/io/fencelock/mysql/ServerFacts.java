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

    static ServerFacts read(Connection c, String where) throws SQLException {
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
