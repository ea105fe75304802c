package io.fencelock.redis;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole TCK through Sentinel ({@code redis-sentinel://}): a master of its own, without persistence, that
 * one Sentinel monitors. The provider claims what a replicated deployment can promise (no LINEARIZABLE, no
 * DURABLE_TOKENS: a failover may promote a replica that lacks the last grants). Its {@code control()} acts
 * on the master; the client finds it again through the Sentinel.
 */
class RedisSentinelContractTest extends LockBackendContract {
    private RedisServer server;

    /**
     * No fault proxy: the client asks the Sentinel for the master and connects to the address the Sentinel
     * gives, so a proxy in front of the Sentinel would see none of the lock traffic.
     */
    @Override
    protected BackendFixture fixture() {
        server = RedisServer.startWithSentinel(RedisServer.Persistence.NONE);
        String uri = server.uri();
        return ServerFixture.on(
                        server, () -> RedisLockBackend.builder().uri(uri).build())
                .withClient(new ClientConnection(uri, Map.of())); // the same Sentinel and default key prefix
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }
}
