package io.fencelock.mongo;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.mongo.MongoServer;
import io.fencelock.tck.fixture.ServerControl;
import org.junit.jupiter.api.AfterAll;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The whole TCK against a Mongo server of its own (an env URI, a mongo:7 replica set, or the in-JVM
 * mongo-java-server): of its own so that, in-JVM, it has a {@code control()} the shared server must not give.
 */
class MongoContractTest extends LockBackendContract {
    /** Through the fault proxy a swallowed call must end quickly. */
    private static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

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

    /** A database of its own on {@code server}. */
    static BackendFixture fixtureOn(MongoServer server) {
        String database = server.uniqueDatabase("contract");
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return MongoLockBackend.builder().uri(server.uri()).database(database).build();
            }

            @Override
            public String description() {
                return server.description();
            }

            /**
             * In-JVM only: stop = kill, and start() brings up an <em>empty</em> server (no disk), so the
             * token history is gone after a restart; pause() throws (SIGSTOP would freeze the test JVM).
             */
            @Override
            public Optional<ServerControl> control() {
                return server.control();
            }

            @Override
            public Optional<ClientConnection> clientConnection() {
                return Optional.of(new ClientConnection(server.uri(), Map.of("database", database)));
            }

            @Override
            public Optional<InetSocketAddress> proxyTarget() {
                return server.address();
            }

            @Override
            public LockBackend openBackendVia(InetSocketAddress via) {
                return MongoLockBackend.builder().uri(server.uriVia(via)).database(database).timeout(PROXIED_TIMEOUT).build();
            }
        };
    }
}
