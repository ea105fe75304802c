package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.redis.RedisServer;
import io.fencelock.tck.fixture.ServerControl;
import org.junit.jupiter.api.AfterAll;

import java.util.Map;
import java.util.Optional;

/** The whole TCK against a Redis Cluster of three masters: no LINEARIZABLE, no DURABLE_TOKENS. */
class RedisClusterContractTest extends LockBackendContract {
    private RedisServer cluster;

    @Override
    protected BackendFixture fixture() {
        cluster = RedisServer.startCluster(3, RedisServer.Persistence.NONE);
        return fixtureOn(cluster);
    }

    /**
     * No {@code proxyTarget()} and no {@code openBackendVia()}: a cluster client learns the nodes' own
     * addresses from {@code CLUSTER SLOTS} and MOVED redirects and connects to them directly, so a
     * proxy in front of one node would see only part of the traffic.
     */
    static BackendFixture fixtureOn(RedisServer cluster) {
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

            /** Every node at once; start() returns once the cluster serves every slot again (the data is gone: no persistence). */
            @Override
            public Optional<ServerControl> control() {
                return cluster.control();
            }

            @Override
            public Optional<ClientConnection> clientConnection() {
                return Optional.of(new ClientConnection(uri, Map.of())); // the same seed nodes and default key prefix
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
