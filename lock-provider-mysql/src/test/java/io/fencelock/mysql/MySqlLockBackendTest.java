package io.fencelock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.tck.CredentialChecks;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.tck.spi.LockBackendSpiTemplate;
import io.fencelock.tck.spi.SpiHarness;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SPI template's tests, and what is MySQL's and MariaDB's own: the floor and the purge, InnoDB conflicts, pools, the table checks. */
class MySqlLockBackendTest extends LockBackendSpiTemplate {
    /** Expired by the time the next statement runs: a round trip takes far longer than this. */
    private static final Duration EXPIRED_AT_ONCE = Duration.ofNanos(1_000);
    /** How far a grant's reported expiry may be from the stored one: a loopback round trip and then some. */
    private static final Duration SAME_MOMENT = Duration.ofMillis(50);

    private static MariaDbServer server;
    private static String url;
    private static MySqlLockBackend backend;
    private static SpiHarness harness;

    @BeforeAll
    static void openBackend() {
        server = MariaDbServer.shared();
        url = server.createDatabase("mysql_backend");
        backend = builder().createTable(true).build();
        harness = SpiHarness.builder(backend, "mysql")
                // the jdbc:mariadb: spelling of the URL: the provider takes both schemes
                .uri(
                        "jdbc:mariadb:" + url.substring("jdbc:mysql:".length()),
                        Map.of(
                                "user",
                                server.user(),
                                "password",
                                server.password() == null ? "" : server.password(),
                                "poolSize",
                                "1",
                                "createTable",
                                "false"))
                .unreachableUri(password ->
                        "jdbc:mysql://app:" + password + "@127.0.0.1:1/none?connectTimeout=1000&password=" + password)
                .malformedPortUris(secret -> List.of(
                        "jdbc:mysql://app:" + secret + "@127.0.0.1:notaport/db",
                        "jdbc:mariadb://127.0.0.1:70000/db",
                        "jdbc:mysql://h1:3306,h2:x/db"))
                .badSettings(Map.of(
                        Map.of("table", "bad-name"),
                        "bad-name",
                        Map.of("poolSize", "many"),
                        "poolSize",
                        Map.of("schema", "app; drop table x"),
                        "schema"))
                .misspelledProperty("tabel")
                .grantExpiryPrecision(SAME_MOMENT)
                .build();
    }

    @Override
    protected SpiHarness harness() {
        return harness;
    }

    @Test
    void theOwnPoolAllowsMultiStatementsAndAGrantExpiresAboutNowPlusItsTtl() {
        assertThat(backend.multiStatements())
                .as("the own pool allows multi-statements (a renewal and its read)")
                .isTrue();
        Instant before = Instant.now();
        AcquireResult granted = backend.tryAcquire(name(), lease(), TTL);
        // server and test share this machine's clock: the expiry is about now + TTL, in UTC
        assertThat(granted.expiresAt())
                .isBetween(
                        before.plus(TTL).minusSeconds(5),
                        Instant.now().plus(TTL).plusSeconds(5));
    }

    /**
     * MariaDB's sql_mode {@code SIMULTANEOUS_ASSIGNMENT} (and {@code ORACLE}, which brings it) evaluates every
     * assignment of an UPDATE, and of an {@code ON DUPLICATE KEY UPDATE}, on the row as it was; the acquire's
     * assignments test the lease id the ones before them wrote. {@code EMPTY_STRING_IS_NULL} reads the purge's
     * {@code ''} as NULL. The own pool sets its sessions' sql_mode whatever the URL or the server says, so a grant
     * keeps its expiry, a rival is refused and a purge deletes; an application's pool whose sessions carry one of
     * them is refused before any table is touched.
     */
    @Test
    void sqlModesThatChangeTheStatementsNeitherBreakTheOwnPoolNorGoUnnoticed() throws Exception {
        try (Connection c = server.connect(url);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT VERSION()")) {
            rs.next();
            Assumptions.assumeTrue(
                    rs.getString(1).contains("MariaDB"),
                    "SIMULTANEOUS_ASSIGNMENT, ORACLE and EMPTY_STRING_IS_NULL are MariaDB's (MySQL has none of them)");
        }
        for (String mode : List.of("SIMULTANEOUS_ASSIGNMENT", "ORACLE", "EMPTY_STRING_IS_NULL")) {
            String withMode = url + (url.contains("?") ? "&" : "?") + "sessionVariables=sql_mode=" + mode;
            try (MySqlLockBackend own = MySqlLockBackend.builder()
                    .jdbcUrl(withMode)
                    .user(server.user())
                    .password(server.password())
                    .build()) {
                String name = name();
                String first = lease();
                for (int i = 0; i < 2; i++) { // a fresh row, then a row whose last grant was released
                    AcquireResult granted = own.tryAcquire(name, first, TTL);
                    assertThat(granted.acquired()).as("%s, round %d", mode, i).isTrue();
                    assertThat(own.tryAcquire(name, lease(), TTL).acquired())
                            .as("%s: a rival while the grant lives (round %d)", mode, i)
                            .isFalse();
                    assertThat(own.release(name, first)).isTrue();
                    first = lease();
                }
                assertThat(own.purgeFree(Duration.ZERO))
                        .as("%s: the released row purged", mode)
                        .isPositive();
            }
            HikariConfig config = appPoolConfig(server, url, 1);
            config.setConnectionInitSql("SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, '," + mode + "')");
            assertRefusedAtStartUp(config, mode.equals("ORACLE") ? "SIMULTANEOUS_ASSIGNMENT" : mode);
        }
    }

    /**
     * Connector/J learns {@code NO_BACKSLASH_ESCAPES} when it connects, and escapes a client-side statement's
     * values by it. A pool whose init SQL sets the mode afterwards leaves the driver escaping a backslash for the
     * other reading (without the check, an owner's backslash was stored doubled): such a pool is refused at
     * start-up. A server that has the mode from the start works, on an application's pool and on the
     * own one, and the owner reads back as written.
     */
    @Test
    void aPoolWhoseDriverEscapesOtherwiseThanItsSessionsReadIsRefused() throws Exception {
        HikariConfig lateMode = appPoolConfig(server, url, 1);
        lateMode.setConnectionInitSql("SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',NO_BACKSLASH_ESCAPES')");
        assertRefusedAtStartUp(lateMode, "NO_BACKSLASH_ESCAPES");
        LockMetadata owner = LockMetadata.of("it\\'s me \\\" -- ", null, Map.of("note", "a\\'b"));
        try (MariaDbServer own = MariaDbServer.start(MariaDbServer.Source.BINARIES)) {
            String ownUrl = own.createDatabase("mysql_escapes");
            try (Connection c = own.connect(ownUrl);
                    Statement s = c.createStatement()) {
                s.execute("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
            }
            try (HikariDataSource appPool = new HikariDataSource(appPoolConfig(own, ownUrl, 1));
                    MySqlLockBackend onAppPool = MySqlLockBackend.builder()
                            .dataSource(appPool)
                            .createTable(true)
                            .build();
                    MySqlLockBackend onOwnPool = MySqlLockBackend.builder()
                            .jdbcUrl(ownUrl)
                            .user(own.user())
                            .password(own.password())
                            .build()) {
                for (MySqlLockBackend b : List.of(onAppPool, onOwnPool)) {
                    String name = name();
                    String holder = lease();
                    assertThat(b.tryAcquire(name, holder, TTL, owner).acquired())
                            .isTrue();
                    LockInfo held = b.inspect(name).orElseThrow();
                    assertThat(held.metadata()).isEqualTo(owner);
                    assertThat(b.release(name, holder)).isTrue();
                }
            }
        }
    }

    /** An application's HikariCP pool of {@code size} on {@code jdbcUrl} of {@code on}, as a test configures it. */
    private static HikariConfig appPoolConfig(MariaDbServer on, String jdbcUrl, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(on.user());
        config.setPassword(on.password());
        config.setMaximumPoolSize(size);
        return config;
    }

    /** A backend on a pool of {@code config} fails to start with an IllegalStateException naming {@code named}. */
    private static void assertRefusedAtStartUp(HikariConfig config, String named) {
        try (HikariDataSource appPool = new HikariDataSource(config)) {
            assertThatThrownBy(() -> MySqlLockBackend.builder()
                            .dataSource(appPool)
                            .build()
                            .close())
                    .as(named)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(named);
        }
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
        return "test/" + UUID.randomUUID();
    }

    @Test
    void anAcquireRetriedByTheHoldingLeaseIsGrantedAgainWithAHigherToken() {
        String name = name();
        String holder = lease();
        AcquireResult first = backend.tryAcquire(name, holder, TTL);
        AcquireResult again = backend.tryAcquire(name, holder, TTL);
        assertThat(again.acquired())
                .as("the same lease id (a retry after a lost answer)")
                .isTrue();
        assertThat(again.token()).isGreaterThan(first.token());
        assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                .as("another lease")
                .isFalse();
    }

    @Test
    void aGrantReportsTheStoredExpiryToWithinARoundTripAndNeverMuchLater() {
        for (int i = 0; i < 20; i++) {
            String name = name();
            AcquireResult granted = backend.tryAcquire(name, lease(), TTL);
            LockInfo stored = backend.inspect(name).orElseThrow();
            assertThat(granted.expiresAt())
                    .isCloseTo(stored.expiresAt(), within(SAME_MOMENT))
                    .isBefore(stored.expiresAt().plusMillis(5));
        }
    }

    @Test
    void purgeDeletesOnlyLongFreeRowsAndTokensStillRise() {
        String purged = name();
        String held = name();
        String holder = lease();
        long before = 0;
        for (int i = 0; i < 3; i++) { // a row whose token is above every new row's
            String l = lease();
            before = backend.tryAcquire(purged, l, TTL).token();
            backend.release(purged, l);
        }
        String heldBy = lease();
        backend.tryAcquire(held, heldBy, TTL);
        String expired = name();
        backend.tryAcquire(expired, holder, EXPIRED_AT_ONCE);

        assertThat(backend.purgeFree(Duration.ofHours(1)))
                .as("free for less than an hour")
                .isZero();
        assertThat(backend.inspect(purged)).isPresent();

        assertThat(backend.purgeFree(Duration.ZERO)).isGreaterThanOrEqualTo(2);
        assertThat(backend.inspect(purged)).isEmpty();
        assertThat(backend.inspect(expired)).as("an expired holder's record").isEmpty();
        assertThat(backend.inspect(held).orElseThrow().holder()).contains(heldBy);

        AcquireResult after = backend.tryAcquire(purged, lease(), TTL);
        assertThat(after.acquired()).isTrue();
        assertThat(after.token())
                .as("a new row starts above the floor the purge raised")
                .isGreaterThan(before);
        assertThat(backend.tryAcquire(name(), lease(), TTL).token())
                .as("so does any new name")
                .isGreaterThan(before);
        assertThatThrownBy(() -> backend.purgeFree(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void purgeWorksInBatchesOverManyRows() {
        int rows = MySqlLockBackend.PURGE_BATCH * 2 + 7;
        String prefix = "purge-" + UUID.randomUUID() + "/";
        long highest = 0;
        for (int i = 0; i < rows; i++) {
            highest = Math.max(
                    highest,
                    backend.tryAcquire(prefix + i, lease(), EXPIRED_AT_ONCE).token());
        }
        assertThat(backend.purgeFree(Duration.ZERO)).isGreaterThanOrEqualTo(rows);
        assertThat(backend.inspect(prefix + 0)).isEmpty();
        assertThat(backend.inspect(prefix + (rows - 1))).isEmpty();
        assertThat(backend.tryAcquire(prefix + 0, lease(), TTL).token()).isGreaterThan(highest);
    }

    @Test
    void deletingRowsBehindThePurgesBackWouldRestartTokens() throws SQLException {
        // Why purgeFree raises the floor: a row deleted by hand takes its token history with it.
        // This is the bigserial design's "cleanup + token + 1" flaw; the README says never to do it.
        try (MySqlLockBackend own = builder().table("by_hand").createTable(true).build()) {
            String name = name();
            long last = 0;
            for (int i = 0; i < 3; i++) {
                String l = lease();
                last = own.tryAcquire(name, l, TTL).token();
                own.release(name, l);
            }
            execute("DELETE FROM by_hand WHERE name = '" + name + "'");
            assertThat(own.tryAcquire(name, lease(), TTL).token())
                    .as("token after deleting the row by hand")
                    .isLessThan(last);
        }
    }

    @Test
    void purgesRacingAcquiresNeverLowerAToken() throws Exception {
        // Holders of two names hand them around while a purger deletes every free row as fast as it
        // can: every grant must still exceed the previous grant of its name.
        List<String> names = List.of(name(), name());
        Map<String, List<Long>> grants = new ConcurrentHashMap<>();
        names.forEach(n -> grants.put(n, new CopyOnWriteArrayList<>()));
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger purged = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            Future<?> purger = pool.submit(() -> {
                while (running.get()) {
                    purged.addAndGet(backend.purgeFree(Duration.ZERO));
                }
                return null;
            });
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int worker = w;
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 150; i++) {
                        String name = names.get((worker + i) % names.size());
                        String l = lease();
                        AcquireResult r = backend.tryAcquire(name, l, TTL);
                        if (r.acquired()) {
                            grants.get(name).add(r.token()); // recorded before the release lets the next holder in
                            backend.release(name, l);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            }
            running.set(false);
            purger.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
        } finally {
            running.set(false);
            pool.shutdownNow();
        }
        assertThat(purged.get()).as("rows purged during the run").isPositive();
        for (String name : names) {
            List<Long> tokens = grants.get(name);
            assertThat(tokens).as("grants of " + name).hasSizeGreaterThan(20);
            for (int i = 1; i < tokens.size(); i++) {
                assertThat(tokens.get(i))
                        .as("grant %d of %s after %s", i, name, tokens.subList(Math.max(0, i - 3), i))
                        .isGreaterThan(tokens.get(i - 1));
            }
        }
    }

    @Test
    void anAcquireDuringAPurgeWaitsForItAndStartsAboveTheRaisedFloorEvenInReadCommitted() throws Exception {
        // A purge frozen between its DELETE and its COMMIT, as purgeFree runs it: floor locked and
        // raised, the free row deleted. An acquire of that name must not read the old floor and then
        // insert a fresh row once the delete commits: it waits on the floor and starts above it.
        // READ COMMITTED (common on MySQL) is where a plain read would see the old floor; the statement
        // reads it with LOCK IN SHARE MODE (InnoDB would also lock it for an INSERT ... VALUES by itself,
        // but not for an INSERT ... SELECT, so the statement says so rather than rely on its form).
        HikariConfig config = appPoolConfig(server, url, 2);
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        String name = name();
        long token = 0;
        for (int i = 0; i < 5; i++) {
            String l = lease();
            token = backend.tryAcquire(name, l, TTL).token();
            backend.release(name, l);
        }
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (HikariDataSource readCommitted = new HikariDataSource(config);
                MySqlLockBackend onReadCommitted =
                        MySqlLockBackend.builder().dataSource(readCommitted).build();
                Connection purge = server.connect(url);
                Statement s = purge.createStatement()) {
            purge.setAutoCommit(false);
            long floor;
            try (ResultSet rs =
                    s.executeQuery("SELECT token_floor FROM fencelock_locks_floor WHERE id = 1 FOR UPDATE")) {
                rs.next();
                floor = rs.getLong(1);
            }
            s.executeUpdate(
                    "UPDATE fencelock_locks_floor SET token_floor = GREATEST(token_floor, " + token + ") WHERE id = 1");
            assertThat(s.executeUpdate("DELETE FROM fencelock_locks WHERE name = '" + name + "'"))
                    .isEqualTo(1);
            Future<AcquireResult> acquire = pool.submit(() -> onReadCommitted.tryAcquire(name, lease(), TTL));
            awaitAcquireWaitingForALock(acquire);
            assertThat(acquire).as("an acquire while the purge holds the floor").isNotDone();
            purge.commit();
            AcquireResult after = acquire.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            assertThat(after.acquired()).isTrue();
            assertThat(after.token())
                    .as("token after a purge that raced the acquire (floor was %d)", floor)
                    .isGreaterThan(token);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void renewsAThousandLeasesOfMixedTtlsInOneCallInRequestOrder() {
        List<RenewRequest> requests = new ArrayList<>();
        List<AcquireResult> grants = new ArrayList<>();
        String prefix = "batch-" + UUID.randomUUID() + "/";
        for (int i = 0; i < 1000; i++) {
            String name = prefix + i;
            String holder = lease();
            grants.add(backend.tryAcquire(name, holder, TTL));
            // three TTLs and a token period: four UPDATE statements and one read, one round trip
            Duration ttl = Duration.ofSeconds(60 + i % 3);
            requests.add(new RenewRequest(name, holder, ttl, i % 10 == 0 ? Duration.ofHours(1) : null));
        }
        requests.add(500, new RenewRequest(prefix + 7, "not-the-holder", TTL, null));
        requests.add(new RenewRequest(prefix + "never-taken", lease(), TTL, null));

        List<RenewResult> results = backend.renew(requests);

        assertThat(results).hasSize(1002);
        assertThat(results.get(500)).isEqualTo(RenewResult.rejected());
        assertThat(results.get(1001)).isEqualTo(RenewResult.rejected());
        List<RenewResult> real = new ArrayList<>(results.subList(0, 1001));
        real.remove(500);
        for (int i = 0; i < 1000; i++) {
            assertThat(real.get(i).renewed()).as("lease %d", i).isTrue();
            assertThat(real.get(i).token()).isEqualTo(grants.get(i).token());
            assertThat(real.get(i).expiresAt()).isAfter(grants.get(i).expiresAt());
        }
        assertThat(backend.renew(List.of())).isEmpty();
    }

    @Test
    void renewsMoreLeasesThanOneStatementTakes() {
        int leases = MySqlLockBackend.RENEW_CHUNK + 10;
        String prefix = "chunks-" + UUID.randomUUID() + "/";
        List<RenewRequest> requests = new ArrayList<>();
        for (int i = 0; i < leases; i++) {
            String holder = lease();
            backend.tryAcquire(prefix + i, holder, TTL);
            requests.add(new RenewRequest(prefix + i, holder, TTL, null));
        }
        assertThat(backend.renew(requests)).hasSize(leases).allMatch(RenewResult::renewed);
    }

    @Test
    void underscoresInAPrefixArePlainCharacters() {
        String id = UUID.randomUUID().toString();
        String prefix = "list-" + id + "/";
        for (String suffix : List.of("a", "_x")) {
            backend.tryAcquire(prefix + suffix, lease(), TTL);
        }
        backend.tryAcquire("under-" + id, lease(), TTL);

        assertThat(backend.list(prefix)).extracting(LockInfo::name).containsExactly(prefix + "_x", prefix + "a");
        assertThat(backend.list(prefix + "_")).extracting(LockInfo::name).containsExactly(prefix + "_x");
        assertThat(backend.list("under_" + id))
                .as("'_' is no wildcard: it does not match '-'")
                .isEmpty();
        assertThat(backend.list("under-" + id)).hasSize(1);
    }

    @Test
    void namesAreCaseSensitive() {
        String name = "Case-" + UUID.randomUUID();
        assertThat(backend.tryAcquire(name, lease(), TTL).acquired()).isTrue();
        assertThat(backend.tryAcquire(name.toLowerCase(), lease(), TTL).acquired())
                .as("the lower-case name")
                .isTrue();
    }

    @Test
    void eightThreadsRacingForOneNameNeverCrashAndNeverShareIt() throws Exception {
        // Fresh names each round: every thread's INSERT hits a missing key at the same moment, where
        // InnoDB's gap and insert-intention locks may deadlock. A lost conflict is "not acquired".
        int threads = 8;
        int rounds = 40;
        long deadlocksBefore = innodbDeadlocks();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < rounds; round++) {
                String name = name();
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Callable<AcquireResult>> attempts = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    attempts.add(() -> {
                        start.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
                        return backend.tryAcquire(name, lease(), TTL);
                    });
                }
                List<AcquireResult> results = new ArrayList<>();
                for (Future<AcquireResult> f : pool.invokeAll(attempts)) {
                    results.add(f.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)); // an exception would fail here
                }
                assertThat(results)
                        .as("round %d", round)
                        .filteredOn(AcquireResult::acquired)
                        .hasSize(1);
            }
        } finally {
            pool.shutdownNow();
        }
        if (deadlocksBefore >= 0) {
            System.out.println("[mysql-test] InnoDB deadlocks during " + rounds + " rounds of " + threads
                    + " racing acquires: " + (innodbDeadlocks() - deadlocksBefore));
        }
    }

    @Test
    void innodbLockConflictsAreADefiniteNotAcquired() throws Exception {
        String name = name();
        String holder = lease();
        backend.tryAcquire(name, holder, EXPIRED_AT_ONCE); // expired: free to take, once its row lock is free
        String heavy = table("heavy");
        execute("CREATE TABLE " + heavy + " (id INT PRIMARY KEY) ENGINE=InnoDB");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // a lock wait that outlasts innodb_lock_wait_timeout (half the socket timeout: 1 s here) ends in
        // error 1205, which InnoDB rolls back: "not acquired" for an acquire, retryable for a renewal
        try (MySqlLockBackend impatient =
                        builder().socketTimeout(Duration.ofSeconds(2)).build();
                Connection other = server.connect(url);
                Statement s = other.createStatement()) {
            other.setAutoCommit(false);
            s.executeQuery("SELECT token FROM fencelock_locks WHERE name = '" + name + "' FOR UPDATE")
                    .close();
            AcquireResult waited = impatient.tryAcquire(name, lease(), TTL);
            assertThat(waited).isEqualTo(AcquireResult.held(null));
            // the backend has seen the row now: its next acquire is the plain UPDATE, which waits the same
            assertThat(impatient.tryAcquire(name, lease(), TTL))
                    .as("an UPDATE of a known row that waited too long")
                    .isEqualTo(AcquireResult.held(null));
            LockBackendException renewal = catchThrowableOfType(
                    LockBackendException.class,
                    () -> impatient.renew(List.of(new RenewRequest(name, holder, TTL, null))));
            assertThat(renewal).isNotNull();
            assertThat(renewal.isRetryable()).as(renewal.getMessage()).isTrue();
            assertThat(renewal.getMessage()).contains("1205");

            // a deadlock: this transaction holds the row and, heavier (many changed rows), asks for the
            // floor while the acquire holds the floor and waits for the row; InnoDB rolls the acquire back.
            // Only the insert reads the floor: the acquire of a backend that has not seen the row yet.
            MySqlLockBackend unacquainted = builder().build();
            StringBuilder rows = new StringBuilder("INSERT INTO " + heavy + " VALUES (0)");
            for (int i = 1; i < 200; i++) {
                rows.append(", (").append(i).append(')');
            }
            s.executeUpdate(rows.toString());
            long deadlocksBefore = innodbDeadlocks();
            Future<AcquireResult> victim = pool.submit(() -> {
                try (unacquainted) {
                    return unacquainted.tryAcquire(name, lease(), TTL);
                }
            });
            awaitAcquireHoldingTheFloor(); // and then it can only wait for the row this transaction holds
            s.executeQuery("SELECT token_floor FROM fencelock_locks_floor WHERE id = 1 FOR UPDATE")
                    .close();
            assertThat(victim.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the deadlock victim's answer")
                    .isEqualTo(AcquireResult.held(null));
            if (deadlocksBefore >= 0) {
                assertThat(innodbDeadlocks()).as("InnoDB deadlocks").isGreaterThan(deadlocksBefore);
            }
            other.rollback();
        } finally {
            pool.shutdownNow();
        }
        assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                .as("free again")
                .isTrue();
    }

    /**
     * Waits until the server shows the acquire blocked on the purge's locks (InnoDB's lock wait, or
     * the session still running the INSERT); fails at once, with its outcome, if the acquire ends instead.
     */
    private static void awaitAcquireWaitingForALock(Future<?> acquire) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            while (System.nanoTime() < deadline) {
                // InnoDB lists a lock wait in innodb_trx; MariaDB does not always list one that began
                // while the statement was being optimized (the floor is a const table, read in the
                // "Statistics" state): there the session shows the INSERT in progress, which with
                // the purge's locks held can only be waiting for them.
                try (ResultSet rs = s.executeQuery("SELECT (SELECT COUNT(*) FROM information_schema.innodb_trx"
                        + " WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE 'INSERT INTO `fencelock_locks`%')"
                        + " + (SELECT COUNT(*) FROM information_schema.processlist WHERE command = 'Query'"
                        + " AND info LIKE 'INSERT INTO `fencelock_locks`%')")) {
                    rs.next();
                    if (rs.getInt(1) > 0) {
                        return;
                    }
                }
                if (acquire.isDone()) {
                    throw new AssertionError(
                            "the acquire ended without waiting for the purge's lock: " + outcome(acquire));
                }
                Thread.sleep(2); // polling the server's lock table
            }
            // what the server's sessions were doing instead, for whoever reads the failure
            StringBuilder seen = new StringBuilder();
            try (ResultSet rs =
                    s.executeQuery("SELECT trx_state, LEFT(trx_query, 120) FROM information_schema.innodb_trx")) {
                while (rs.next()) {
                    seen.append("\n  trx ").append(rs.getString(1)).append(": ").append(rs.getString(2));
                }
            }
            try (ResultSet rs =
                    s.executeQuery("SELECT command, state, LEFT(info, 120) FROM information_schema.processlist")) {
                while (rs.next()) {
                    seen.append("\n  session ")
                            .append(rs.getString(1))
                            .append(" / ")
                            .append(rs.getString(2))
                            .append(": ")
                            .append(rs.getString(3));
                }
            }
            throw new AssertionError("no acquire ever waited for the purge's lock; the server showed:" + seen);
        }
    }

    private static String outcome(Future<?> done) {
        try {
            return String.valueOf(done.get());
        } catch (Exception e) {
            return e.toString();
        }
    }

    /**
     * Waits until an acquire holds its shared lock on the floor row: an exclusive NOWAIT attempt by
     * another session then fails at once (MariaDB 1205, MySQL 3572), where one that succeeds is
     * rolled back straight away and tried again.
     */
    private static void awaitAcquireHoldingTheFloor() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        try (Connection probe = server.connect(url);
                Statement s = probe.createStatement()) {
            probe.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
                try {
                    s.executeQuery("SELECT token_floor FROM fencelock_locks_floor WHERE id = 1 FOR UPDATE NOWAIT")
                            .close();
                } catch (SQLException held) {
                    probe.rollback();
                    return;
                }
                probe.rollback();
                Thread.sleep(2);
            }
        }
        throw new AssertionError("no acquire ever held the floor");
    }

    @Test
    void worksOnTheApplicationsTransactionalPoolWithoutMultiStatementsInAnotherTimeZone() throws Exception {
        HikariConfig config = appPoolConfig(server, url, 3);
        config.setAutoCommit(false); // an application pool in transaction mode
        // a session time zone far from UTC, and the driver told about it: DATETIME(6) in UTC must not care
        config.setConnectionInitSql("SET time_zone = '+05:30'");
        config.addDataSourceProperty("connectionTimeZone", "Asia/Kolkata");
        config.addDataSourceProperty("useAffectedRows", "true"); // a refusal is then no affected row: no hint
        try (HikariDataSource appPool = new HikariDataSource(config)) {
            String name = name();
            String holder = lease();
            try (MySqlLockBackend onAppPool =
                    MySqlLockBackend.builder().dataSource(appPool).build()) {
                assertThat(onAppPool.multiStatements())
                        .as("no allowMultiQueries on this pool")
                        .isFalse();
                Instant before = Instant.now();
                AcquireResult granted = onAppPool.tryAcquire(name, holder, TTL);
                assertThat(granted.acquired()).isTrue();
                assertThat(granted.expiresAt())
                        .isBetween(
                                before.plus(TTL).minusSeconds(5),
                                Instant.now().plus(TTL).plusSeconds(5));
                assertThat(backend.inspect(name).orElseThrow().holder())
                        .as("committed, seen by others")
                        .contains(holder);
                assertThat(onAppPool.tryAcquire(name, lease(), TTL))
                        .as("refused, without the holder's remaining time")
                        .isEqualTo(AcquireResult.held(null));
                assertThat(onAppPool.inspect(name).orElseThrow().expiresAt())
                        .isCloseTo(granted.expiresAt(), within(SAME_MOMENT));
                assertThat(onAppPool
                                .renew(List.of(new RenewRequest(name, holder, TTL, Duration.ofNanos(1_000))))
                                .get(0)
                                .token())
                        .isEqualTo(granted.token() + 1);
                assertThat(onAppPool.release(name, holder)).isTrue();
                assertThat(onAppPool.purgeFree(Duration.ZERO)).isPositive();
                assertThat(onAppPool.tryAcquire(name, lease(), TTL).token()).isGreaterThan(granted.token() + 1);
            }
            assertThat(appPool.isClosed()).isFalse();
            try (Connection c = appPool.getConnection()) {
                assertThat(c.isValid(5)).isTrue();
            }
        }
    }

    /**
     * With the binary log on, a crash's recovery keeps only the transactions the binary log has: unless it is
     * synced at each commit ({@code sync_binlog=1}; MariaDB's default is 0), a crash may lose the last grants, and
     * the backend does not declare DURABLE_TOKENS. It still grants and releases as usual on such a server.
     */
    @Test
    void durableTokensNeedTheBinaryLogSyncedWhenItIsOn() throws SQLException {
        try (MariaDbServer logging = MariaDbServer.startWithBinaryLog()) {
            String loggingUrl = logging.createDatabase("mysql_binlog");
            try (MySqlLockBackend unsynced = MySqlLockBackend.builder()
                    .jdbcUrl(loggingUrl)
                    .user(logging.user())
                    .password(logging.password())
                    .createTable(true)
                    .build()) {
                assertThat(unsynced.capabilities())
                        .doesNotContain(Capability.DURABLE_TOKENS)
                        .contains(Capability.FENCING);
                String name = name();
                String holder = lease();
                assertThat(unsynced.tryAcquire(name, holder, TTL).acquired()).isTrue();
                assertThat(unsynced.tryAcquire(name, lease(), TTL).acquired()).isFalse();
                assertThat(unsynced.release(name, holder)).isTrue();
            }
            try (Connection c = logging.connect(loggingUrl);
                    Statement s = c.createStatement()) {
                s.execute("SET GLOBAL sync_binlog = 1");
            }
            try (MySqlLockBackend synced = MySqlLockBackend.builder()
                    .jdbcUrl(loggingUrl)
                    .user(logging.user())
                    .password(logging.password())
                    .build()) {
                assertThat(synced.capabilities()).contains(Capability.DURABLE_TOKENS);
            }
        }
    }

    /**
     * A read_only server (a replica, or a primary being switched over) is refused at start-up, before anything is
     * created on it, also for a user whom read_only does not stop (the test's has SUPER): its lock rows would
     * differ from its primary's.
     */
    @Test
    void aReadOnlyServerIsRefusedBeforeAnythingIsWritten() throws SQLException {
        try (MariaDbServer own = MariaDbServer.start(MariaDbServer.Source.BINARIES)) {
            String ownUrl = own.createDatabase("mysql_read_only");
            try (Connection c = own.connect(ownUrl);
                    Statement s = c.createStatement()) {
                s.execute("SET GLOBAL read_only = 1");
                assertThatThrownBy(() -> readOnlyCheckBuilder(own, ownUrl)
                                .createTable(true)
                                .build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("is read_only");
                try (ResultSet rs = s.executeQuery(
                        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()")) {
                    rs.next();
                    assertThat(rs.getInt(1))
                            .as("tables created on the read_only server")
                            .isZero();
                }
                s.execute("SET GLOBAL read_only = 0");
                try (MySqlLockBackend writable =
                        readOnlyCheckBuilder(own, ownUrl).createTable(true).build()) {
                    assertThat(writable.tryAcquire(name(), lease(), TTL).acquired())
                            .isTrue();
                }
                s.execute("SET GLOBAL read_only = 1"); // as a replica whose tables came from its primary
                assertThatThrownBy(() -> readOnlyCheckBuilder(own, ownUrl).build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("is read_only");
            }
        }
    }

    /**
     * A primary with a replica connected declares neither {@link Capability#LINEARIZABLE} nor {@link
     * Capability#DURABLE_TOKENS}: replication is asynchronous, so a failover to the replica could lose the last
     * grants and issue their tokens again. Alone, with durable commits, it declares both. The replica itself is
     * refused, read_only as replicas run, and with read_only off (MariaDB's default) by its running replication.
     */
    @Test
    void aPrimaryWithAReplicaIsReplicatedAndTheReplicaIsRefused() throws SQLException {
        try (MariaDbServer primary = MariaDbServer.startWithBinaryLog()) {
            String url = primary.createDatabase("mysql_replicated");
            try (Connection c = primary.connect(url);
                    Statement s = c.createStatement()) {
                s.execute("SET GLOBAL sync_binlog = 1"); // a commit on disk in the binary log too: durable alone
            }
            try (MySqlLockBackend alone =
                    readOnlyCheckBuilder(primary, url).createTable(true).build()) {
                assertThat(alone.capabilities())
                        .as("a primary without replicas, commits flushed")
                        .contains(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS);
            }
            try (MariaDbServer replica = MariaDbServer.startReplicaOf(primary)) {
                try (MySqlLockBackend replicated =
                        readOnlyCheckBuilder(primary, url).build()) {
                    assertThat(replicated.capabilities())
                            .as("a primary with a replica connected")
                            .doesNotContain(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS)
                            .contains(Capability.FENCING, Capability.FAIR_ORDER);
                    assertThat(replicated.tryAcquire(name(), lease(), TTL).acquired())
                            .isTrue();
                }
                String replicaUrl =
                        MariaDbServer.withAddress(url, replica.address().orElseThrow());
                assertThatThrownBy(
                                () -> readOnlyCheckBuilder(replica, replicaUrl).build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("is read_only");
                try (Connection c = replica.connect(replicaUrl);
                        Statement s = c.createStatement()) {
                    s.execute("SET GLOBAL read_only = 0"); // MariaDB's default for a replica
                    assertThatThrownBy(() -> readOnlyCheckBuilder(replica, replicaUrl)
                                    .createTable(true)
                                    .build())
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("is a replica (Slaves_running = 1)");
                }
            }
        }
    }

    private static MySqlLockBackend.Builder readOnlyCheckBuilder(MariaDbServer own, String url) {
        return MySqlLockBackend.builder().jdbcUrl(url).user(own.user()).password(own.password());
    }

    @Test
    void durableTokensAreDeclaredWhenCommitsAreFlushedAndSurviveACrash() throws SQLException {
        try (MariaDbServer own = MariaDbServer.start(MariaDbServer.Source.BINARIES)) {
            ServerControl control = own.control().orElseThrow();
            String ownUrl = own.createDatabase("mysql_crash");
            String name = name();
            try (Connection c = own.connect(ownUrl);
                    Statement s = c.createStatement()) {
                s.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 2"); // a crash may lose the last commits
                try (MySqlLockBackend lazy = MySqlLockBackend.builder()
                        .jdbcUrl(ownUrl)
                        .user(own.user())
                        .password(own.password())
                        .createTable(true)
                        .build()) {
                    assertThat(lazy.capabilities())
                            .doesNotContain(Capability.DURABLE_TOKENS)
                            .contains(Capability.FENCING);
                } finally {
                    s.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 1");
                }
            }
            try (MySqlLockBackend crashing = MySqlLockBackend.builder()
                    .jdbcUrl(ownUrl)
                    .user(own.user())
                    .password(own.password())
                    .createTable(true)
                    .build()) {
                assertThat(crashing.capabilities()).contains(Capability.DURABLE_TOKENS);
                long before = 0;
                for (int i = 0; i < 5; i++) {
                    before = crashing.tryAcquire(name, lease(), EXPIRED_AT_ONCE).token();
                }

                control.kill();
                LockBackendException down =
                        catchThrowableOfType(LockBackendException.class, () -> crashing.inspect(name));
                assertThat(down).isNotNull();
                assertThat(down.isRetryable()).as(down.getMessage()).isTrue();
                control.start();

                String holder = lease();
                AcquireResult after = retryWhileRetryable(() -> crashing.tryAcquire(name, holder, TTL));
                assertThat(after.token())
                        .as("the committed token survived the crash")
                        .isGreaterThan(before);
                assertThat(crashing.release(name, holder)).isTrue();
            }
        }
    }

    /** Pooled connections died with the server; the engine retries retryable failures, and so does this. */
    private static <T> T retryWhileRetryable(Callable<T> operation) {
        return SpiChecks.retryWhileRetryable(operation, Duration.ofSeconds(HANG_GUARD_SECONDS));
    }

    @Test
    void badSettingsAreRejectedBeforeAnyIo() {
        // an unreachable URL: any I/O would fail with a connection error, not the expected message
        MySqlLockBackend.Builder offline = MySqlLockBackend.builder().jdbcUrl("jdbc:mysql://127.0.0.1:1/none");
        assertThatThrownBy(() -> offline.schema("app; drop table x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema")
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> offline.table("locks`"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table");
        assertThatThrownBy(() -> offline.table("t".repeat(58)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 57");
        assertThatThrownBy(() -> MySqlLockBackend.builder().jdbcUrl("jdbc:postgresql://h/db"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jdbc:mysql:");
        assertThatThrownBy(() -> offline.poolSize(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> offline.socketTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MySqlLockBackend.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exactly one of jdbcUrl and dataSource");
        assertThatThrownBy(() ->
                        new MySqlLockBackendProvider().open("jdbc:mysql://127.0.0.1:1/none", Map.of("tabel", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[tabel]")
                .as("the refusal lists the known properties")
                .hasMessageContaining("createTable");
        assertThatThrownBy(
                        () -> new MySqlLockBackendProvider().open("jdbc:oracle:thin:app/s3cret-value@//h/db", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("s3cret-value");
        assertThat(MySqlLockBackend.ddl("app", "locks"))
                .contains("`app`.`locks`")
                .contains("`app`.`locks_floor`");
    }

    @Test
    void selfCheckNamesWhatIsWrongAndHowToFixIt() throws SQLException {
        assertThatThrownBy(() -> builder().table("missing_locks").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("`missing_locks` does not exist")
                .hasMessageContaining("createTable(true)")
                .hasMessageContaining("CREATE TABLE");

        String sloppy = table("sloppy");
        execute(
                "CREATE TABLE " + sloppy + " (name VARCHAR(100) NOT NULL, lease_id VARCHAR(255) NOT NULL,"
                        + " token INT NOT NULL, token_issued_at TIMESTAMP(6) NOT NULL, expires_at DATETIME NOT NULL) ENGINE=MyISAM",
                "CREATE TABLE " + sloppy
                        + "_floor (id TINYINT NOT NULL PRIMARY KEY, token_floor BIGINT NOT NULL) ENGINE=InnoDB",
                "INSERT INTO " + sloppy + "_floor VALUES (1, 0)");
        assertThatThrownBy(() -> builder().table(sloppy).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("uses the MyISAM engine, expected InnoDB")
                .hasMessageContaining("column name is varchar(100), too short for 255 characters")
                .hasMessageContaining("has collation utf8mb4_")
                .hasMessageContaining("column lease_id must allow NULL")
                .hasMessageContaining("column token is int") // int(11) on MariaDB, int on MySQL 8
                .hasMessageContaining(", expected BIGINT")
                .hasMessageContaining("column token_issued_at is timestamp(6), expected DATETIME(6)")
                .hasMessageContaining("column expires_at is datetime, expected DATETIME(6)")
                .hasMessageContaining("no primary key on (name)");

        String noFloor = table("nofloor");
        execute(LockTable.of(null, noFloor).tablesDdl().split(";\n"));
        execute("DELETE FROM " + noFloor + "_floor");
        assertThatThrownBy(() -> builder().table(noFloor).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the floor row is missing");
        execute("DROP TABLE " + noFloor + "_floor");
        assertThatThrownBy(() -> builder().table(noFloor).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("table " + noFloor + "_floor is missing");

        assertThatThrownBy(() -> MySqlLockBackend.builder()
                        .jdbcUrl(MariaDbServerUrls.withoutDatabase(url))
                        .user(server.user())
                        .password(server.password())
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no database selected");
    }

    @Test
    void createTableAddsTheMetadataColumnsToATableOfTheVersionBefore() throws SQLException {
        String t = table("premeta");
        // the DDL of the version before metadata, and a grant it made
        execute(
                "CREATE TABLE " + t + " (name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
                        + " lease_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL, token BIGINT NOT NULL,"
                        + " token_issued_at DATETIME(6) NOT NULL, expires_at DATETIME(6) NOT NULL,"
                        + " PRIMARY KEY (name)) ENGINE=InnoDB",
                "CREATE TABLE " + t
                        + "_floor (id TINYINT NOT NULL PRIMARY KEY, token_floor BIGINT NOT NULL) ENGINE=InnoDB",
                "INSERT INTO " + t + "_floor VALUES (1, 0)",
                "INSERT INTO " + t + " VALUES ('old/held', 'old-lease', 41, UTC_TIMESTAMP(6),"
                        + " UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)");
        assertThatThrownBy(() -> builder().table(t).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "[lock_owner, lock_type, lock_data, granted_at, share_kind, share_limit, share_until, share_held_until]")
                .hasMessageContaining("createTable(true)")
                .hasMessageContaining("ALTER TABLE `" + t + "` ADD COLUMN lock_owner VARCHAR(200)");

        try (MySqlLockBackend upgraded = builder().table(t).createTable(true).build()) {
            LockInfo old = upgraded.inspect("old/held").orElseThrow();
            assertThat(old.holder()).as("the older grant, still held").contains("old-lease");
            assertThat(old.token()).isEqualTo(41);
            assertThat(old.metadata()).isEqualTo(LockMetadata.NONE);
            assertThat(old.heldSince()).as("an older grant's time is unknown").isNull();

            String name = name();
            LockMetadata metadata = LockMetadata.of("h\u00f6st/1/c \uD83D\uDD12", "job", Map.of("k", "v"));
            assertThat(upgraded.tryAcquire(name, lease(), TTL, metadata).acquired())
                    .isTrue();
            LockInfo seen = upgraded.inspect(name).orElseThrow();
            assertThat(seen.metadata()).as("any text, four-byte UTF-8 too").isEqualTo(metadata);
            assertThat(seen.heldSince()).isNotNull();
        }
        // up to date now: a start without createTable passes the check, and a second createTable changes nothing
        builder().table(t).build().close();
        builder().table(t).createTable(true).build().close();
    }

    @Test
    void aFloorRowDeletedWhileRunningMakesAcquiresFailLoudly() throws SQLException {
        String t = table("floorless");
        try (MySqlLockBackend own = builder().table(t).createTable(true).build();
                MySqlLockBackend unacquainted = builder().table(t).build()) {
            String name = name();
            long before = own.tryAcquire(name, lease(), EXPIRED_AT_ONCE).token();
            execute("DELETE FROM " + t + "_floor");
            // a name without a row starts above the floor: with the floor gone, no token can be issued
            for (MySqlLockBackend b : List.of(own, unacquainted)) {
                LockBackendException e =
                        catchThrowableOfType(LockBackendException.class, () -> b.tryAcquire(name(), lease(), TTL));
                assertThat(e).isNotNull();
                assertThat(e.isRetryable()).isFalse();
                assertThat(e.getMessage()).contains("token");
            }
            // a backend that does not know the row takes the insert, which reads the floor first
            LockBackendException e =
                    catchThrowableOfType(LockBackendException.class, () -> unacquainted.tryAcquire(name, lease(), TTL));
            assertThat(e).isNotNull();
            assertThat(e.getMessage()).contains("token");
            // one that has seen it updates the row, whose token carries the name's history
            assertThat(own.tryAcquire(name, lease(), TTL).token())
                    .as("a known row's next token")
                    .isEqualTo(before + 1);
        }
    }

    @Test
    void createTableIsIdempotentAndSafeWhenFourThreadsRace() throws Exception {
        String table = table("raced");
        int threads = 4;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> builds = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                builds.add(pool.submit(() -> {
                    start.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
                    builder().table(table).createTable(true).poolSize(1).build().close();
                    return null;
                }));
            }
            for (Future<?> build : builds) {
                build.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        try (MySqlLockBackend again = builder().table(table).createTable(true).build();
                Connection c = server.connect(url);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table + "_floor")) {
            assertThat(again.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
            rs.next();
            assertThat(rs.getInt(1)).as("floor rows").isEqualTo(1);
        }
    }

    @Test
    void aSchemaOtherThanTheUrlsDatabaseHoldsTheTable() {
        String other = server.createDatabase("mysql_other");
        String database = other.substring(other.lastIndexOf('/') + 1);
        try (MySqlLockBackend elsewhere =
                builder().schema(database).table("elsewhere").createTable(true).build()) {
            String name = name();
            assertThat(elsewhere.tryAcquire(name, lease(), TTL).acquired()).isTrue();
            assertThat(elsewhere.toString()).contains("`" + database + "`.`elsewhere`");
            assertThat(backend.inspect(name)).as("not in the URL's database").isEmpty();
        }
    }

    @Test
    void credentialsNeverAppearInFailures() {
        String secret = "Wr0ng-" + UUID.randomUUID();
        Throwable wrongPassword =
                catchThrowable(() -> builder().password(secret).build().close());
        Assumptions.assumeTrue(wrongPassword != null, "this server does not check passwords: " + server.description());
        assertThat(wrongPassword).isInstanceOf(LockBackendException.class);
        assertThat(((LockBackendException) wrongPassword).isRetryable())
                .as("bad credentials do not heal")
                .isFalse();
        assertNoSecret(wrongPassword, secret);

        Throwable inUrl = catchThrowable(() -> MySqlLockBackend.builder()
                .jdbcUrl(url + "?user=" + server.user() + "&password=" + secret)
                .build()
                .close());
        assertThat(inUrl).isInstanceOf(LockBackendException.class);
        assertNoSecret(inUrl, secret);
    }

    @Test
    void credentialsOfEveryShapeStayOutOfMessagesAndLogsWhileTheServersWordsArriveIntact() throws SQLException {
        String user = "verify_" + UUID.randomUUID().toString().substring(0, 6);
        String right = CredentialChecks.special("right");
        String wrong = CredentialChecks.special("wrong");
        String second = CredentialChecks.special("second");
        String third = CredentialChecks.special("third");
        String database =
                url.substring(url.indexOf('/', "jdbc:mysql://".length()) + 1).split("\\?")[0];
        execute(
                "CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + right + "'", // no quote or backslash in it
                "GRANT ALL PRIVILEGES ON `" + database + "`.* TO '" + user + "'@'%'");
        try {
            // the right password, percent-encoded in the user-info: connects, and shows no secret anywhere
            try (MySqlLockBackend ok = MySqlLockBackend.builder()
                    .jdbcUrl(CredentialChecks.withParameters(
                            CredentialChecks.withUserInfo(url, user + ":" + CredentialChecks.encoded(right)),
                            "password2=" + CredentialChecks.encoded(second) + "&password3="
                                    + CredentialChecks.encoded(third)))
                    .poolSize(1)
                    .build()) {
                assertThat(ok.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
                CredentialChecks.assertNoSecret(ok.toString(), right, second, third);
                String dump = CredentialChecks.hikariConfigurationDump(ok.ownPool());
                assertThat(dump).contains("fencelock-mysql");
                CredentialChecks.assertNoSecret(dump, right, second, third);
                assertThat(dump).doesNotContain(user + ":");
            }
            // a wrong password as user-info (encoded), as password= and as password1=: refused, in the server's own
            // words
            for (String bad : List.of(
                    CredentialChecks.withUserInfo(url, user + ":" + CredentialChecks.encoded(wrong)),
                    CredentialChecks.withParameters(
                            url, "user=" + user + "&password=" + CredentialChecks.encoded(wrong)),
                    CredentialChecks.withParameters(
                            url,
                            "user=" + user + "&password1=" + CredentialChecks.encoded(wrong) + "&password2="
                                    + CredentialChecks.encoded(second) + "&password3="
                                    + CredentialChecks.encoded(third)))) {
                Throwable refused = catchThrowable(() -> MySqlLockBackend.builder()
                        .jdbcUrl(bad)
                        .poolSize(1)
                        .build()
                        .close());
                assertThat(refused)
                        .as(bad.replace(wrong, "..."))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("Access denied for user '" + user + "'@'");
                assertThat(((LockBackendException) refused).isRetryable()).isFalse();
                CredentialChecks.assertNoSecret(refused, wrong, second, third);
            }
            // the raw password in the user-info is no URL Connector/J can parse: refused before any I/O, without it
            Throwable raw = catchThrowable(
                    () -> MySqlLockBackend.builder().jdbcUrl(CredentialChecks.withUserInfo(url, user + ":" + wrong)));
            assertThat(raw).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("jdbcUrl");
            CredentialChecks.assertNoSecret(raw, wrong);
            // and through the provider, which names no value either
            Throwable viaProvider = catchThrowable(() -> new MySqlLockBackendProvider()
                    .open(
                            CredentialChecks.withParameters(url, "password1=" + CredentialChecks.encoded(wrong)),
                            Map.of("user", user)));
            assertThat(viaProvider).isInstanceOf(LockBackendException.class).hasMessageContaining("password1=***");
            CredentialChecks.assertNoSecret(viaProvider, wrong);
        } finally {
            execute("DROP USER '" + user + "'@'%'");
        }
    }

    @Test
    void declaresItsCapabilitiesAndAcceptsBothSchemes() {
        assertThat(backend.capabilities())
                .containsExactlyInAnyOrder(
                        Capability.FENCING,
                        Capability.DURABLE_TOKENS,
                        Capability.SERVER_TIME,
                        Capability.BATCH_RENEW,
                        Capability.TOKEN_PERIOD,
                        Capability.LINEARIZABLE,
                        Capability.PURGE_FREE,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL,
                        Capability.SHARED_LOCKS,
                        Capability.FAIR_ORDER,
                        Capability.HAND_OVER);
        assertThat(backend.capabilities()).doesNotContain(Capability.WAKE_ON_RELEASE);

        LockBackendProvider provider = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("mysql"))
                .findFirst()
                .orElseThrow();
        assertThat(provider.accepts(url)).isTrue();
        String mariadbUrl = "jdbc:mariadb:" + url.substring("jdbc:mysql:".length());
        assertThat(provider.accepts(mariadbUrl)).isTrue();
        assertThat(provider.accepts("jdbc:postgresql://h/db")).isFalse();
        try (LockBackend opened = provider.open(mariadbUrl, harness().properties())) {
            assertThat(opened.toString()).contains("MariaDB").doesNotContain(String.valueOf(server.password()));
        }
    }

    @Test
    void failuresAreClassifiedForTheEngine() {
        assertThat(MySqlLockBackend.isRetryable(new SQLException("Deadlock found", "40001", 1213)))
                .isTrue();
        assertThat(MySqlLockBackend.isRetryable(new SQLException("Lock wait timeout exceeded", "HY000", 1205)))
                .isTrue();
        assertThat(MySqlLockBackend.isRetryable(new SQLException("Communications link failure", "08S01", 0)))
                .isTrue();
        assertThat(MySqlLockBackend.isRetryable(new SQLException("read-only", "HY000", 1290)))
                .isTrue();
        assertThat(MySqlLockBackend.isRetryable(new SQLException("Access denied", "28000", 1045)))
                .isFalse();
        assertThat(MySqlLockBackend.isRetryable(new SQLException("Table doesn't exist", "42S02", 1146)))
                .isFalse();
    }

    private static String table(String stem) {
        return stem + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    }

    /** MariaDB's count of InnoDB deadlocks since start-up; -1 where there is no such status variable (MySQL). */
    private static long innodbDeadlocks() throws SQLException {
        try (Connection c = server.connect(url);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) {
            return rs.next() ? rs.getLong(2) : -1;
        }
    }

    private static void assertNoSecret(Throwable failure, String secret) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            assertThat(String.valueOf(t.getMessage())).doesNotContain(secret);
            assertThat(t.toString()).doesNotContain(secret);
            for (Throwable s : t.getSuppressed()) {
                assertThat(s.toString()).doesNotContain(secret);
            }
        }
    }

    private static void execute(String... statements) throws SQLException {
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }

    /** URLs of the test server with parts taken away. */
    private static final class MariaDbServerUrls {
        static String withoutDatabase(String url) {
            int query = url.indexOf('?');
            String path = query < 0 ? url : url.substring(0, query);
            return path.substring(0, path.lastIndexOf('/') + 1) + (query < 0 ? "" : url.substring(query));
        }
    }
}
