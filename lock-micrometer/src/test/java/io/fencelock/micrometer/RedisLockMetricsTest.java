package io.fencelock.micrometer;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.redis.RedisLockBackend;
import io.fencelock.tck.ClientConnection;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;

/** The meters on a real Redis (see RedisServer for where it comes from). */
class RedisLockMetricsTest extends ServerLockMetricsContract {
    private static ServerFixture fixture;

    @BeforeAll
    static void findServer() {
        RedisServer server = RedisServer.shared();
        fixture = ServerFixture.on(
                        server,
                        () -> RedisLockBackend.builder().uri(server.uri()).build())
                .withClient(new ClientConnection(server.uri(), Map.of()))
                .withProxy(via -> RedisLockBackend.builder()
                        .uri(server.uriVia(via))
                        .connectTimeout(PROXIED_TIMEOUT)
                        .commandTimeout(PROXIED_TIMEOUT)
                        .build());
    }

    @Override
    protected ServerFixture fixture() {
        return fixture;
    }

    @Override
    protected String expectedBackendName() {
        return "redis";
    }
}
