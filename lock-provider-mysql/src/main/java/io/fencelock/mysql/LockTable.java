package io.fencelock.mysql;

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
 * The lock table and its token floor: names, DDL, race-safe creation and the start-up check.
 *
 * <p>The lock table keeps one row per name and is never deleted from on release, so {@code token + 1}
 * on the row is always above every earlier token of that name. The only deletions are
 * {@code purgeFree}'s, and they first raise the one-row <em>floor</em> table to the highest token
 * they delete; a name without a row starts above the floor. Identifiers are used as given (MySQL
 * does not fold case) and quoted with backticks.
 */
final class LockTable implements JdbcLockTable {
    static final String FLOOR_SUFFIX = "_floor"; // as long as SharedTable's suffixes, which the limit below covers
    private static final int MAX_IDENTIFIER = 63; // SqlIdentifiers' limit, below MySQL's 64
    private static final int CREATE_LOCK_SECONDS = 30;
    /**
     * Columns added after the first tables were made, with their definitions: {@code createTable(true)}
     * adds the missing ones at start-up, and the start-up check names the statement that does. Owner
     * and data take any text (utf8mb4); the data is the JSON text of at most 2 KiB of UTF-8, escaped.
     */
    private static final AddedColumns ADDED_LATER = new AddedColumns(addedLater(), false);

    /** The schema (database) as given, or null for the connection's current database. */
    final String schema;

    final String table;
    final String floor;
    final String qualifiedTable;
    final String qualifiedFloor;
    /** The companion table of shared grants and its procedures. */
    final SharedTable shared;

    private LockTable(String schema, String table) {
        this.schema = schema;
        this.table = table;
        this.floor = table + FLOOR_SUFFIX;
        String prefix = schema == null ? "" : quote(schema) + ".";
        this.qualifiedTable = prefix + quote(table);
        this.qualifiedFloor = prefix + quote(floor);
        this.shared = new SharedTable(schema, table, qualifiedTable, qualifiedFloor);
    }

    /** Validates both names (no I/O); {@code schema} may be null for the URL's database. */
    static LockTable of(String schema, String table) {
        if (schema != null) {
            SqlIdentifiers.require("schema", schema);
        }
        SqlIdentifiers.require("table", table);
        if (table.length() + FLOOR_SUFFIX.length() > MAX_IDENTIFIER) {
            throw new IllegalArgumentException(
                    "table '" + table + "' is too long: its floor table " + table + FLOOR_SUFFIX
                            + " must fit " + MAX_IDENTIFIER + " characters, so at most "
                            + (MAX_IDENTIFIER - FLOOR_SUFFIX.length())
                            + " characters");
        }
        return new LockTable(schema, table);
    }

    @Override
    public String qualifiedName() {
        return qualifiedTable;
    }

    /**
     * The DDL of the tables, the floor's one row and the shared grants' companion table and
     * procedures (in the mysql client's DELIMITER form), for migration tools.
     */
    String ddl() {
        return tablesDdl() + "\n" + shared.ddl();
    }

    /** The lock table, the floor and its one row: statements separated by ";\n". */
    String tablesDdl() {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedTable + " (\n"
                + "    name            VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,\n"
                + "    lease_id        VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,\n"
                + "    token           BIGINT       NOT NULL,\n"
                + "    token_issued_at DATETIME(6)  NOT NULL,\n"
                + "    expires_at      DATETIME(6)  NOT NULL,\n"
                + "    lock_owner      " + ADDED_LATER.definition("lock_owner") + ",\n"
                + "    lock_type       " + ADDED_LATER.definition("lock_type") + ",\n"
                + "    lock_data       " + ADDED_LATER.definition("lock_data") + ",\n"
                + "    granted_at      " + ADDED_LATER.definition("granted_at") + ",\n"
                + "    share_kind      " + ADDED_LATER.definition("share_kind") + ",\n"
                + "    share_limit     " + ADDED_LATER.definition("share_limit") + ",\n"
                + "    share_until     " + ADDED_LATER.definition("share_until") + ",\n"
                + "    share_held_until " + ADDED_LATER.definition("share_held_until") + ",\n"
                + "    PRIMARY KEY (name)\n"
                + ") ENGINE=InnoDB;\n"
                + "CREATE TABLE IF NOT EXISTS " + qualifiedFloor + " (\n"
                + "    id          TINYINT NOT NULL,\n"
                + "    token_floor BIGINT  NOT NULL,\n"
                + "    PRIMARY KEY (id)\n"
                + ") ENGINE=InnoDB;\n"
                + "INSERT IGNORE INTO " + qualifiedFloor + " (id, token_floor) VALUES (1, 0);";
    }

    /**
     * Creates both tables and the floor row if absent, and adds the columns a table of an older
     * version lacks. {@code CREATE TABLE IF NOT EXISTS} and {@code INSERT IGNORE} are safe to race
     * already; creators still queue on a named lock so that a second one never sees a table whose
     * floor row is not there yet, and never adds a column twice (MySQL 8 has no {@code ADD COLUMN IF
     * NOT EXISTS}, so the missing columns are read from {@code information_schema} first).
     */
    @Override
    public void create(Connection c) throws SQLException {
        ServerFacts.requireModesTheStatementsMean(
                c, "the server of " + qualifiedTable); // procedures keep the sql_mode they are created in
        String lockName = "fencelock:create:"
                + SqlIdentifiers.sha256(currentDatabase(c) + "." + table).substring(0, 40);
        try (PreparedStatement get = c.prepareStatement("SELECT GET_LOCK(?, ?)")) {
            get.setString(1, lockName);
            get.setInt(2, CREATE_LOCK_SECONDS);
            try (ResultSet rs = get.executeQuery()) {
                if (!rs.next() || rs.getInt(1) != 1) {
                    throw new SQLException(
                            "another process held the table-creation lock " + lockName + " for " + CREATE_LOCK_SECONDS
                                    + " s",
                            "HY000");
                }
            }
        }
        try (Statement ddl = c.createStatement()) {
            for (String statement : tablesDdl().split(";\n")) {
                ddl.execute(statement);
            }
            List<String> missing = ADDED_LATER.missing(columnNames(columns(c)));
            if (!missing.isEmpty()) {
                // nullable columns at the end: an instant change on MySQL 8.0.29+ and MariaDB 10.3+
                ddl.execute(ADDED_LATER.alter(qualifiedTable, missing));
            }
            shared.create(c);
        } finally {
            try (PreparedStatement release = c.prepareStatement("DO RELEASE_LOCK(?)")) {
                release.setString(1, lockName);
                release.execute();
            }
        }
    }

    /**
     * Checks that both tables are what the statements rely on (InnoDB, the columns with binary
     * collations and microsecond datetimes, the primary keys, the floor row) and throws an
     * {@link IllegalStateException} saying what is wrong and how to fix it otherwise.
     */
    @Override
    public void verify(Connection c) throws SQLException {
        String database = currentDatabase(c);
        Map<String, String> engines = engines(c);
        if (!engines.containsKey(table)) {
            throw new IllegalStateException(
                    "lock table " + describe(database) + " does not exist (or this user cannot see it). "
                            + "Build the backend with createTable(true), or create it:\n" + ddl());
        }
        List<String> problems = new ArrayList<>();
        for (String t : List.of(table, floor)) {
            String engine = engines.get(t);
            if (engine == null) {
                problems.add("table " + t + " is missing");
            } else if (!engine.equalsIgnoreCase("InnoDB")) {
                // other engines have no row locks or no crash-safe commits, which the tokens rely on
                problems.add("table " + t + " uses the " + engine + " engine, expected InnoDB: ALTER TABLE "
                        + qualified(t) + " ENGINE=InnoDB");
            }
        }
        Map<String, Column> columns = columns(c);
        checkName(problems, columns.get(table + ".name"), "name", 255);
        checkName(problems, columns.get(table + ".lease_id"), "lease_id", 36);
        checkBigint(problems, columns.get(table + ".token"), "token");
        checkDatetime(problems, columns.get(table + ".token_issued_at"), "token_issued_at");
        checkDatetime(problems, columns.get(table + ".expires_at"), "expires_at");
        List<String> missing = ADDED_LATER.missing(columnNames(columns));
        if (!missing.isEmpty()) {
            problems.add(ADDED_LATER.problem(qualifiedTable, missing)); // a table of an older version
        }
        checkText(problems, columns.get(table + ".lock_owner"), "lock_owner", 200, true);
        checkText(problems, columns.get(table + ".lock_type"), "lock_type", 64, false);
        checkText(problems, columns.get(table + ".lock_data"), "lock_data", 8192, true);
        Column grantedAt = columns.get(table + ".granted_at");
        if (grantedAt != null
                && (!grantedAt.dataType.equals("datetime") || grantedAt.precision != 6 || !grantedAt.nullable)) {
            problems.add("column granted_at is " + grantedAt.columnType + (grantedAt.nullable ? "" : " NOT NULL")
                    + ", expected DATETIME(6) NULL");
        }
        List<String> key = primaryKey(c, table);
        if (!key.equals(List.of("name"))) {
            problems.add(
                    key.isEmpty()
                            ? "table " + table + " has no primary key on (name)"
                            : "the primary key of " + table + " is on " + key + ", expected (name)");
        }
        if (engines.containsKey(floor)) {
            checkBigint(problems, columns.get(floor + ".token_floor"), floor + ".token_floor");
            if (!primaryKey(c, floor).equals(List.of("id"))) {
                problems.add("table " + floor + " needs its primary key on (id)");
            }
            if (problems.isEmpty() && !floorRowExists(c)) {
                problems.add("the floor row is missing: INSERT INTO " + qualifiedFloor
                        + " (id, token_floor) VALUES (1, <a token above every token ever issued from this table>)");
            }
        }
        shared.verify(c, engines.get(shared.share), primaryKey(c, shared.share), problems);
        if (!problems.isEmpty()) {
            throw new IllegalStateException("lock table " + describe(database) + " is not usable: "
                    + String.join("; ", problems) + ". Expected:\n" + ddl());
        }
    }

    private String currentDatabase(Connection c) throws SQLException {
        if (schema != null) {
            return schema;
        }
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT DATABASE()")) {
            rs.next();
            String database = rs.getString(1);
            if (database == null) {
                throw new IllegalStateException("no database selected for lock table " + qualifiedTable
                        + ": name one in the JDBC URL (jdbc:mysql://host:3306/<database>) or set schema(...)");
            }
            return database;
        }
    }

    private String describe(String database) {
        return schema == null ? quote(database) + "." + quote(table) : qualifiedTable;
    }

    private String qualified(String t) {
        return schema == null ? quote(t) : quote(schema) + "." + quote(t);
    }

    private static void checkName(List<String> problems, Column column, String name, int minLength) {
        if (column == null) {
            problems.add("column " + name + " is missing");
            return;
        }
        boolean text = column.dataType.equals("varchar") || column.dataType.equals("char");
        boolean binary = column.dataType.equals("varbinary") || column.dataType.equals("binary");
        if (!text && !binary) {
            problems.add("column " + name + " is " + column.columnType
                    + ", expected VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin");
            return;
        }
        if (column.maxLength < minLength) {
            problems.add(
                    "column " + name + " is " + column.columnType + ", too short for " + minLength + " characters");
        }
        if (text
                && (column.collation == null
                        || !column.collation.toLowerCase(Locale.ROOT).endsWith("_bin"))) {
            // a case-insensitive collation would make 'Lock' and 'lock' one lock, and change the order of list()
            problems.add("column " + name + " has collation " + column.collation
                    + ", expected a binary one (ascii_bin): names and lease ids are case-sensitive");
        }
        if (name.equals("name") && column.nullable) {
            problems.add("column name must be NOT NULL");
        }
        if (name.equals("lease_id") && !column.nullable) {
            problems.add("column lease_id must allow NULL: a released lock keeps its row with no holder");
        }
    }

    /** The lock table's column names among {@code columns} (keyed "table.column"). */
    private List<String> columnNames(Map<String, Column> columns) {
        return columns.keySet().stream()
                .filter(key -> key.startsWith(table + "."))
                .map(key -> key.substring(table.length() + 1))
                .toList();
    }

    /**
     * A metadata column (absent ones are reported above): text of at least {@code minLength}, in
     * utf8mb4 where it holds any text, and nullable, since a free lock has none.
     */
    private static void checkText(List<String> problems, Column column, String name, long minLength, boolean anyText) {
        if (column == null) {
            return;
        }
        String expected = ADDED_LATER.definition(name);
        boolean text = column.dataType.endsWith("char") || column.dataType.endsWith("text");
        if (!text && !(column.dataType.equals("json") && anyText)) {
            problems.add("column " + name + " is " + column.columnType + ", expected " + expected);
        } else if (column.maxLength < minLength && !column.dataType.equals("json")) {
            problems.add("column " + name + " is " + column.columnType + ", too short for " + minLength + ": expected "
                    + expected);
        } else if (anyText
                && column.collation != null
                && !column.collation.toLowerCase(Locale.ROOT).startsWith("utf8mb4")) {
            problems.add("column " + name + " has collation " + column.collation
                    + ", expected a utf8mb4 one: it holds any text");
        }
        if (!column.nullable) {
            problems.add("column " + name + " must allow NULL: a free lock has no metadata");
        }
    }

    private static void checkBigint(List<String> problems, Column column, String name) {
        if (column == null) {
            problems.add("column " + name + " is missing");
        } else if (!column.dataType.equals("bigint")) {
            problems.add("column " + name + " is " + column.columnType + ", expected BIGINT");
        } else if (column.nullable) {
            problems.add("column " + name + " must be NOT NULL");
        }
    }

    private static void checkDatetime(List<String> problems, Column column, String name) {
        if (column == null) {
            problems.add("column " + name + " is missing");
        } else if (!column.dataType.equals("datetime") || column.precision != 6) {
            // TIMESTAMP would shift with the session time zone; the statements compare UTC_TIMESTAMP(6)
            problems.add("column " + name + " is " + column.columnType + ", expected DATETIME(6) NOT NULL");
        } else if (column.nullable) {
            problems.add("column " + name + " must be NOT NULL");
        }
    }

    private record Column(
            String dataType, String columnType, long maxLength, int precision, String collation, boolean nullable) {}

    private Map<String, String> engines(Connection c) throws SQLException {
        Map<String, String> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT table_name, engine FROM information_schema.tables"
                + " WHERE table_schema = COALESCE(?, DATABASE()) AND table_name IN (?, ?, ?)")) {
            ps.setString(1, schema);
            ps.setString(2, table);
            ps.setString(3, floor);
            ps.setString(4, shared.share);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.put(rs.getString(1), String.valueOf(rs.getString(2)));
                }
            }
        }
        return found;
    }

    private Map<String, Column> columns(Connection c) throws SQLException {
        Map<String, Column> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT table_name, column_name, data_type, column_type,"
                        + " character_maximum_length, datetime_precision, collation_name, is_nullable"
                        + " FROM information_schema.columns WHERE table_schema = COALESCE(?, DATABASE()) AND table_name IN (?, ?)")) {
            ps.setString(1, schema);
            ps.setString(2, table);
            ps.setString(3, floor);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.put(
                            rs.getString(1) + "." + rs.getString(2).toLowerCase(Locale.ROOT),
                            new Column(
                                    rs.getString(3).toLowerCase(Locale.ROOT),
                                    rs.getString(4),
                                    rs.getLong(5),
                                    rs.getInt(6),
                                    rs.getString(7),
                                    "YES".equalsIgnoreCase(rs.getString(8))));
                }
            }
        }
        return found;
    }

    private List<String> primaryKey(Connection c, String t) throws SQLException {
        List<String> key = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT column_name FROM information_schema.key_column_usage"
                + " WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND constraint_name = 'PRIMARY'"
                + " ORDER BY ordinal_position")) {
            ps.setString(1, schema);
            ps.setString(2, t);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    key.add(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        return key;
    }

    private boolean floorRowExists(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + qualifiedFloor + " WHERE id = 1")) {
            rs.next();
            return rs.getInt(1) == 1;
        }
    }

    private static Map<String, String> addedLater() {
        Map<String, String> columns = new LinkedHashMap<>();
        columns.put("lock_owner", "VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL");
        columns.put("lock_type", "VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL");
        columns.put("lock_data", "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL");
        columns.put("granted_at", "DATETIME(6) NULL");
        // the summary of a name's shared grants (see SharedTable), which the mutex statement and the purge read
        columns.put("share_kind", "VARCHAR(9) CHARACTER SET ascii COLLATE ascii_bin NULL");
        columns.put("share_limit", "INT NULL");
        columns.put("share_until", "DATETIME(6) NULL");
        columns.put("share_held_until", "DATETIME(6) NULL");
        return columns;
    }

    private static String quote(String identifier) {
        return '`' + identifier + '`'; // a validated plain identifier: no backtick can be inside
    }
}
