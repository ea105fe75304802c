package io.fencelock.testservers.common;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.jdbc.JdbcBuilder;
import io.fencelock.tck.ClientConnection;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The TCK fixture of a JDBC provider, the same for each: a database of its own on a {@link JdbcServer},
 * its tables created once, and backends with a pool of two on the default table. Kept apart from
 * {@link ServerFixture} so that only the JDBC providers' tests need {@code lock-jdbc}.
 */
public final class JdbcFixtures {
    private static final int POOL_SIZE = 2;

    private JdbcFixtures() {}

    /**
     * A fixture on a new database {@code prefix_*} of {@code server}, whose backends come from
     * {@code builders} (a new builder per call, e.g. {@code PostgresLockBackend::builder}). The backend
     * through the fault proxy is given the URL pointed at the proxy, so every connection it makes
     * (a listening one too) goes through it, with {@link ServerFixture#PROXIED_TIMEOUT} as its timeouts.
     */
    public static ServerFixture onNewDatabase(
            JdbcServer server, String prefix, Supplier<? extends JdbcBuilder<?>> builders) {
        String url = server.createDatabase(prefix);
        // create the tables once, as an operator would; every backend after that only self-checks them
        builders.get()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .createTable(true)
                .build()
                .close();
        return ServerFixture.on(server, () -> pooled(builders, url, server).build())
                // the default table, as openBackend()
                .withClient(ClientConnection.withCredentials(
                        url, server.user(), server.password(), Map.of("poolSize", Integer.toString(POOL_SIZE))))
                .withProxy(via -> pooled(builders, Endpoints.withAddress(url, via), server)
                        .connectTimeout(PROXIED_TIMEOUT)
                        .socketTimeout(PROXIED_TIMEOUT)
                        .build());
    }

    private static JdbcBuilder<?> pooled(Supplier<? extends JdbcBuilder<?>> builders, String url, JdbcServer server) {
        return builders.get()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .poolSize(POOL_SIZE);
    }
}
