package io.fencelock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What is MySQL's and MariaDB's own in shared grants: the companion table and procedures, the purge, pools without multi-statements. */
class MySqlSharedGrantsTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private static MariaDbServer server;
    private static String url;
    private static MySqlLockBackend backend;

    @BeforeAll
    static void openBackend() {
        server = MariaDbServer.shared();
        url = server.createDatabase("mysql_shared");
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
        return "shared/" + UUID.randomUUID();
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    private static SharedRequest permits(int k, int limit) {
        return new SharedRequest(LockMode.PERMITS, k, limit, id(), false, false);
    }

    @Test
    void aPurgeKeepsLiveSharedNamesAndTokensRiseAcrossIt() {
        String name = name();
        String a = id();
        String b = id();
        long first = backend.tryAcquireShared(name, a, TTL, permits(1, 2), LockMetadata.NONE)
                .token();
        long second = backend.tryAcquireShared(name, b, TTL, permits(1, 2), LockMetadata.NONE)
                .token();
        assertThat(second).isGreaterThan(first);
        // a writer's intent alone keeps a name alive too
        String waited = name();
        String reader = id();
        backend.tryAcquireShared(
                waited, reader, TTL, new SharedRequest(LockMode.READ, 1, 0, id(), false, false), LockMetadata.NONE);
        String writerWaiter = id();
        assertThat(backend.tryAcquireShared(
                                waited,
                                id(),
                                TTL,
                                new SharedRequest(LockMode.WRITE, 1, 0, writerWaiter, true, false),
                                LockMetadata.NONE)
                        .acquired())
                .isFalse();
        assertThat(backend.release(waited, reader)).isTrue();

        backend.purgeFree(Duration.ZERO);
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.holders()).extracting(h -> h.leaseId()).containsExactly(a, b);
        assertThat(backend.tryAcquireShared(
                                waited,
                                id(),
                                TTL,
                                new SharedRequest(LockMode.READ, 1, 0, id(), false, false),
                                LockMetadata.NONE)
                        .acquired())
                .as("the writer's intent outlived the purge: no new reader")
                .isFalse();

        assertThat(backend.release(name, a)).isTrue();
        assertThat(backend.release(name, b)).isTrue();
        assertThat(backend.release(waited, writerWaiter))
                .as("a withdrawn intent frees no grant")
                .isFalse();
        assertThat(backend.purgeFree(Duration.ZERO)).isGreaterThanOrEqualTo(2);
        assertThat(backend.inspect(name)).as("purged once free").isEmpty();
        AcquireResult after = backend.tryAcquire(name, id(), TTL);
        assertThat(after.token()).as("a new row starts above the purged tokens").isGreaterThan(second);
    }

    @Test
    void theMutexAndSharedGrantsOfOneNameMeetAsTheContractSays() {
        String name = name();
        String holder = id();
        backend.tryAcquireShared(name, holder, TTL, permits(2, 3), LockMetadata.of("me", "job", Map.of("k", "v")));
        assertThatThrownBy(() -> backend.tryAcquire(name, id(), TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a semaphore of 3 permits; a request for a mutex is refused");
        assertThatThrownBy(() -> backend.tryAcquireShared(name, id(), TTL, permits(1, 5), LockMetadata.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("semaphore of 3 permits; a request for a semaphore of 5 permits");
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.kind()).isEqualTo(LockMode.PERMITS);
        assertThat(info.limit()).isEqualTo(3);
        assertThat(info.permitsHeld()).isEqualTo(2);
        assertThat(info.metadata().type()).isEqualTo("job");
        assertThat(info.heldSince()).isNotNull();
        assertThat(backend.list("shared/")).extracting(LockInfo::name).contains(name);
        backend.release(name, holder);

        // a fair mutex waits in line behind an ordinary holder, and holds against it once granted
        String mutex = id();
        long mutexToken = backend.tryAcquire(name, mutex, TTL).token();
        SharedRequest fair = new SharedRequest(LockMode.EXCLUSIVE, 1, 0, id(), true, true);
        String fairLease = id();
        AcquireResult waiting = backend.tryAcquireShared(name, fairLease, TTL, fair, LockMetadata.NONE);
        assertThat(waiting.acquired()).isFalse();
        assertThat(waiting.holderRemaining()).isPositive();
        backend.release(name, mutex);
        AcquireResult granted = backend.tryAcquireShared(name, fairLease, TTL, fair, LockMetadata.NONE);
        assertThat(granted.token()).isGreaterThan(mutexToken);
        AcquireResult refused = backend.tryAcquire(name, id(), TTL);
        assertThat(refused.acquired()).isFalse();
        assertThat(refused.holderRemaining()).as("the fair holder's time").isPositive();
    }

    @Test
    void oneRenewalBatchCoversMutexAndSharedLeasesAndRaisesSharedTokensByThePeriod() {
        String mutexName = name();
        String mutex = id();
        long mutexToken = backend.tryAcquire(mutexName, mutex, TTL).token();
        String sharedName = name();
        String reader = id();
        long readToken = backend.tryAcquireShared(
                        sharedName,
                        reader,
                        TTL,
                        new SharedRequest(LockMode.READ, 1, 0, id(), false, false),
                        LockMetadata.NONE)
                .token();
        List<RenewResult> results = backend.renew(List.of(
                new RenewRequest(mutexName, mutex, TTL, null),
                new RenewRequest(sharedName, reader, TTL, Duration.ofNanos(1_000)),
                new RenewRequest(sharedName, id(), TTL, null)));
        assertThat(results.get(0))
                .isEqualTo(RenewResult.renewed(mutexToken, results.get(0).expiresAt()));
        assertThat(results.get(1).renewed()).isTrue();
        assertThat(results.get(1).token())
                .as("a new token from the name's counter")
                .isGreaterThan(readToken);
        assertThat(results.get(2).renewed()).isFalse();
        assertThat(backend.downgrade(sharedName, reader, TTL).token())
                .as("a reader's downgrade renews, token kept")
                .isEqualTo(results.get(1).token());
    }

    @Test
    void onAPoolWithoutMultiStatementsOrWithAffectedRowsEveryOperationStillWorks() throws Exception {
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
            String name = name();
            String lease = id();
            assertThat(onAppPool
                            .tryAcquireShared(name, lease, TTL, permits(1, 1), LockMetadata.NONE)
                            .acquired())
                    .isTrue();
            assertThatThrownBy(() -> onAppPool.tryAcquire(name, id(), TTL))
                    .as("a refusal without LAST_INSERT_ID still names the kind")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("semaphore of 1 permits");
            assertThat(onAppPool
                            .renew(List.of(new RenewRequest(name, lease, TTL, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            assertThat(onAppPool.release(name, lease)).isTrue();
            assertThat(onAppPool.release(name, lease)).isFalse();
        }
    }

    @Test
    void theStartUpCheckNamesWhatATableOfTheVersionBeforeLacksAndCreateTableAddsIt() throws SQLException {
        String t = "preshared_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        builder().table(t).createTable(true).build().close();
        execute(
                "DROP TABLE " + t + "_share",
                "DROP PROCEDURE " + t + "_s_acq",
                "ALTER PROCEDURE " + t + "_s_ren COMMENT 'fencelock shared grants 0'",
                "ALTER TABLE " + t + " DROP COLUMN share_kind, DROP COLUMN share_limit, DROP COLUMN share_until,"
                        + " DROP COLUMN share_held_until");
        assertThatThrownBy(() -> builder().table(t).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("table " + t + "_share (shared grants) is missing")
                .hasMessageContaining("procedures [" + t + "_s_acq, " + t + "_s_ren]")
                .hasMessageContaining("ADD COLUMN share_kind")
                .hasMessageContaining("createTable(true)");
        try (MySqlLockBackend upgraded = builder().table(t).createTable(true).build()) {
            assertThat(upgraded.tryAcquireShared(name(), id(), TTL, permits(1, 2), LockMetadata.NONE)
                            .acquired())
                    .isTrue();
        }
        builder().table(t).build().close();
        assertThat(MySqlLockBackend.ddl(null, t))
                .contains("CREATE TABLE IF NOT EXISTS `" + t + "_share`")
                .contains("DELIMITER //")
                .contains("CREATE PROCEDURE `" + t + "_s_ren`");
    }

    private static void execute(String... statements) throws SQLException {
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }
}
