package io.fencelock.mysql;

import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.Redaction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the start-up check learned about the server: its product and version, whether a commit
 * survives a crash (only then are tokens durable), whether replicas were connected (then a failover
 * may lose grants), whether the connections take multi-statements, and the first samples of its clock.
 */
record ServerFacts(
        String version, boolean durableCommits, boolean replicated, boolean multiStatements, ServerClock clock) {
    private static final Logger log = LoggerFactory.getLogger(MySqlLockBackend.class);

    /**
     * The own pool's sql_mode: the statements' meaning must not depend on the server's or the URL's. It keeps
     * {@code NO_BACKSLASH_ESCAPES} as the session had it, because Connector/J learns that mode once, when it
     * connects, and escapes the values of client-side statements (the multi-statement renewals and purges) by it.
     */
    static final String OWN_SQL_MODE = "IF(FIND_IN_SET('NO_BACKSLASH_ESCAPES', @@SESSION.sql_mode) > 0,"
            + " 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION,NO_BACKSLASH_ESCAPES',"
            + " 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION')";

    /**
     * The sql_modes under which the lock statements mean something else (MariaDB's; MySQL has neither), each with
     * why. {@code ORACLE} implies the first, and a session cannot have {@code ORACLE} without it.
     */
    static final Map<String, String> MODES_THAT_BREAK_THE_STATEMENTS = Map.of(
            "SIMULTANEOUS_ASSIGNMENT",
            "it evaluates every assignment on the row as it was, while the lock statements assign left to right (the"
                    + " token is decided on the old holder, the expiry on the new one): a grant over a released or"
                    + " expired row would keep the old expiry, and a rival would take the lock its holder still holds",
            "EMPTY_STRING_IS_NULL",
            "it reads the literal '' as NULL, and the statements compare with it: a purge would find nothing to"
                    + " delete");

    /**
     * Refuses a session whose sql_mode has one of {@link #MODES_THAT_BREAK_THE_STATEMENTS}. The own pool sets
     * {@link #OWN_SQL_MODE}; an application's pool must not carry them. Stored procedures keep the sql_mode they
     * were created with, so this runs before the tables are created too.
     */
    static void requireModesTheStatementsMean(Connection c, String where) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT @@SESSION.sql_mode")) {
            String mode = rs.next() ? rs.getString(1) : null;
            if (mode == null) {
                return;
            }
            List<String> modes = List.of(mode.toUpperCase(Locale.ROOT).split(","));
            for (Map.Entry<String, String> breaking : new TreeMap<>(MODES_THAT_BREAK_THE_STATEMENTS).entrySet()) {
                if (modes.contains(breaking.getKey())) {
                    throw new IllegalStateException("the connections to " + where + " run with sql_mode " + mode
                            + ", and " + breaking.getKey() + " breaks the lock statements: " + breaking.getValue()
                            + "; take it out of the DataSource's sessions (ORACLE brings SIMULTANEOUS_ASSIGNMENT"
                            + " with it), e.g. with the pool's init SQL SET SESSION sql_mode ="
                            + " 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION', or let fencelock open its own pool"
                            + " (jdbcUrl), which sets its sessions' sql_mode");
                }
            }
        }
    }

    /**
     * Refuses a server that is {@code read_only} (a replica, or a primary being switched over): fencelock writes
     * its locks on the primary. A user with {@code SUPER} (MariaDB's {@code READ_ONLY ADMIN}) may still write on
     * it, and then a replica's lock rows and token floor differ from its primary's: a failover to it, or the
     * primary's next change of the same row in its replication stream, loses grants or stops the replication.
     * A replica whose {@code read_only} is off (MariaDB's default) is refused as well, by its running replication:
     * MariaDB's {@code Slaves_running}, a status any user may read, counts its connections to primaries whose
     * replication threads run. MySQL has no such status for every user, and a replica with its replication
     * stopped is not told from a primary. The start-up's first check, before the tables are created or verified.
     */
    static void requireWritableServer(Connection c, String where) throws SQLException {
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT @@GLOBAL.read_only")) {
                if (rs.next() && rs.getBoolean(1)) {
                    throw new IllegalStateException(where + " is read_only (a replica, or a primary being switched"
                            + " over): fencelock writes its locks on the primary; name the primary's address");
                }
            }
            try (ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Slaves_running'")) {
                long running = rs.next() ? rs.getLong(2) : 0;
                if (running > 0) {
                    throw new IllegalStateException(where + " is a replica (Slaves_running = " + running + "),"
                            + " though not read_only: fencelock writes its locks on the primary; name the primary's"
                            + " address");
                }
            }
        }
    }

    /**
     * A value with a backslash before a quote: a driver that escapes it for the other reading of backslashes than
     * the session's sends a statement the server cannot parse, or that reads back something else.
     */
    static final String ESCAPING_PROBE = "fencelock\\'probe";

    /**
     * Refuses connections whose driver escapes a client-side statement's values otherwise than the session reads
     * them. Connector/J learns {@code NO_BACKSLASH_ESCAPES} once, when it connects; a pool that sets or clears it
     * later (its init SQL) leaves the driver escaping for the other mode, and a value with a backslash or a quote
     * (lock metadata is the application's text) could then end its string literal early. Probed with a prepared
     * statement as the connections prepare one: on the client by Connector/J's default, where values are escaped
     * into the text (on the server, with {@code useServerPrepStmts}, they are bound and cannot be misread).
     */
    static void requireMatchingEscapes(Connection c, String where) throws SQLException {
        String echoed;
        try (PreparedStatement ps = c.prepareStatement("SELECT ?")) {
            ps.setString(1, ESCAPING_PROBE);
            try (ResultSet rs = ps.executeQuery()) {
                echoed = rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            if (e.getSQLState() == null || !e.getSQLState().startsWith("42")) {
                throw e; // not the probe's syntax: a connection's trouble, reported as such
            }
            echoed = null;
        }
        if (!ESCAPING_PROBE.equals(echoed)) {
            throw new IllegalStateException("the connections to " + where + " escape a statement's values otherwise"
                    + " than their sessions read them: a value with a backslash and a quote did not come back as sent"
                    + " (sql_mode NO_BACKSLASH_ESCAPES set or cleared after the driver connected, e.g. by a pool's init"
                    + " SQL; Connector/J learns it only when it connects). Set it in the server's configuration, or"
                    + " not at all");
        }
    }

    static ServerFacts read(Connection c, String where) throws SQLException {
        requireModesTheStatementsMean(c, where);
        requireMatchingEscapes(c, where);
        String version = null;
        String flush = null;
        boolean binaryLog = false;
        String syncBinlog = null;
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
            try (ResultSet rs = s.executeQuery(
                    "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog")) {
                if (rs.next()) {
                    flush = rs.getString(1);
                    binaryLog = rs.getBoolean(2);
                    syncBinlog = rs.getString(3);
                }
            }
        }
        // innodb_flush_log_at_trx_commit 0 or 2: a commit may be lost in a crash, and a token issued before it
        // issued again. With the binary log on, a crash's recovery keeps only the transactions the binary log has,
        // so it must be synced at each commit too (sync_binlog=1; MariaDB's default is 0).
        boolean durable = "1".equals(flush) && (!binaryLog || "1".equals(syncBinlog));
        if (!durable) {
            log.warn(
                    "fencelock: {} runs with innodb_flush_log_at_trx_commit={}, log_bin={}, sync_binlog={}: a crash"
                            + " may lose the last grants, so DURABLE_TOKENS is not declared (for tokens that survive"
                            + " a crash set innodb_flush_log_at_trx_commit=1 and, with the binary log on,"
                            + " sync_binlog=1)",
                    where,
                    flush,
                    binaryLog ? "ON" : "OFF",
                    syncBinlog);
        }
        boolean replicated = replicasConnected(c, where);
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
        return new ServerFacts(product(version), durable, replicated, multi, clock);
    }

    /**
     * Whether replicas read this server's binary log at start-up: MariaDB's {@code Slaves_connected}, a status any
     * user may read. Replication is asynchronous (semi-synchronous replication too falls back to it after
     * {@code rpl_semi_sync_master_timeout}), so a replica promoted by a failover may lack the last grants: those
     * locks would be granted again, and the token floor's last values issued twice. MySQL has no such status
     * (its replicas are listed only to a replication administrator), so there this answers false.
     */
    private static boolean replicasConnected(Connection c, String where) throws SQLException {
        long replicas = 0;
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Slaves_connected'")) {
            if (rs.next()) {
                replicas = rs.getLong(2);
            }
        }
        if (replicas > 0) {
            log.warn(
                    "fencelock: {} has {} replica(s) connected: a failover to one of them can lose the last grants"
                            + " and issue their tokens again, so LINEARIZABLE and DURABLE_TOKENS are not declared",
                    where,
                    replicas);
        }
        return replicas > 0;
    }

    private static String product(String version) {
        String v = version == null ? "unknown" : version;
        return (v.toLowerCase(Locale.ROOT).contains("mariadb") ? "MariaDB " : "MySQL ") + v.split("-")[0];
    }
}
