package io.fencelock.mysql;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens {@link MySqlLockBackend}s from {@code jdbc:mysql:} URLs, and from {@code jdbc:mariadb:} URLs,
 * which are handed to MySQL Connector/J as {@code jdbc:mysql:} (same hosts, database and
 * parameters). Properties: {@code user}, {@code password}, {@code schema}, {@code table},
 * {@code createTable} ({@code true}/{@code false}) and {@code poolSize}.
 */
public final class MySqlLockBackendProvider implements LockBackendProvider {
    private static final Set<String> KEYS = Set.of("user", "password", "schema", "table", "createTable", "poolSize");

    @Override
    public String name() {
        return "mysql";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("jdbc:mysql:", "jdbc:mariadb:");
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        if (uri == null || !accepts(uri)) {
            throw new IllegalArgumentException("not a MySQL or MariaDB JDBC URL (jdbc:mysql:... or jdbc:mariadb:...): "
                    + Redaction.uri(uri));
        }
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown MySQL lock backend properties " + unknown
                    + "; known: " + new TreeSet<>(KEYS));
        }
        MySqlLockBackend.Builder builder = MySqlLockBackend.builder().jdbcUrl(uri)
                .user(properties.get("user"))
                .password(properties.get("password"));
        if (properties.containsKey("schema")) {
            builder.schema(properties.get("schema"));
        }
        if (properties.containsKey("table")) {
            builder.table(properties.get("table"));
        }
        if (properties.containsKey("createTable")) {
            builder.createTable(bool("createTable", properties.get("createTable")));
        }
        if (properties.containsKey("poolSize")) {
            builder.poolSize(integer("poolSize", properties.get("poolSize")));
        }
        return builder.build();
    }

    private static boolean bool(String key, String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, got '" + value + "'");
        }
        return v.equals("true");
    }

    private static int integer(String key, String value) {
        try {
            return Integer.parseInt(value == null ? "" : value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a whole number, got '" + value + "'");
        }
    }
}
