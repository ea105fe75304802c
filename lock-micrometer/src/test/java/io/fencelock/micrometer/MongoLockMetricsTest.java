package io.fencelock.micrometer;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.mongo.MongoLockBackend;
import io.fencelock.tck.ClientConnection;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.mongo.MongoServer;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;

/** The meters on a real MongoDB (see MongoServer for where it comes from), on a database of their own. */
class MongoLockMetricsTest extends ServerLockMetricsContract {
    private static ServerFixture fixture;

    @BeforeAll
    static void createDatabase() {
        MongoServer server = MongoServer.shared();
        String database = server.uniqueDatabase("metrics");
        fixture = ServerFixture.on(
                        server,
                        () -> MongoLockBackend.builder()
                                .uri(server.uri())
                                .database(database)
                                .build())
                .withClient(new ClientConnection(server.uri(), Map.of("database", database)))
                .withProxy(via -> MongoLockBackend.builder()
                        .uri(server.uriVia(via))
                        .database(database)
                        .timeout(PROXIED_TIMEOUT)
                        .build());
    }

    @Override
    protected ServerFixture fixture() {
        return fixture;
    }

    @Override
    protected String expectedBackendName() {
        return "mongo";
    }
}
