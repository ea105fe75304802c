package io.fencelock.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hand-over UPDATE on a real MariaDB (or MySQL), beside the TCK's hand-over properties that the
 * contract runs: the record it writes, on the backend's own pool and on an application's pool without
 * multi-statements that counts affected rows (where the token still comes back through LAST_INSERT_ID,
 * and a refusal changes nothing). There is no release signal: the other
 * client's waiter polls, and gets the name after the new holder's release.
 */
class MySqlHandOverTest {
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
    void aHandOverWritesTheRecordAsAGrantDoes() {
        HandOverProviderChecks.assertAHandOverWritesTheRecordAsAGrant(backend, name(), SAME_MOMENT);
    }

    @Test
    void aWaiterOfAnotherClientGetsTheNameAfterAHandOver() throws Exception {
        HandOverProviderChecks.assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
                builder().build(), builder().build(), name());
    }

    /** An application's pool in transaction mode, without multi-statements, counting affected rows. */
    @Test
    void aHandOverOnTheApplicationsPoolWithoutMultiStatementsCountingAffectedRows() {
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
            HandOverProviderChecks.assertAHandOverWritesTheRecordAsAGrant(onAppPool, name(), SAME_MOMENT);
            String name = name();
            String holder = UUID.randomUUID().toString();
            AcquireResult held = backend.tryAcquire(name, holder, Duration.ofSeconds(30));
            assertThat(onAppPool
                            .handOver(
                                    name,
                                    UUID.randomUUID().toString(),
                                    UUID.randomUUID().toString(),
                                    Duration.ofSeconds(30),
                                    LockMetadata.NONE)
                            .acquired())
                    .as("a stranger's hand-over: no row changed")
                    .isFalse();
            LockInfo after = backend.inspect(name).orElseThrow();
            assertThat(after.holder()).contains(holder);
            assertThat(after.token()).isEqualTo(held.token());
        }
    }
}
