package io.fencelock.jdbc;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * A provider of a JDBC backend: the URI is the JDBC URL; the properties are {@code user},
 * {@code password}, {@code schema}, {@code table}, {@code createTable} ({@code true}/{@code false})
 * and {@code poolSize}. A subclass names itself, its URL prefixes and its builder.
 */
public abstract class JdbcBackendProvider implements LockBackendProvider {
    private static final Set<String> KEYS = Set.of("user", "password", "schema", "table", "createTable", "poolSize");
    /** On the application's DataSource, credentials and pool size are the DataSource's own. */
    private static final Set<String> DATA_SOURCE_KEYS = Set.of("schema", "table", "createTable");

    /** A new builder of the backend. */
    protected abstract JdbcBuilder<?> builder();

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        JdbcBuilder<?> builder =
                builder().jdbcUrl(uri).user(settings.get("user")).password(settings.get("password"));
        table(settings, builder).ifPresentInt("poolSize", builder::poolSize);
        return builder.build();
    }

    /**
     * Opens a backend on the application's {@code dataSource} (which the backend never closes), for
     * frameworks that already have one: the properties are {@code schema}, {@code table} and
     * {@code createTable}. The caller makes sure the DataSource reaches this provider's database.
     */
    public LockBackend open(DataSource dataSource, Map<String, String> properties) {
        ProviderProperties settings = ProviderProperties.checkKeys(this, properties, DATA_SOURCE_KEYS);
        JdbcBuilder<?> builder = builder().dataSource(dataSource);
        table(settings, builder);
        return builder.build();
    }

    private static ProviderProperties table(ProviderProperties settings, JdbcBuilder<?> builder) {
        return settings.ifPresent("schema", builder::schema)
                .ifPresent("table", builder::table)
                .ifPresentBoolean("createTable", builder::createTable);
    }
}
