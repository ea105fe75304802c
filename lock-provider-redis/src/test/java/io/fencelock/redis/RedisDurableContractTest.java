package io.fencelock.redis;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole TCK against a Redis of its own with {@code appendonly yes} and {@code appendfsync always},
 * where the backend declares DURABLE_TOKENS as well.
 */
class RedisDurableContractTest extends LockBackendContract {
    private RedisServer server;

    @Override
    protected BackendFixture fixture() {
        server = RedisServer.start(RedisServer.Persistence.AOF_ALWAYS);
        return RedisContractTest.fixtureOn(server);
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }
}
