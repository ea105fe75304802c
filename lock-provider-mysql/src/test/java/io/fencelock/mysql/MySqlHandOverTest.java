package io.fencelock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.tck.spi.HandOverChecks;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hand-over UPDATE on a real MariaDB (or MySQL): the SPI's promises (HandOverChecks), on the
 * backend's own pool and on an application's pool without multi-statements that counts affected rows,
 * where the token still comes back through LAST_INSERT_ID. There is no release signal: the other
 * client's waiter polls, and gets the name after the new holder's release.
 */
class MySqlHandOverTest {
    /** Expired by the time the next statement runs: a round trip takes far longer than this. */
    private static final Duration EXPIRED_AT_ONCE = Duration.ofNanos(1_000);
    /** How far a grant's reported expiry may be from the stored one: a loopback round trip and then some. */
    private static final Duration SAME_MOMENT = Duration.ofMillis(50);

    private static MariaDbServer server;
    private static String url;
    private static MySqlLockBackend backend;

    @BeforeAll
    static void openBackend() {
        server = MariaDbServer.shared();
        url = server.createDatabase("mysql_hand_over");
        backend = builder().createTable(true).build();
    }

    @AfterAll
    static void closeBackend() {
        if (backend != null) {
            backend.close();
        }
    }

    private static MySqlLockBackend.Builder builder() {
        return MySqlLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password());
    }

    private static String name() {
        return "hand-over/" + UUID.randomUUID();
    }

    @Test
    void aHandOverReplacesTheHolderWithAHigherToken() {
        HandOverChecks.assertAHandOverReplacesTheHolder(backend, name(), SAME_MOMENT);
    }

    @Test
    void aHandOverFromALeaseThatDoesNotHoldChangesNothing() throws InterruptedException {
        try (MySqlLockBackend otherClient = builder().build()) {
            HandOverChecks.assertAHandOverIsOwnerChecked(
                    backend, otherClient, MySqlHandOverTest::name, EXPIRED_AT_ONCE);
        }
    }

    @Test
    void aWaiterOfAnotherClientGetsTheNameAfterAHandOver() throws Exception {
        HandOverChecks.assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
                builder().build(), builder().build(), name());
    }

    /** An application's pool in transaction mode, without multi-statements, counting affected rows. */
    @Test
    void aHandOverOnTheApplicationsPoolWithoutMultiStatementsCountingAffectedRows() throws InterruptedException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(server.user());
        config.setPassword(server.password());
        config.setAutoCommit(false);
        config.setMaximumPoolSize(2);
        config.addDataSourceProperty("useAffectedRows", "true");
        try (HikariDataSource appPool = new HikariDataSource(config);
                MySqlLockBackend onAppPool =
                        MySqlLockBackend.builder().dataSource(appPool).build()) {
            assertThat(onAppPool.multiStatements()).isFalse();
            HandOverChecks.assertAHandOverReplacesTheHolder(onAppPool, name(), SAME_MOMENT);
            HandOverChecks.assertAHandOverIsOwnerChecked(onAppPool, backend, MySqlHandOverTest::name, EXPIRED_AT_ONCE);
        }
    }
}
