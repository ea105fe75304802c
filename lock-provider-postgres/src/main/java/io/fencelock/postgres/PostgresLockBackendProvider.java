package io.fencelock.postgres;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;

import java.util.List;
import java.util.Map;
import java.util.Set;

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
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        PostgresLockBackend.Builder builder = PostgresLockBackend.builder().jdbcUrl(uri)
                .user(settings.get("user"))
                .password(settings.get("password"));
        settings.ifPresent("schema", builder::schema)
                .ifPresent("table", builder::table)
                .ifPresentBoolean("createTable", builder::createTable)
                .ifPresentInt("poolSize", builder::poolSize);
        return builder.build();
    }
}
