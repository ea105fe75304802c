package io.fencelock.testservers.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.mysql.MariaDbServer.Source;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

class MariaDbServerTest {

    @Test
    void sharedServerAnswersDurablyAndAllowsManyConnections() throws SQLException {
        MariaDbServer server = MariaDbServer.shared();

        assertThat(MariaDbServer.shared()).isSameAs(server);
        assertThat(server.jdbcUrl()).startsWith("jdbc:mysql:");
        try (Connection c = server.connect(server.jdbcUrl())) {
            assertThat(query(c, "SELECT VERSION()")).startsWith(server.version());
            if (server.source() != Source.ENV) { // someone else's server has its own settings
                assertThat(Integer.parseInt(query(c, "SELECT @@max_connections")))
                        .isGreaterThanOrEqualTo(300);
            }
            if (server.source() == Source.BINARIES) {
                assertThat(query(c, "SELECT @@innodb_flush_log_at_trx_commit"))
                        .as("commits are durable")
                        .isEqualTo("1");
                assertThat(query(c, "SELECT @@log_bin")).isEqualTo("0");
            }
        }
        assertThat(server.description())
                .startsWith(server.product() + " ")
                .contains("source '" + server.source().key() + "'");
        if (server.password() != null && !server.password().isEmpty()) {
            assertThat(server.description()).doesNotContain(server.password());
        }
    }

    /**
     * A starting {@code mariadbd} deletes every {@code #sql*} file in its {@code tmpdir}: with a shared {@code /tmp}
     * it took another running server's on-disk temporary tables, whose next use then failed ("Error on delete of
     * '/tmp/#sql-temptable-...MAI'" in a contract suite while another module started its server; "Unknown table"
     * here). The installer's bootstrap server does the same. Each throwaway server, and its installation, has a
     * {@code tmpdir} of its own, and leaves the {@code #sql} files of the machine's {@code /tmp} alone (another
     * program's MariaDB may use it).
     */
    @Test
    void aStartingServerLeavesARunningOnesTemporaryTablesAlone() throws SQLException, IOException {
        Path othersTable = Path.of(
                System.getProperty("java.io.tmpdir"),
                "#sql-fencelock-probe-" + ProcessHandle.current().pid());
        Files.deleteIfExists(othersTable);
        Files.createFile(othersTable);
        try (MariaDbServer running = MariaDbServer.start(Source.BINARIES);
                Connection c = running.connect(running.jdbcUrl());
                Statement s = c.createStatement()) {
            s.execute("CREATE TEMPORARY TABLE on_disk (v INT) ENGINE = Aria"); // its files go to the tmpdir
            s.execute("INSERT INTO on_disk VALUES (1), (2)");
            try (MariaDbServer starting = MariaDbServer.start(Source.BINARIES)) {
                assertThat(query(c, "SELECT SUM(v) FROM on_disk")).isEqualTo("3");
                s.execute("DROP TEMPORARY TABLE on_disk");
            }
            assertThat(othersTable)
                    .as("a #sql file in the machine's temp directory")
                    .exists();
        } finally {
            Files.deleteIfExists(othersTable);
        }
    }

    @Test
    void binariesServerIsMariaDbWithAPasswordOnTcp() throws SQLException {
        try (MariaDbServer server = MariaDbServer.start(Source.BINARIES)) {
            assertThat(server.product()).isEqualTo("MariaDB");
            assertThat(server.password()).hasSize(32);
            assertThat(server.description()).contains("mariadbd").doesNotContain(server.password());
            try (Connection c = server.connect(server.jdbcUrl())) {
                assertThat(query(c, "SELECT CURRENT_USER()")).isEqualTo(MariaDbProcess.USER + "@127.0.0.1");
            }
            String wrong = server.jdbcUrl() + "?user=" + MariaDbProcess.USER + "&password=wrong";
            assertThatThrownBy(() -> DriverManager.getConnection(wrong).close())
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("Access denied");
        }
    }

    @Test
    void createdDatabasesAreSeparate() throws SQLException {
        MariaDbServer server = MariaDbServer.shared();
        String first = server.createDatabase("fixture_test");
        String second = server.createDatabase("fixture_test");

        assertThat(first).isNotEqualTo(second).startsWith("jdbc:mysql:");
        try (Connection c = server.connect(first);
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE only_here (id INT)");
        }
        try (Connection c = server.connect(second)) {
            assertThat(query(
                            c,
                            "SELECT COUNT(*) FROM information_schema.tables"
                                    + " WHERE table_schema = DATABASE() AND table_name = 'only_here'"))
                    .isEqualTo("0");
        }
    }

    @Test
    void withDatabaseReplacesOnlyTheDatabase() {
        assertThat(MariaDbServer.withDatabase("jdbc:mysql://h1:3306,h2/app?useSSL=false&user=x", "t1"))
                .isEqualTo("jdbc:mysql://h1:3306,h2/t1?useSSL=false&user=x");
        assertThat(MariaDbServer.withDatabase("jdbc:mysql://localhost", "t1")).isEqualTo("jdbc:mysql://localhost/t1");
        assertThat(MariaDbServer.withDatabase("jdbc:mysql://localhost:3306/", "t1"))
                .isEqualTo("jdbc:mysql://localhost:3306/t1");
        assertThat(MariaDbServer.withDatabase("jdbc:mysql://localhost?x=1", "t1"))
                .isEqualTo("jdbc:mysql://localhost/t1?x=1");
        assertThatThrownBy(() -> MariaDbServer.withDatabase("jdbc:mysql:app", "t1"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void binariesServerKeepsItsDataAcrossStopAndStart() throws SQLException {
        try (MariaDbServer server = MariaDbServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            createTableWithRow(server);

            control.stop();
            assertThat(control.isRunning()).isFalse();
            assertThatThrownBy(() -> server.connect(server.jdbcUrl()).close()).isInstanceOf(SQLException.class);
            control.stop(); // no-op when stopped

            control.start();
            assertThat(control.isRunning()).isTrue();
            assertThat(readRow(server)).isEqualTo("survivor");
        }
    }

    @Test
    void binariesServerRecoversFromKillWithCommittedData() throws SQLException {
        try (MariaDbServer server = MariaDbServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            createTableWithRow(server);

            try (Connection open = server.connect(server.jdbcUrl())) {
                long pid = serverPid(open);
                control.kill();
                assertThat(control.isRunning()).isFalse();
                assertThat(ProcessHandle.of(pid))
                        .as("killed and reaped, not a zombie")
                        .isEmpty();
                assertThatThrownBy(() -> query(open, "SELECT 1")).isInstanceOf(SQLException.class);
            }

            control.start();
            // committed before the crash, with innodb_flush_log_at_trx_commit=1: in the redo log
            assertThat(readRow(server)).isEqualTo("survivor");
        }
    }

    @Test
    void pausedBinariesServerAnswersNothingUntilResumed() throws SQLException {
        try (MariaDbServer server = MariaDbServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            try (Connection open = server.connect(server.jdbcUrl())) {
                control.pause();
                try {
                    assertThat(control.isRunning()).isTrue();
                    // a frozen server cannot answer at all, so the query must run into its network timeout
                    open.setNetworkTimeout(Runnable::run, 300);
                    assertThatThrownBy(() -> query(open, "SELECT 1")).isInstanceOf(SQLException.class);
                } finally {
                    control.resume();
                }
            }
            try (Connection fresh = server.connect(server.jdbcUrl())) {
                assertThat(query(fresh, "SELECT 1")).isEqualTo("1");
            }
        }
    }

    @Test
    void aForcedSourceThatIsMissingIsReportedByName() {
        String property = "fencelock.mysql.source";
        String before = System.getProperty(property);
        System.setProperty(property, "nonsense");
        try {
            assertThatThrownBy(MariaDbServer::start)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("nonsense")
                    .hasMessageContaining(String.join(", ", List.of("env", "binaries", "testcontainers")));
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
    }

    /** The server's pid, from the pid file it names. */
    private static long serverPid(Connection c) throws SQLException {
        try {
            return Long.parseLong(
                    Files.readString(Path.of(query(c, "SELECT @@pid_file"))).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void createTableWithRow(MariaDbServer server) throws SQLException {
        try (Connection c = server.connect(server.jdbcUrl());
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE kept (v VARCHAR(20)) ENGINE=InnoDB");
            s.execute("INSERT INTO kept VALUES ('survivor')");
        }
    }

    private static String readRow(MariaDbServer server) throws SQLException {
        try (Connection c = server.connect(server.jdbcUrl())) {
            return query(c, "SELECT v FROM kept");
        }
    }

    private static String query(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }
}
