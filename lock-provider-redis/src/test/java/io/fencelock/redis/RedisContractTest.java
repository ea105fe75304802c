package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.redis.RedisServer;
import io.fencelock.tck.fixture.ServerControl;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The whole TCK against a real Redis without persistence (see RedisServer for where it comes from):
 * everything but DURABLE_TOKENS, which such a server cannot promise.
 */
class RedisContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed command must end quickly. */
    static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(RedisServer.shared());
    }

    static BackendFixture fixtureOn(RedisServer server) {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return RedisLockBackend.builder().uri(server.uri()).build();
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
                return Optional.of(new ClientConnection(server.uri(), Map.of())); // default key prefix, as openBackend()
            }

            @Override
            public Optional<InetSocketAddress> proxyTarget() {
                return server.address();
            }

            /** The same server through {@code via}; the pub/sub connection comes from the same URI, so it goes through {@code via} too. */
            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return RedisLockBackend.builder().uri(server.uriVia(via))
                        .connectTimeout(PROXIED_TIMEOUT).commandTimeout(PROXIED_TIMEOUT).build();
            }
        };
    }
}
