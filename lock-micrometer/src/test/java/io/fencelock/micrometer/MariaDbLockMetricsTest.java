package io.fencelock.micrometer;

import io.fencelock.mysql.MySqlLockBackend;
import io.fencelock.testservers.common.JdbcFixtures;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.mysql.MariaDbServer;
import org.junit.jupiter.api.BeforeAll;

/** The meters on a real MariaDB or MySQL (see MariaDbServer for where it comes from), on a database of their own. */
class MariaDbLockMetricsTest extends ServerLockMetricsContract {
    private static ServerFixture fixture;

    @BeforeAll
    static void createDatabase() {
        fixture = JdbcFixtures.onNewDatabase(MariaDbServer.shared(), "metrics", MySqlLockBackend::builder);
    }

    @Override
    protected ServerFixture fixture() {
        return fixture;
    }

    @Override
    protected String expectedBackendName() {
        return "mysql";
    }
}
