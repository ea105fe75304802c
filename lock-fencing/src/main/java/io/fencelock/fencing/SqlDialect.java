package io.fencelock.fencing;

import io.fencelock.jdbc.SqlIdentifiers;
import java.util.Locale;

/** The SQL databases the JDBC guards speak to. */
public enum SqlDialect {
    /** PostgreSQL 11 and newer. */
    POSTGRESQL,
    /** MySQL 8 and MariaDB 10.6 and newer. */
    MYSQL;

    /**
     * {@code name} as SQL: validated as a plain identifier, then quoted so reserved words work too;
     * PostgreSQL names are folded to lower case first, as PostgreSQL folds unquoted names.
     */
    String identifier(String what, String name) {
        SqlIdentifiers.require(what, name);
        return this == POSTGRESQL ? '"' + name.toLowerCase(Locale.ROOT) + '"' : '`' + name + '`';
    }

    /** {@code schema.table}, or just the table when {@code schema} is null (the connection's current schema). */
    String qualified(String schema, String what, String name) {
        return (schema == null ? "" : identifier("schema", schema) + ".") + identifier(what, name);
    }
}
