package io.fencelock.jdbc;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import java.util.Map;
import java.util.Set;

/**
 * A provider of a JDBC backend: the URI is the JDBC URL; the properties are {@code user},
 * {@code password}, {@code schema}, {@code table}, {@code createTable} ({@code true}/{@code false})
 * and {@code poolSize}. A subclass names itself, its URL prefixes and its builder.
 */
public abstract class JdbcBackendProvider implements LockBackendProvider {
    private static final Set<String> KEYS = Set.of("user", "password", "schema", "table", "createTable", "poolSize");

    /** A new builder of the backend. */
    protected abstract JdbcBuilder<?> builder();

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        JdbcBuilder<?> builder =
                builder().jdbcUrl(uri).user(settings.get("user")).password(settings.get("password"));
        settings.ifPresent("schema", builder::schema)
                .ifPresent("table", builder::table)
                .ifPresentBoolean("createTable", builder::createTable)
                .ifPresentInt("poolSize", builder::poolSize);
        return builder.build();
    }
}
