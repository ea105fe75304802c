package io.fencelock.micrometer;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.etcd.EtcdLockBackend;
import io.fencelock.tck.ClientConnection;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.etcd.EtcdServer;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;

/** The meters on a real etcd node (see EtcdServer for where it comes from). */
class EtcdLockMetricsTest extends ServerLockMetricsContract {
    private static ServerFixture fixture;

    @BeforeAll
    static void findServer() {
        EtcdServer server = EtcdServer.shared();
        if (!server.endpoints().stream().allMatch(e -> e.startsWith("http://"))) {
            // etcd://host:port,... speaks plain HTTP only, and these tests open clients by URI
            throw new IllegalStateException("these tests need an etcd on plain http:// endpoints");
        }
        String hosts = server.endpoints().stream()
                .map(e -> e.substring("http://".length()))
                .collect(Collectors.joining(","));
        fixture = ServerFixture.on(
                        server,
                        () -> EtcdLockBackend.builder()
                                .endpoints(server.endpoints())
                                .build())
                .withClient(new ClientConnection("etcd://" + hosts, Map.of()))
                .withProxy(via -> EtcdLockBackend.builder()
                        .endpoints(server.endpointVia(via))
                        .requestTimeout(PROXIED_TIMEOUT)
                        .build());
    }

    @Override
    protected ServerFixture fixture() {
        return fixture;
    }

    @Override
    protected String expectedBackendName() {
        return "etcd";
    }
}
