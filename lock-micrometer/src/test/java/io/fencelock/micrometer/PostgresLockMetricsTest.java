package io.fencelock.micrometer;

import io.fencelock.postgres.PostgresLockBackend;
import io.fencelock.testservers.common.JdbcFixtures;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.postgres.PostgresServer;
import org.junit.jupiter.api.BeforeAll;

/** The meters on a real PostgreSQL (see PostgresServer for where it comes from), on a database of their own. */
class PostgresLockMetricsTest extends ServerLockMetricsContract {
    private static ServerFixture fixture;

    @BeforeAll
    static void createDatabase() {
        fixture = JdbcFixtures.onNewDatabase(PostgresServer.shared(), "metrics", PostgresLockBackend::builder);
    }

    @Override
    protected ServerFixture fixture() {
        return fixture;
    }

    @Override
    protected String expectedBackendName() {
        return "postgres";
    }
}
