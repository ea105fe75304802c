package io.fencelock.mysql;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;

import java.util.List;
import java.util.Map;
import java.util.Set;

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
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        MySqlLockBackend.Builder builder = MySqlLockBackend.builder().jdbcUrl(uri)
                .user(settings.get("user"))
                .password(settings.get("password"));
        settings.ifPresent("schema", builder::schema)
                .ifPresent("table", builder::table)
                .ifPresentBoolean("createTable", builder::createTable)
                .ifPresentInt("poolSize", builder::poolSize);
        return builder.build();
    }
}
