package io.fencelock.mongo;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.MongoServer;

/** The whole TCK against the Mongo fixture (an env URI, a mongo:7 replica set, or the in-JVM mongo-java-server). */
class MongoContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        MongoServer server = MongoServer.shared();
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
        };
    }
}
