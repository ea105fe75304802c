package io.fencelock.mysql;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.mysql.MariaDbServer;
import io.fencelock.tck.fixture.ServerControl;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** The whole TCK against a real MySQL or MariaDB (see MariaDbServer for where it comes from). */
class MySqlContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed call must end quickly (InnoDB lock waits are capped at half of it). */
    private static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(MariaDbServer.shared());
    }

    /** A database of its own on {@code server}, its tables created once, and a fixture for it. */
    static BackendFixture fixtureOn(MariaDbServer server) {
        String url = server.createDatabase("contract");
        // create the tables once, as an operator would; every backend after that only self-checks them
        MySqlLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                .createTable(true).build().close();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return MySqlLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
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

            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return MySqlLockBackend.builder().jdbcUrl(MariaDbServer.withAddress(url, via))
                        .user(server.user()).password(server.password()).poolSize(2)
                        .connectTimeout(PROXIED_TIMEOUT).socketTimeout(PROXIED_TIMEOUT).build();
            }
        };
    }
}
