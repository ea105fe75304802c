package io.fencelock.etcd;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.EtcdServer;
import io.fencelock.tck.fixture.ServerControl;

import java.util.Optional;

/** The whole TCK against a single etcd node (see EtcdServer for where it comes from). */
class EtcdContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return fixtureOn(EtcdServer.shared());
    }

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

            @Override
            public Optional<ServerControl> control() {
                return server.control();
            }
        };
    }
}
