package io.fencelock.postgres;

import io.fencelock.jdbc.AddedColumns;
import io.fencelock.jdbc.JdbcLockTable;
import io.fencelock.jdbc.SqlIdentifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The names of one lock table and its token sequence, their DDL, and the start-up check.
 *
 * <p>Names are folded to lower case, as PostgreSQL folds unquoted identifiers, and then quoted in
 * SQL so that reserved words work too. Tokens come from a sequence rather than {@code token + 1}
 * on the row, so that deleting free rows can never lower a later token; the sequence is not
 * {@code OWNED BY} the table, so dropping and recreating the table does not restart the tokens.
 */
final class LockTable implements JdbcLockTable {
    private static final int MAX_IDENTIFIER = 63; // PostgreSQL silently truncates longer names
    private static final String SEQUENCE_SUFFIX = "_token_seq";
    private static final Map<String, String> COLUMNS = columns();
    /**
     * Columns added after the first tables were made, with their definitions: {@code createTable(true)}
     * adds the missing ones at start-up, and the start-up check names the statement that does.
     */
    private static final AddedColumns ADDED_LATER = new AddedColumns(addedLater(), true);

    final String schema;
    final String table;
    final String sequence;
    final String qualifiedTable;
    final String qualifiedSequence;
    /** The NOTIFY channel of this table: two tables in one database never wake each other's waiters. */
    final String channel;
    /** The companion table of shared grants and its functions. */
    final SharedFunctions shared;

    private LockTable(String schema, String table) {
        this.schema = schema;
        this.table = table;
        this.sequence = table + SEQUENCE_SUFFIX;
        this.qualifiedTable = quote(schema) + "." + quote(table);
        this.qualifiedSequence = quote(schema) + "." + quote(sequence);
        String plainChannel = "fencelock." + schema + "." + table;
        this.channel = plainChannel.length() <= MAX_IDENTIFIER
                ? plainChannel
                : "fencelock." + SqlIdentifiers.sha256(plainChannel).substring(0, 40);
        this.shared = new SharedFunctions(this);
    }

    /** Validates both names (no I/O). */
    static LockTable of(String schema, String table) {
        SqlIdentifiers.require("schema", schema);
        SqlIdentifiers.require("table", table);
        if (table.length() + SEQUENCE_SUFFIX.length() > MAX_IDENTIFIER) {
            throw new IllegalArgumentException("table '" + table + "' is too long: its sequence " + table
                    + SEQUENCE_SUFFIX + " must fit PostgreSQL's " + MAX_IDENTIFIER + "-character limit, so at most "
                    + (MAX_IDENTIFIER - SEQUENCE_SUFFIX.length()) + " characters");
        }
        return new LockTable(schema.toLowerCase(Locale.ROOT), table.toLowerCase(Locale.ROOT));
    }

    @Override
    public String qualifiedName() {
        return qualifiedTable;
    }

    /**
     * The DDL of the table, its sequence, the table of shared grants and its functions, for migration
     * tools; statements end with a semicolon and a line feed (the functions' bodies are dollar-quoted).
     */
    String ddl() {
        return String.join(";\n", statements()) + ";";
    }

    private List<String> statements() {
        List<String> statements = new ArrayList<>();
        statements.add(sequenceDdl());
        statements.add(tableDdl());
        statements.addAll(shared.ddl());
        return statements;
    }

    private String sequenceDdl() {
        return "CREATE SEQUENCE IF NOT EXISTS " + qualifiedSequence + " AS bigint CACHE 1 NO CYCLE";
    }

    private String tableDdl() {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedTable + " (\n"
                + "    name            text        PRIMARY KEY,\n"
                + "    lease_id        text,\n"
                + "    token           bigint      NOT NULL,\n"
                + "    token_issued_at timestamptz NOT NULL,\n"
                + "    expires_at      timestamptz NOT NULL,\n"
                + "    contended       boolean     NOT NULL DEFAULT false,\n"
                + "    lock_owner      text,\n"
                + "    lock_type       text,\n"
                + "    lock_data       jsonb,\n"
                + "    granted_at      timestamptz,\n"
                + "    shared_kind     text,\n"
                + "    shared_limit    integer,\n"
                + "    shared_until    timestamptz,\n"
                + "    shared_held_until timestamptz,\n"
                + "    waiters         text[],\n"
                + "    woken           text,\n"
                + "    queued_grants   jsonb,\n"
                + "    granted_to      text\n"
                + ")";
    }

    /**
     * Creates the sequence and the table if absent, and adds the columns a table of an older version
     * lacks. Concurrent {@code CREATE ... IF NOT EXISTS} can still fail on the catalog's unique
     * indexes, so creators queue on an advisory lock first. An existing schema is left alone without
     * asking for CREATE rights the user may not have, and an up-to-date table without the exclusive
     * lock an {@code ALTER TABLE} takes.
     */
    @Override
    public void create(Connection c) throws SQLException {
        if (exists(c, qualifiedTable)
                && exists(c, qualifiedSequence)
                && ADDED_LATER.missing(actualColumns(c).keySet()).isEmpty()
                && shared.problems(c).isEmpty()) {
            return;
        }
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(?)");
                Statement ddl = c.createStatement()) {
            lock.setLong(1, advisoryKey());
            lock.execute();
            ddl.execute(sequenceDdl());
            ddl.execute(tableDdl());
            List<String> missing = ADDED_LATER.missing(actualColumns(c).keySet());
            if (!missing.isEmpty()) {
                // nullable columns and a constant default: a change of the catalog only, no rewrite
                ddl.execute(ADDED_LATER.alter(qualifiedTable, missing));
            }
            shared.create(c, ddl);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /**
     * Checks that the table and the sequence are what the statements rely on, and throws an
     * {@link IllegalStateException} saying what is wrong and how to fix it otherwise.
     */
    @Override
    public void verify(Connection c) throws SQLException {
        if (!exists(c, qualifiedTable)) {
            throw new IllegalStateException(
                    "lock table " + qualifiedTable + " does not exist (or this user cannot see it). "
                            + "Build the backend with createTable(true), or create it:\n" + ddl());
        }
        List<String> problems = new ArrayList<>();
        Map<String, String> actual = actualColumns(c);
        COLUMNS.forEach((column, type) -> {
            String found = actual.get(column);
            if (found == null) {
                if (ADDED_LATER.definition(column)
                        == null) { // those are named below, with the statement that adds them
                    problems.add("column " + column + " " + type + " is missing");
                }
            } else if (!found.equals(type)) {
                problems.add("column " + column + " is " + found + ", expected " + type);
            }
        });
        List<String> missing = ADDED_LATER.missing(actual.keySet());
        if (!missing.isEmpty()) {
            problems.add(ADDED_LATER.problem(qualifiedTable, missing)); // a table of an older version
        }
        List<String> sharedProblems = shared.problems(c);
        if (!sharedProblems.isEmpty()) {
            // a table of a version before shared locks, or functions of another version
            problems.add(String.join(", ", sharedProblems)
                    + ": build with createTable(true), which creates them, or run their statements below");
        }
        List<String> key = primaryKey(c);
        if (!key.equals(List.of("name"))) {
            problems.add(
                    key.isEmpty()
                            ? "there is no primary key on (name)"
                            : "the primary key is on " + key + ", expected (name)");
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT cache_size, cycle FROM pg_catalog.pg_sequences WHERE schemaname = ? AND sequencename = ?")) {
            ps.setString(1, schema);
            ps.setString(2, sequence);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    problems.add(
                            "sequence " + qualifiedSequence + " is missing: CREATE SEQUENCE " + qualifiedSequence
                                    + " AS bigint CACHE 1 NO CYCLE (START above every token ever issued if the table has rows)");
                } else {
                    if (rs.getLong("cache_size") != 1) {
                        // with a cache each session hands out numbers from its own block, so a later
                        // grant could receive a smaller token than an earlier one
                        problems.add("sequence " + qualifiedSequence + " has CACHE " + rs.getLong("cache_size")
                                + " but fencing tokens need CACHE 1: ALTER SEQUENCE " + qualifiedSequence + " CACHE 1");
                    }
                    if (rs.getBoolean("cycle")) {
                        problems.add("sequence " + qualifiedSequence
                                + " may CYCLE back to small tokens: ALTER SEQUENCE " + qualifiedSequence + " NO CYCLE");
                    }
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("lock table " + qualifiedTable + " is not usable: "
                    + String.join("; ", problems) + ". Expected:\n" + ddl());
        }
    }

    private static boolean exists(Connection c, String qualifiedName) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, qualifiedName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private Map<String, String> actualColumns(Connection c) throws SQLException {
        Map<String, String> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT attname, format_type(atttypid, atttypmod)"
                + " FROM pg_catalog.pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped")) {
            ps.setString(1, qualifiedTable);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return found;
    }

    private List<String> primaryKey(Connection c) throws SQLException {
        List<String> key = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT a.attname FROM pg_catalog.pg_index i"
                + " JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)"
                + " WHERE i.indrelid = ?::regclass AND i.indisprimary ORDER BY a.attname")) {
            ps.setString(1, qualifiedTable);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    key.add(rs.getString(1));
                }
            }
        }
        return key;
    }

    private long advisoryKey() {
        return Long.parseUnsignedLong(
                SqlIdentifiers.sha256("fencelock:create:" + qualifiedTable).substring(0, 16), 16);
    }

    private static Map<String, String> columns() {
        Map<String, String> columns = new LinkedHashMap<>();
        columns.put("name", "text");
        columns.put("lease_id", "text");
        columns.put("token", "bigint");
        columns.put("token_issued_at", "timestamp with time zone");
        columns.put("expires_at", "timestamp with time zone");
        columns.put("contended", "boolean");
        columns.put("lock_owner", "text");
        columns.put("lock_type", "text");
        columns.put("lock_data", "jsonb");
        columns.put("granted_at", "timestamp with time zone");
        columns.put("shared_kind", "text");
        columns.put("shared_limit", "integer");
        columns.put("shared_until", "timestamp with time zone");
        columns.put("shared_held_until", "timestamp with time zone");
        columns.put("waiters", "text[]");
        columns.put("woken", "text");
        columns.put("queued_grants", "jsonb");
        columns.put("granted_to", "text");
        return columns;
    }

    private static Map<String, String> addedLater() {
        Map<String, String> columns = new LinkedHashMap<>();
        columns.put("contended", "boolean NOT NULL DEFAULT false");
        columns.put("lock_owner", "text");
        columns.put("lock_type", "text");
        columns.put("lock_data", "jsonb");
        columns.put("granted_at", "timestamptz");
        columns.put("shared_kind", "text");
        columns.put("shared_limit", "integer");
        columns.put("shared_until", "timestamptz");
        columns.put("shared_held_until", "timestamptz");
        columns.put("waiters", "text[]");
        columns.put("woken", "text");
        columns.put("queued_grants", "jsonb");
        columns.put("granted_to", "text");
        return columns;
    }

    static String quote(String identifier) {
        return '"' + identifier + '"'; // a validated plain identifier: no quote can be inside
    }
}
