package io.fencelock.mongo;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.mongo.MongoServer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole TCK against a Mongo server of its own (an env URI, a mongo:7 replica set, or the in-JVM
 * mongo-java-server): of its own so that, in-JVM, it has a {@code control()} the shared server must not give.
 */
class MongoContractTest extends LockBackendContract {
    private MongoServer server;

    @Override
    protected BackendFixture fixture() {
        server = MongoServer.start();
        return fixtureOn(server);
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * A database of its own on {@code server}. In-JVM, its control's stop is a kill, and start() brings
     * up an <em>empty</em> server (no disk), so the token history is gone after a restart; pause()
     * throws (SIGSTOP would freeze the test JVM).
     */
    static BackendFixture fixtureOn(MongoServer server) {
        String database = server.uniqueDatabase("contract");
        return ServerFixture.on(
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
}
