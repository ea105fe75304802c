package io.fencelock.testservers.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.postgres.PostgresServer.Source;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

class PostgresServerTest {

    @Test
    void sharedServerAnswersAndAllowsManyConnections() throws SQLException {
        PostgresServer server = PostgresServer.shared();

        assertThat(PostgresServer.shared()).isSameAs(server);
        try (Connection c = server.connect(server.jdbcUrl())) {
            assertThat(query(c, "select version()")).startsWith("PostgreSQL");
            assertThat(Integer.parseInt(query(c, "show max_connections"))).isGreaterThanOrEqualTo(200);
        }
        assertThat(server.description())
                .startsWith("PostgreSQL ")
                .contains("source '" + server.source().key() + "'");
        if (server.password() != null && !server.password().isEmpty()) {
            assertThat(server.description()).doesNotContain(server.password());
        }
    }

    @Test
    void createdDatabasesAreSeparate() throws SQLException {
        PostgresServer server = PostgresServer.shared();
        String first = server.createDatabase("fixture_test");
        String second = server.createDatabase("fixture_test");

        assertThat(first).isNotEqualTo(second).startsWith("jdbc:postgresql:");
        try (Connection c = server.connect(first);
                Statement s = c.createStatement()) {
            s.execute("create table only_here (id int)");
        }
        try (Connection c = server.connect(second)) {
            assertThat(query(c, "select to_regclass('only_here') is null")).isEqualTo("t");
        }
    }

    @Test
    void withDatabaseReplacesOnlyTheDatabase() {
        assertThat(PostgresServer.withDatabase("jdbc:postgresql://h1:5432,h2/app?ssl=true&user=x", "t1"))
                .isEqualTo("jdbc:postgresql://h1:5432,h2/t1?ssl=true&user=x");
        assertThat(PostgresServer.withDatabase("jdbc:postgresql://localhost", "t1"))
                .isEqualTo("jdbc:postgresql://localhost/t1");
        assertThat(PostgresServer.withDatabase("jdbc:postgresql:app", "t1")).isEqualTo("jdbc:postgresql:t1");
    }

    @Test
    void binariesServerKeepsItsDataAcrossStopAndStart() throws SQLException {
        try (PostgresServer server = PostgresServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            createTableWithRow(server);

            control.stop();
            assertThat(control.isRunning()).isFalse();
            assertThatThrownBy(() -> server.connect(server.jdbcUrl()).close()).isInstanceOf(SQLException.class);

            control.start();
            assertThat(control.isRunning()).isTrue();
            assertThat(readRow(server)).isEqualTo("survivor");
        }
    }

    @Test
    void binariesServerRecoversFromKill() throws SQLException {
        try (PostgresServer server = PostgresServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            createTableWithRow(server);

            try (Connection open = server.connect(server.jdbcUrl())) {
                control.kill();
                assertThat(control.isRunning()).isFalse();
                assertThatThrownBy(() -> query(open, "select 1")).isInstanceOf(SQLException.class);
            }

            control.start();
            assertThat(readRow(server)).isEqualTo("survivor"); // committed before the crash: in the WAL
        }
    }

    @Test
    void pausedBinariesServerAnswersNothingUntilResumed() throws SQLException {
        try (PostgresServer server = PostgresServer.start(Source.BINARIES)) {
            ServerControl control = server.control().orElseThrow();
            try (Connection open = server.connect(server.jdbcUrl())) {
                control.pause();
                try {
                    assertThat(control.isRunning()).isTrue();
                    // a frozen server cannot answer at all, so the query must run into its network timeout
                    open.setNetworkTimeout(Runnable::run, 300);
                    assertThatThrownBy(() -> query(open, "select 1")).isInstanceOf(SQLException.class);
                } finally {
                    control.resume();
                }
            }
            try (Connection fresh = server.connect(server.jdbcUrl())) {
                assertThat(query(fresh, "select 1")).isEqualTo("1");
            }
        }
    }

    @Test
    void embeddedSourceWorksWhenForcedByProperty() throws SQLException {
        String property = "fencelock.postgres.source";
        String before = System.getProperty(property);
        System.setProperty(property, "embedded");
        try (PostgresServer server = PostgresServer.start()) {
            assertThat(server.source()).isEqualTo(Source.EMBEDDED);
            assertThat(server.control()).isEmpty();
            assertThat(server.description()).contains("embedded");
            try (Connection c = server.connect(server.createDatabase("embedded_test"))) {
                assertThat(query(c, "select version()")).startsWith("PostgreSQL");
            }
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
    }

    private static void createTableWithRow(PostgresServer server) throws SQLException {
        try (Connection c = server.connect(server.jdbcUrl());
                Statement s = c.createStatement()) {
            s.execute("create table kept (v text)");
            s.execute("insert into kept values ('survivor')");
        }
    }

    private static String readRow(PostgresServer server) throws SQLException {
        try (Connection c = server.connect(server.jdbcUrl())) {
            return query(c, "select v from kept");
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
