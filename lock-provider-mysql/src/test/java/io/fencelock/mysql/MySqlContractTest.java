package io.fencelock.mysql;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.fixture.MariaDbServer;
import io.fencelock.tck.fixture.ServerControl;

import java.util.Optional;

/** The whole TCK against a real MySQL or MariaDB (see MariaDbServer for where it comes from). */
class MySqlContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        MariaDbServer server = MariaDbServer.shared();
        String url = server.createDatabase("contract");
        // create the tables once, as an operator would; every backend after that only self-checks them
        MySqlLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
                .createTable(true).build().close();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return MySqlLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password())
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
