package io.fencelock.zookeeper;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** The whole TCK against a single ZooKeeper server (see ZooKeeperServer for where it comes from). */
class ZooKeeperContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed request must end quickly. */
    private static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(ZooKeeperServer.shared());
    }

    /** For a single node or an ensemble: the ensemble adds controls per member ({@code replicaSet()}). */
    static BackendFixture fixtureOn(ZooKeeperServer server) {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return new ZooKeeperLockBackendProvider().open(server.url(), Map.of());
            }

            @Override
            public String description() {
                return server.description();
            }

            /** A single node, or every member of an ensemble at once. */
            @Override
            public Optional<ServerControl> control() {
                return server.control();
            }

            @Override
            public Optional<ReplicaSetControl> replicaSet() {
                return server.replicaSet();
            }

            @Override
            public Optional<ClientConnection> clientConnection() {
                return Optional.of(new ClientConnection(server.url(), Map.of())); // default base path
            }

            /** A single node's address; for an ensemble, its first member's (the proxied backend reaches the ensemble through it alone). */
            @Override
            public Optional<InetSocketAddress> proxyTarget() {
                return server.address();
            }

            /** Through {@code via} only: every session, the watches' included, goes through it. */
            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return new ZooKeeperLockBackendProvider()
                        .open(server.urlVia(via), Map.of("requestTimeout", PROXIED_TIMEOUT.toString()));
            }
        };
    }
}
