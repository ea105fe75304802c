package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.RedisServer;
import io.fencelock.tck.fixture.ServerControl;

import java.util.Optional;

/**
 * The whole TCK against a real Redis without persistence (see RedisServer for where it comes from):
 * everything but DURABLE_TOKENS, which such a server cannot promise.
 */
class RedisContractTest extends LockBackendContract {

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
        };
    }
}
