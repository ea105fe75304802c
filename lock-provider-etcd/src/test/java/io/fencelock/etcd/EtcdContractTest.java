package io.fencelock.etcd;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.etcd.EtcdServer;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The whole TCK against a single etcd node (see EtcdServer for where it comes from). */
class EtcdContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed request must end quickly. */
    private static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(EtcdServer.shared());
    }

    /** For a single node or a cluster: the cluster adds controls per member ({@code replicaSet()}). */
    static BackendFixture fixtureOn(EtcdServer server) {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return EtcdLockBackend.builder().endpoints(server.endpoints()).build();
            }

            @Override
            public String description() {
                return server.description();
            }

            /** A single node, or every member of a cluster at once. */
            @Override
            public Optional<ServerControl> control() {
                return server.control();
            }

            @Override
            public Optional<ReplicaSetControl> replicaSet() {
                return server.replicaSet();
            }

            /** {@code etcd://host:port,...} speaks plain HTTP only: none for https endpoints from env. */
            @Override
            public Optional<ClientConnection> clientConnection() {
                if (!server.endpoints().stream().allMatch(e -> e.startsWith("http://"))) {
                    return Optional.empty();
                }
                String hosts = server.endpoints().stream().map(e -> e.substring("http://".length()))
                        .collect(Collectors.joining(","));
                return Optional.of(new ClientConnection("etcd://" + hosts, Map.of())); // default key prefix
            }

            /**
             * A single node's endpoint; for a cluster, its first member's: the proxied backend is given
             * only that endpoint, so it reaches the cluster through that member alone.
             */
            @Override
            public Optional<InetSocketAddress> proxyTarget() {
                return server.address();
            }

            /** Through {@code via} only; the watch for releases rides the same client, so it goes through {@code via} too. */
            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return EtcdLockBackend.builder().endpoints(server.endpointVia(via)).requestTimeout(PROXIED_TIMEOUT).build();
            }
        };
    }
}
