package io.fencelock.jdbc;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Columns a dialect's lock table gained after its first version, with their SQL definitions, in
 * order: the start-up adds the missing ones ({@code createTable(true)}) or, in its check, names the
 * one statement that does, so that a table made by an older version keeps working.
 */
public final class AddedColumns {
    private final Map<String, String> definitions;
    private final String addColumn;

    /**
     * @param definitions each column's definition ({@code "text"}, {@code "DATETIME(6) NULL"}), in order
     * @param ifNotExists whether the dialect has {@code ADD COLUMN IF NOT EXISTS} (PostgreSQL, MariaDB;
     *                    MySQL 8 has not: there the missing columns must be read first)
     */
    public AddedColumns(Map<String, String> definitions, boolean ifNotExists) {
        this.definitions = Collections.unmodifiableMap(new LinkedHashMap<>(definitions));
        this.addColumn = ifNotExists ? "ADD COLUMN IF NOT EXISTS " : "ADD COLUMN ";
    }

    /** A column's definition, or null when it is not one of these. */
    public String definition(String column) {
        return definitions.get(column);
    }

    /** Those of these columns that {@code present} (the table's column names) lacks, in order. */
    public List<String> missing(Collection<String> present) {
        return definitions.keySet().stream()
                .filter(column -> !present.contains(column))
                .toList();
    }

    /** The {@code ALTER TABLE} that adds {@code missing} to {@code qualifiedTable} (validated, quoted). */
    public String alter(String qualifiedTable, List<String> missing) {
        return "ALTER TABLE " + qualifiedTable + " "
                + missing.stream()
                        .map(column -> addColumn + column + " " + definitions.get(column))
                        .collect(Collectors.joining(", "));
    }

    /** What the start-up check says of a table that lacks {@code missing}, with the statement that fixes it. */
    public String problem(String qualifiedTable, List<String> missing) {
        return "the table predates columns " + missing + ": build with createTable(true), which adds them, or run "
                + alter(qualifiedTable, missing);
    }
}
