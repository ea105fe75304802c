package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link TableFence}'s trigger on a real database: the same promises on PostgreSQL and MariaDB. */
abstract class TableFenceContract {
    private FencedTarget.Spec spec;

    /** TRIGGER_POSTGRES or TRIGGER_MYSQL (the table fenced_doc, fenced by prepare()). */
    abstract FencedTarget.Kind kind();

    @BeforeEach
    void freshDatabase() throws SQLException {
        spec = Backends.fresh(kind());
    }

    private int update(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            return s.executeUpdate(sql);
        }
    }

    private String row(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT body, fence_token FROM fenced_doc WHERE id = 'r'")) {
            return rs.next() ? rs.getString(1) + "@" + rs.getLong(2) : null;
        }
    }

    @Test
    void theTriggerRefusesALowerTokenWithItsSqlState() throws SQLException {
        try (Connection c = spec.jdbc()) {
            update(c, "INSERT INTO fenced_doc (id, body, fence_token) VALUES ('r', 'v5', 5)");
            update(c, "UPDATE fenced_doc SET body = 'v5b', fence_token = 5 WHERE id = 'r'");
            update(c, "UPDATE fenced_doc SET body = 'v8', fence_token = 8 WHERE id = 'r'");
            SQLException e = catchThrowableOfType(
                    SQLException.class,
                    () -> update(c, "UPDATE fenced_doc SET body = 'stale', fence_token = 7 WHERE id = 'r'"));
            assertThat(e.getSQLState()).isEqualTo(TableFence.STALE_TOKEN_SQLSTATE);
            assertThat(TableFence.isStaleToken(e)).isTrue();
            assertThat(e.getMessage()).contains("stale fencing token 7").contains("8");
            assertThat(row(c)).isEqualTo("v8@8");
        }
    }

    @Test
    void writesWithoutAPositiveTokenAreRefused() throws SQLException {
        try (Connection c = spec.jdbc()) {
            SQLException missing = catchThrowableOfType(
                    SQLException.class, () -> update(c, "INSERT INTO fenced_doc (id, body) VALUES ('r', 'none')"));
            assertThat(missing.getSQLState()).isEqualTo(TableFence.MISSING_TOKEN_SQLSTATE);
            assertThat(TableFence.isMissingToken(missing)).isTrue();
            assertThatThrownBy(
                            () -> update(c, "INSERT INTO fenced_doc (id, body, fence_token) VALUES ('r', 'zero', 0)"))
                    .satisfies(t -> assertThat(TableFence.isMissingToken(t)).isTrue());
            assertThat(row(c)).isNull();
        }
    }

    @Test
    void anUpdateThatLeavesTheTokenKeepsTheRowsToken() throws SQLException {
        // documented: the fence compares tokens; a writer must set the column to be fenced
        try (Connection c = spec.jdbc()) {
            update(c, "INSERT INTO fenced_doc (id, body, fence_token) VALUES ('r', 'v5', 5)");
            update(c, "UPDATE fenced_doc SET body = 'untokened' WHERE id = 'r'");
            assertThat(row(c)).isEqualTo("untokened@5");
        }
    }

    @Test
    void applyingTwiceChangesNothingAndRowsFromBeforeTheFenceAcceptAnyToken() throws SQLException {
        try (Connection c = spec.jdbc();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE legacy (id INT PRIMARY KEY, body VARCHAR(20))");
            s.execute("INSERT INTO legacy (id, body) VALUES (1, 'old')");
            TableFence fence = TableFence.builder(spec.dialect())
                    .table("legacy")
                    .column("tok")
                    .build();
            fence.apply(c);
            fence.apply(c);
            assertThat(s.executeUpdate("UPDATE legacy SET body = 'new', tok = 3 WHERE id = 1"))
                    .isEqualTo(1);
            assertThatThrownBy(() -> s.executeUpdate("UPDATE legacy SET tok = 2 WHERE id = 1"))
                    .satisfies(t -> assertThat(TableFence.isStaleToken(t)).isTrue());
        }
    }

    @Test
    void theScriptIsWhatApplyRuns() {
        TableFence fence = TableFence.builder(spec.dialect())
                .schema("app")
                .table("Invoices")
                .build();
        String script = fence.script();
        for (String statement : fence.statements()) {
            assertThat(script).contains(statement);
        }
        assertThat(script).contains(TableFence.STALE_TOKEN_SQLSTATE).contains("BEFORE");
        if (spec.dialect() == SqlDialect.POSTGRESQL) {
            assertThat(script).contains("\"app\".\"invoices\"").contains("BEFORE INSERT OR UPDATE");
        } else {
            assertThat(script).contains("`app`.`Invoices`").startsWith("DELIMITER //");
        }
    }

    @Test
    void identifiersAreValidated() {
        assertThatThrownBy(() ->
                        TableFence.builder(spec.dialect()).table("doc\"; DROP").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table 'doc\"; DROP'")
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> TableFence.builder(spec.dialect())
                        .table("doc")
                        .column("fence token")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token column 'fence token'");
        assertThatThrownBy(() -> TableFence.builder(spec.dialect()).table(null).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table null");
        String longest = "t".repeat(63);
        assertThatThrownBy(
                        () -> TableFence.builder(spec.dialect()).table(longest).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("derived from table")
                .hasMessageContaining("63 characters");
    }

    @Test
    void theFenceHoldsForAnUpsertToo() throws SQLException {
        String upsert = spec.dialect() == SqlDialect.POSTGRESQL
                ? "INSERT INTO fenced_doc (id, body, fence_token) VALUES ('r', ?, ?)"
                        + " ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, fence_token = EXCLUDED.fence_token"
                : "INSERT INTO fenced_doc (id, body, fence_token) VALUES ('r', ?, ?)"
                        + " ON DUPLICATE KEY UPDATE body = VALUES(body), fence_token = VALUES(fence_token)";
        try (Connection c = spec.jdbc();
                PreparedStatement ps = c.prepareStatement(upsert)) {
            ps.setString(1, "v4");
            ps.setLong(2, 4);
            ps.executeUpdate();
            ps.setString(1, "v3");
            ps.setLong(2, 3);
            assertThatThrownBy(ps::executeUpdate)
                    .satisfies(t -> assertThat(TableFence.isStaleToken(t)).isTrue());
            assertThat(row(c)).isEqualTo("v4@4");
        }
    }
}
