package io.fencelock.mysql;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.JdbcFixtures;
import io.fencelock.testservers.mysql.MariaDbServer;

/**
 * The whole TCK against a real MySQL or MariaDB (see MariaDbServer for where it comes from), on a
 * database of its own; through the fault proxy InnoDB lock waits are capped at half the proxied timeout.
 */
class MySqlContractTest extends LockBackendContract {

    @Override
    protected BackendFixture fixture() {
        return JdbcFixtures.onNewDatabase(MariaDbServer.shared(), "contract", MySqlLockBackend::builder);
    }
}
