package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.RedisServer;
import org.junit.jupiter.api.AfterAll;

/** The whole TCK against a Redis Cluster of three masters: no LINEARIZABLE, no DURABLE_TOKENS. */
class RedisClusterContractTest extends LockBackendContract {
    private RedisServer cluster;

    @Override
    protected BackendFixture fixture() {
        cluster = RedisServer.startCluster(3, RedisServer.Persistence.NONE);
        String uri = RedisClusterTest.clusterUri(cluster);
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return RedisLockBackend.builder().uri(uri).build();
            }

            @Override
            public String description() {
                return cluster.description();
            }
        };
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
