package io.fencelock.etcd;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.etcd.EtcdServer;
import java.util.Map;
import java.util.stream.Collectors;

/** The whole TCK against a single etcd node (see EtcdServer for where it comes from). */
class EtcdContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(EtcdServer.shared());
    }

    /**
     * For a single node or a cluster: the cluster's control acts on every member at once, and its
     * {@code replicaSet()} on each. The fault proxy stands before a single node, or a cluster's first
     * member: the proxied backend is given only that endpoint, so it reaches the cluster through that
     * member alone, its watch for releases too (it rides the same client).
     */
    static BackendFixture fixtureOn(EtcdServer server) {
        ServerFixture fixture = ServerFixture.on(
                        server,
                        () -> EtcdLockBackend.builder()
                                .endpoints(server.endpoints())
                                .build())
                .withProxy(via -> EtcdLockBackend.builder()
                        .endpoints(server.endpointVia(via))
                        .requestTimeout(PROXIED_TIMEOUT)
                        .build());
        // etcd://host:port,... speaks plain HTTP only: no client connection for https endpoints from env
        if (!server.endpoints().stream().allMatch(e -> e.startsWith("http://"))) {
            return fixture;
        }
        String hosts = server.endpoints().stream()
                .map(e -> e.substring("http://".length()))
                .collect(Collectors.joining(","));
        return fixture.withClient(new ClientConnection("etcd://" + hosts, Map.of())); // default key prefix
    }
}
