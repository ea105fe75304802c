package io.fencelock.redis;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;

/**
 * The whole TCK against a real Redis without persistence (see RedisServer for where it comes from):
 * everything but DURABLE_TOKENS, which such a server cannot promise.
 */
class RedisContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(RedisServer.shared());
    }

    /** Through the fault proxy the pub/sub connection comes from the same URI, so it goes through the proxy too. */
    static BackendFixture fixtureOn(RedisServer server) {
        return ServerFixture.on(
                        server,
                        () -> RedisLockBackend.builder().uri(server.uri()).build())
                .withClient(new ClientConnection(server.uri(), Map.of())) // default key prefix, as openBackend()
                .withProxy(via -> RedisLockBackend.builder()
                        .uri(server.uriVia(via))
                        .connectTimeout(PROXIED_TIMEOUT)
                        .commandTimeout(PROXIED_TIMEOUT)
                        .build());
    }
}
