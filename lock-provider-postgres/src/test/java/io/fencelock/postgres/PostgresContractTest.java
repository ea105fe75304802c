package io.fencelock.postgres;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.postgres.PostgresServer;
import io.fencelock.tck.fixture.ServerControl;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** The whole TCK against a real PostgreSQL (see PostgresServer for where it comes from). */
class PostgresContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed call must end quickly; PostgreSQL's timeouts are whole seconds. */
    private static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(PostgresServer.shared());
    }

    /** A database of its own on {@code server}, its schema created once, and a fixture for it. */
    static BackendFixture fixtureOn(PostgresServer server) {
        String url = server.createDatabase("contract");
        // create the schema once, as an operator would; every backend after that only self-checks it
        PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                .createTable(true).build().close();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                        .poolSize(2).build();
            }

            @Override
            public String description() {
                return server.description();
            }

            @Override
            public Optional<ServerControl> control() {
                return server.control();
            }

            @Override
            public Optional<ClientConnection> clientConnection() {
                // the default table, as openBackend()
                return Optional.of(ClientConnection.withCredentials(url, server.user(), server.password(), Map.of("poolSize", "2")));
            }

            @Override
            public Optional<InetSocketAddress> proxyTarget() {
                return server.address();
            }

            /** The same database through {@code via}; the LISTEN connection is built from the same URL, so it goes through {@code via} too. */
            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return PostgresLockBackend.builder().jdbcUrl(PostgresServer.withAddress(url, via))
                        .user(server.user()).password(server.password()).poolSize(2)
                        .connectTimeout(PROXIED_TIMEOUT).socketTimeout(PROXIED_TIMEOUT).build();
            }
        };
    }
}
