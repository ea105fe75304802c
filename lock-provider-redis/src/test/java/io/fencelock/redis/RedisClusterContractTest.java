package io.fencelock.redis;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole TCK against a Redis Cluster of three masters: no LINEARIZABLE, no DURABLE_TOKENS. Its
 * {@code control()} acts on every node at once; start() returns once the cluster serves every slot
 * again (the data is gone: no persistence).
 */
class RedisClusterContractTest extends LockBackendContract {
    private RedisServer cluster;

    /**
     * No fault proxy: a cluster client learns the nodes' own addresses from {@code CLUSTER SLOTS} and
     * MOVED redirects and connects to them directly, so a proxy in front of one node would see only
     * part of the traffic.
     */
    @Override
    protected BackendFixture fixture() {
        cluster = RedisServer.startCluster(3, RedisServer.Persistence.NONE);
        String uri = RedisClusterTest.clusterUri(cluster);
        return ServerFixture.on(
                        cluster, () -> RedisLockBackend.builder().uri(uri).build())
                .withClient(new ClientConnection(uri, Map.of())); // the same seed nodes and default key prefix
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
