package io.fencelock.postgres;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.JdbcFixtures;
import io.fencelock.testservers.postgres.PostgresServer;

/**
 * The whole TCK against a real PostgreSQL (see PostgresServer for where it comes from), on a database
 * of its own; through the fault proxy the LISTEN connection is built from the same URL, so it goes
 * through the proxy too.
 */
class PostgresContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return JdbcFixtures.onNewDatabase(PostgresServer.shared(), "contract", PostgresLockBackend::builder);
    }
}
