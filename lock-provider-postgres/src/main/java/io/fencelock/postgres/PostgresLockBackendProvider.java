package io.fencelock.postgres;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens {@link PostgresLockBackend}s from {@code jdbc:postgresql:} URLs. Properties:
 * {@code user}, {@code password}, {@code schema}, {@code table}, {@code createTable}
 * ({@code true}/{@code false}) and {@code poolSize}.
 */
public final class PostgresLockBackendProvider implements LockBackendProvider {
    private static final Set<String> KEYS = Set.of("user", "password", "schema", "table", "createTable", "poolSize");

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("jdbc:postgresql:");
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        if (uri == null || !accepts(uri)) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL (jdbc:postgresql:...): " + Redaction.uri(uri));
        }
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown PostgreSQL lock backend properties " + unknown
                    + "; known: " + new TreeSet<>(KEYS));
        }
        PostgresLockBackend.Builder builder = PostgresLockBackend.builder().jdbcUrl(uri)
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
