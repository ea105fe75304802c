package io.fencelock.fencing;

import io.fencelock.jdbc.SqlIdentifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

/**
 * Fences a whole table, every write path included: a token column and a {@code BEFORE INSERT OR
 * UPDATE} trigger that refuses a row change whose token is lower than the row's current token
 * (SQLSTATE {@value #STALE_TOKEN_SQLSTATE}) and one without a positive token (SQLSTATE
 * {@value #MISSING_TOKEN_SQLSTATE}). Writes that do not go through {@link JdbcFence} (other
 * services, scripts, an ORM) are fenced too, as long as they set the token column.
 *
 * <pre>{@code
 * TableFence fence = TableFence.builder(SqlDialect.POSTGRESQL).table("invoices").build();
 * System.out.println(fence.script());    // review it, or put it in a migration
 * fence.apply(connection);               // or let the kit run it
 * // every writer then sets the column: UPDATE invoices SET total = ?, fence_token = ? WHERE id = ?
 * }</pre>
 *
 * <p>The fence is per row: an update is compared with the row it changes (an
 * {@code INSERT ... ON CONFLICT DO UPDATE} or {@code ON DUPLICATE KEY UPDATE} too), an insert of a
 * new row only has to carry a positive token. An update that leaves the column unchanged keeps the
 * row's token and passes, so a writer must always set it. Rows that existed before the fence have no
 * token and accept any positive one. Deletes are not fenced.
 */
public final class TableFence {
    /** The SQLSTATE of a row change whose token is lower than the row's current token. */
    public static final String STALE_TOKEN_SQLSTATE = "FL001";
    /** The SQLSTATE of a row change without a positive token. */
    public static final String MISSING_TOKEN_SQLSTATE = "FL002";
    /** The default name of the token column. */
    public static final String DEFAULT_COLUMN = "fence_token";

    private final SqlDialect dialect;
    private final String schema;
    private final String table;
    private final String column;
    private final List<String> statements;

    private TableFence(SqlDialect dialect, String schema, String table, String column) {
        this.dialect = dialect;
        this.schema = schema;
        this.table = dialect.identifier("table", table);
        this.column = dialect.identifier("token column", column);
        String qualifiedTable = dialect.qualified(schema, "table", table);
        String c = this.column;
        if (dialect == SqlDialect.POSTGRESQL) {
            String function = dialect.qualified(schema, "trigger function", derived(table, "_fence_check"));
            String trigger = dialect.identifier("trigger", derived(table, "_fence"));
            this.statements = List.of(
                    "ALTER TABLE " + qualifiedTable + " ADD COLUMN IF NOT EXISTS " + c + " BIGINT",
                    "CREATE OR REPLACE FUNCTION " + function + "() RETURNS trigger LANGUAGE plpgsql AS $fence$\n"
                            + "BEGIN\n"
                            + "  IF NEW." + c + " IS NULL OR NEW." + c + " <= 0 THEN\n"
                            + "    RAISE EXCEPTION 'fencing token missing or not positive on %.%: %', TG_TABLE_SCHEMA, TG_TABLE_NAME, NEW."
                            + c + "\n"
                            + "      USING ERRCODE = '" + MISSING_TOKEN_SQLSTATE + "';\n"
                            + "  END IF;\n"
                            + "  IF TG_OP = 'UPDATE' THEN\n"
                            + "    IF NEW." + c + " < OLD." + c + " THEN\n"
                            + "      RAISE EXCEPTION 'stale fencing token % on %.%: the row has token %', NEW." + c
                            + ", TG_TABLE_SCHEMA, TG_TABLE_NAME, OLD." + c + "\n"
                            + "        USING ERRCODE = '" + STALE_TOKEN_SQLSTATE + "';\n"
                            + "    END IF;\n"
                            + "  END IF;\n"
                            + "  RETURN NEW;\n"
                            + "END\n"
                            + "$fence$",
                    "DROP TRIGGER IF EXISTS " + trigger + " ON " + qualifiedTable,
                    "CREATE TRIGGER " + trigger + " BEFORE INSERT OR UPDATE ON " + qualifiedTable
                            + " FOR EACH ROW EXECUTE FUNCTION " + function + "()");
        } else {
            String onInsert = dialect.qualified(schema, "trigger", derived(table, "_fence_insert"));
            String onUpdate = dialect.qualified(schema, "trigger", derived(table, "_fence_update"));
            String missing = "  IF NEW." + c + " IS NULL OR NEW." + c + " <= 0 THEN\n"
                    + "    SIGNAL SQLSTATE '" + MISSING_TOKEN_SQLSTATE
                    + "' SET MESSAGE_TEXT = 'fencing token missing or not positive';\n"
                    + "  END IF;\n";
            this.statements = List.of(
                    "ALTER TABLE " + qualifiedTable + " ADD COLUMN " + c + " BIGINT NULL",
                    "DROP TRIGGER IF EXISTS " + onInsert,
                    "CREATE TRIGGER " + onInsert + " BEFORE INSERT ON " + qualifiedTable + " FOR EACH ROW\n" + "BEGIN\n"
                            + missing + "END",
                    "DROP TRIGGER IF EXISTS " + onUpdate,
                    "CREATE TRIGGER " + onUpdate + " BEFORE UPDATE ON " + qualifiedTable + " FOR EACH ROW\n"
                            + "BEGIN\n"
                            + "  DECLARE message VARCHAR(200);\n"
                            + missing
                            + "  IF NEW." + c + " < OLD." + c + " THEN\n"
                            // SIGNAL takes a variable, not an expression
                            + "    SET message = CONCAT('stale fencing token ', NEW." + c
                            + ", ': the row has token ', OLD." + c + ");\n"
                            + "    SIGNAL SQLSTATE '" + STALE_TOKEN_SQLSTATE + "' SET MESSAGE_TEXT = message;\n"
                            + "  END IF;\n"
                            + "END");
        }
    }

    /** A fence for a table on {@code dialect}'s database; name the table, optionally its schema and token column. */
    public static Builder builder(SqlDialect dialect) {
        return new Builder(Checks.notNull("dialect", dialect));
    }

    /** A name made from the table's, which must itself fit the identifier rule (at most 63 characters). */
    private static String derived(String table, String suffix) {
        return SqlIdentifiers.require(
                "name derived from table '" + table + "' (shorten the table name)", table + suffix);
    }

    /** The statements, in order, one per JDBC execute (trigger bodies included). */
    public List<String> statements() {
        return statements;
    }

    /**
     * The statements as a script to review or to paste into {@code psql} / the {@code mysql} client
     * (the MySQL script switches the delimiter around the trigger bodies, as that client needs).
     */
    public String script() {
        StringBuilder s = new StringBuilder();
        if (dialect == SqlDialect.MYSQL) {
            s.append("DELIMITER //\n");
        }
        String end = dialect == SqlDialect.MYSQL ? "\n//\n\n" : ";\n\n";
        for (String statement : statements) {
            s.append(statement).append(end);
        }
        if (dialect == SqlDialect.MYSQL) {
            s.append("DELIMITER ;\n");
        }
        return s.toString();
    }

    /**
     * Runs the statements on {@code connection}: adds the column if it is missing and (re)creates the
     * trigger. Idempotent. DDL commits by itself on MySQL; on PostgreSQL it joins the caller's
     * transaction if one is open.
     */
    public void apply(Connection connection) throws SQLException {
        Checks.notNull("connection", connection);
        try (Statement s = connection.createStatement()) {
            for (String statement : statements) {
                // MySQL has no ADD COLUMN IF NOT EXISTS (MariaDB has): look first
                if (dialect == SqlDialect.MYSQL && statement.startsWith("ALTER TABLE") && hasMySqlColumn(connection)) {
                    continue;
                }
                s.execute(statement);
            }
        }
    }

    private boolean hasMySqlColumn(Connection connection) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT COUNT(*) FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME = ?")) {
            ps.setString(1, schema);
            ps.setString(2, unquoted(table));
            ps.setString(3, unquoted(column));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    private static String unquoted(String quoted) {
        return quoted.substring(1, quoted.length() - 1);
    }

    /** Whether {@code e}, or an exception it wraps, is the trigger's refusal of a stale token. */
    public static boolean isStaleToken(Throwable e) {
        return hasSqlState(e, STALE_TOKEN_SQLSTATE);
    }

    /** Whether {@code e}, or an exception it wraps, is the trigger's refusal of a missing or non-positive token. */
    public static boolean isMissingToken(Throwable e) {
        return hasSqlState(e, MISSING_TOKEN_SQLSTATE);
    }

    private static boolean hasSqlState(Throwable e, String state) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                for (SQLException n = sql; n != null; n = n.getNextException()) {
                    if (state.equals(n.getSQLState())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "TableFence[" + dialect + " " + (schema == null ? "" : schema + ".") + unquoted(table) + "."
                + unquoted(column) + "]";
    }

    /**
     * Prints the script for review: {@code TableFence postgresql|mysql [schema.]table [column]}.
     */
    public static void main(String[] args) {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: TableFence postgresql|mysql [schema.]table [column]");
            System.exit(2);
        }
        SqlDialect dialect = SqlDialect.valueOf(args[0].toUpperCase(Locale.ROOT));
        int dot = args[1].indexOf('.');
        Builder builder = builder(dialect).table(dot < 0 ? args[1] : args[1].substring(dot + 1));
        if (dot >= 0) {
            builder.schema(args[1].substring(0, dot));
        }
        if (args.length == 3) {
            builder.column(args[2]);
        }
        System.out.print(builder.build().script());
    }

    /** Which table and column; validated on {@link #build()}. */
    public static final class Builder {
        private final SqlDialect dialect;
        private String schema;
        private String table;
        private String column = DEFAULT_COLUMN;

        private Builder(SqlDialect dialect) {
            this.dialect = dialect;
        }

        /** The schema (MySQL: database); by default the connection's current one. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        public Builder table(String table) {
            this.table = table;
            return this;
        }

        public Builder column(String column) {
            this.column = column;
            return this;
        }

        /** @throws IllegalArgumentException when a name, or one derived from the table's, is not a plain SQL identifier */
        public TableFence build() {
            return new TableFence(dialect, schema, table, column);
        }
    }
}
