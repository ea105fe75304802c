package io.fencelock.postgres;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.PostgresServer;
import io.fencelock.tck.fixture.ServerControl;

import java.util.Optional;

/** The whole TCK against a real PostgreSQL (see PostgresServer for where it comes from). */
class PostgresContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        PostgresServer server = PostgresServer.shared();
        String url = server.createDatabase("contract");
        // create the schema once, as an operator would; every backend after that only self-checks it
        PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                .createTable(true).build().close();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                        .poolSize(2).build();
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
