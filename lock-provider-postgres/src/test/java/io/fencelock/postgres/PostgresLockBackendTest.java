package io.fencelock.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.CredentialChecks;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.tck.spi.LockBackendSpiTemplate;
import io.fencelock.tck.spi.QueuedGrantProviderChecks;
import io.fencelock.tck.spi.SpiHarness;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.postgres.PgBouncerProcess;
import io.fencelock.testservers.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SPI template's tests, and what is PostgreSQL's own: the purge and its guard, NOTIFY, the table checks, the pool. */
class PostgresLockBackendTest extends LockBackendSpiTemplate {
    /** Expired by the time the next statement runs: a round trip takes far longer than this. */
    private static final Duration EXPIRED_AT_ONCE = Duration.ofNanos(1_000);

    private static PostgresServer server;
    private static String url;
    private static PostgresLockBackend backend;
    private static SpiHarness harness;

    @BeforeAll
    static void openBackend() {
        server = PostgresServer.shared();
        url = server.createDatabase("pg_backend");
        backend = builder().createTable(true).build();
        harness = SpiHarness.builder(backend, "postgres")
                .uri(
                        url,
                        Map.of(
                                "user",
                                server.user(),
                                "password",
                                server.password() == null ? "" : server.password(),
                                "poolSize",
                                "1",
                                "createTable",
                                "false"))
                .unreachableUri(
                        password -> "jdbc:postgresql://127.0.0.1:1/none?user=app&connectTimeout=1&password=" + password)
                .malformedPortUris(secret -> List.of(
                        "jdbc:postgresql://127.0.0.1:notaport/db?password=" + secret,
                        "jdbc:postgresql://h:70000/db",
                        "jdbc:postgresql://h1:5432,h2:x/db"))
                .badSettings(Map.of(
                        Map.of("table", "bad-name"),
                        "bad-name",
                        Map.of("poolSize", "many"),
                        "poolSize",
                        Map.of("schema", "public; drop table x"),
                        "schema"))
                .misspelledProperty("tabel")
                .build();
    }

    @Override
    protected SpiHarness harness() {
        return harness;
    }

    @AfterAll
    static void closeBackend() {
        if (backend != null) {
            backend.close();
        }
    }

    private static PostgresLockBackend.Builder builder() {
        return PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password());
    }

    private static String name() {
        return "test/" + UUID.randomUUID();
    }

    @Test
    void purgeDeletesOnlyLongFreeRowsAndTokensStillRise() {
        String purged = name();
        String held = name();
        String holder = lease();
        AcquireResult before = backend.tryAcquire(purged, holder, TTL);
        backend.release(purged, holder);
        String heldBy = lease();
        backend.tryAcquire(held, heldBy, TTL);

        assertThat(backend.purgeFree(Duration.ofHours(1)))
                .as("free for less than an hour")
                .isZero();
        assertThat(backend.inspect(purged)).isPresent();

        assertThat(backend.purgeFree(Duration.ZERO)).isPositive();
        assertThat(backend.inspect(purged)).isEmpty();
        assertThat(backend.inspect(held).orElseThrow().holder()).contains(heldBy);

        AcquireResult after = backend.tryAcquire(purged, lease(), TTL);
        assertThat(after.acquired()).isTrue();
        assertThat(after.token()).as("a new row still draws from the sequence").isGreaterThan(before.token());
        assertThatThrownBy(() -> backend.purgeFree(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** A shared name's row says nothing of its grants in lease_id: the purge reads its summary of them. */
    @Test
    void purgeKeepsSharedNamesWhileAnyGrantOrWaiterLivesAndTheirTokensRise() {
        String name = name();
        String holder = lease();
        SharedRequest reader = new SharedRequest(LockMode.READ, 1, 0, lease(), false, false);
        AcquireResult read = backend.tryAcquireShared(name, holder, TTL, reader, LockMetadata.NONE);
        assertThat(read.acquired()).isTrue();
        String writerWaiter = lease();
        SharedRequest writer = new SharedRequest(LockMode.WRITE, 1, 0, writerWaiter, true, false);
        assertThat(backend.tryAcquireShared(name, lease(), TTL, writer, LockMetadata.NONE)
                        .acquired())
                .as("a writer behind a reader, leaving its intent")
                .isFalse();

        backend.purgeFree(Duration.ZERO);
        assertThat(backend.inspect(name).orElseThrow().holders())
                .as("a live reader's name, purged at age zero")
                .hasSize(1);
        assertThat(backend.release(name, holder)).isTrue();
        backend.purgeFree(Duration.ZERO);
        assertThatThrownBy(() -> backend.tryAcquire(name, lease(), TTL))
                .as("the writer's intent outlived the purge: the name is still a read-write lock")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("read-write lock");
        assertThat(backend.release(name, writerWaiter))
                .as("a withdrawn intent frees nothing")
                .isFalse();

        assertThat(backend.purgeFree(Duration.ZERO)).isPositive();
        assertThat(backend.inspect(name))
                .as("nothing of the name lives: purged")
                .isEmpty();
        AcquireResult after = backend.tryAcquire(name, lease(), TTL);
        assertThat(after.token())
                .as("a new mutex row still draws from the sequence")
                .isGreaterThan(read.token());
    }

    /**
     * The ordinary mutex's statement decides on the name's row alone, and the fair mutex's function on
     * the shared table under that row's lock: racing on one name (TTLs far longer than the run, so
     * nothing expires), they never hold together, and each grant's token exceeds the one before.
     */
    @Test
    void ordinaryAndFairMutexRacingOnOneNameNeverHoldTogether() throws Exception {
        String name = name();
        int threads = 4;
        int rounds = 150;
        java.util.concurrent.atomic.AtomicInteger holding = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicLong lastToken = new java.util.concurrent.atomic.AtomicLong();
        List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> grants = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean fair = t % 2 == 1;
                grants.add(pool.submit(() -> {
                    int granted = 0;
                    for (int i = 0; i < rounds; i++) {
                        String lease = lease();
                        AcquireResult r = fair
                                ? backend.tryAcquireShared(
                                        name,
                                        lease,
                                        TTL,
                                        new SharedRequest(LockMode.EXCLUSIVE, 1, 0, lease(), false, true),
                                        LockMetadata.NONE)
                                : backend.tryAcquire(name, lease, TTL);
                        if (!r.acquired()) {
                            continue;
                        }
                        granted++;
                        if (holding.incrementAndGet() != 1) {
                            violations.add("two holders at once, one with token " + r.token());
                        }
                        if (r.token() <= lastToken.getAndSet(r.token())) {
                            violations.add("token " + r.token() + " not above the previous holder's");
                        }
                        holding.decrementAndGet();
                        assertThat(backend.release(name, lease)).isTrue();
                    }
                    return granted;
                }));
            }
            int fairGrants = 0;
            int ordinaryGrants = 0;
            for (int t = 0; t < threads; t++) {
                int n = grants.get(t).get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
                if (t % 2 == 1) {
                    fairGrants += n;
                } else {
                    ordinaryGrants += n;
                }
            }
            assertThat(violations).isEmpty();
            assertThat(fairGrants).as("fair grants").isPositive();
            assertThat(ordinaryGrants).as("ordinary grants").isPositive();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The fair mutex keeps its grants in the shared table: an ordinary mutex on the name waits for it,
     * a fair request behind an ordinary holder is woken by that holder's release, and another kind is
     * refused in both directions.
     */
    @Test
    void fairMutexAndOrdinaryMutexShareANameAndWakeEachOther() throws InterruptedException {
        String name = name();
        String ordinary = lease();
        assertThat(backend.tryAcquire(name, ordinary, TTL).acquired()).isTrue();
        CountDownLatch released = new CountDownLatch(1);
        try (PostgresLockBackend waiterSide = builder().build()) {
            SpiChecks.subscribe(waiterSide, name, released::countDown);
            SharedRequest fair = new SharedRequest(LockMode.EXCLUSIVE, 1, 0, lease(), true, true);
            AcquireResult refused = waiterSide.tryAcquireShared(name, lease(), TTL, fair, LockMetadata.NONE);
            assertThat(refused.acquired())
                    .as("a fair mutex behind an ordinary holder")
                    .isFalse();
            assertThat(refused.holderRemaining()).isPositive();
            assertThatThrownBy(() -> waiterSide.tryAcquireShared(
                            name,
                            lease(),
                            TTL,
                            new SharedRequest(LockMode.READ, 1, 0, lease(), false, false),
                            LockMetadata.NONE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a mutex");

            assertThat(backend.release(name, ordinary)).isTrue();
            assertThat(released.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the ordinary holder's release wakes the fair waiter")
                    .isTrue();
            String fairLease = lease();
            AcquireResult granted = waiterSide.tryAcquireShared(name, fairLease, TTL, fair, LockMetadata.NONE);
            assertThat(granted.acquired()).isTrue();
            AcquireResult mutex = backend.tryAcquire(name, lease(), TTL);
            assertThat(mutex.acquired())
                    .as("an ordinary mutex while the fair one holds")
                    .isFalse();
            assertThat(mutex.holderRemaining()).isPositive();
            LockInfo info = backend.inspect(name).orElseThrow();
            assertThat(info.holder()).contains(fairLease);
            assertThat(info.kind()).isEqualTo(LockMode.EXCLUSIVE);
            assertThat(waiterSide.release(name, fairLease)).isTrue();
            assertThat(backend.tryAcquire(name, lease(), TTL).token()).isGreaterThan(granted.token());
        }
    }

    @Test
    void purgeWorksThroughManyBatchesAndKeepsHeldRows() throws SQLException {
        String prefix = name() + "/";
        int free = 2 * PostgresLockBackend.PURGE_BATCH + 7;
        // rows as releases leave them, written in one statement instead of a few thousand round trips
        execute("INSERT INTO fencelock_locks (name, lease_id, token, token_issued_at, expires_at)"
                + " SELECT '" + prefix + "' || lpad(g::text, 5, '0'), NULL, nextval('fencelock_locks_token_seq'),"
                + " clock_timestamp(), clock_timestamp() FROM generate_series(1, " + free + ") g");
        String held = prefix + "held";
        String heldBy = lease();
        assertThat(backend.tryAcquire(held, heldBy, TTL).acquired()).isTrue();

        assertThat(backend.purgeFree(Duration.ZERO)).as("records purged").isGreaterThanOrEqualTo(free);
        assertThat(countRows(prefix)).as("records left under " + prefix).isEqualTo(1);
        assertThat(backend.inspect(held).orElseThrow().holder()).contains(heldBy);
    }

    @Test
    void purgeLeavesTheRecordOfANameWhoseAcquireIsInFlight() throws SQLException {
        String name = name();
        String holder = lease();
        backend.tryAcquire(name, holder, TTL);
        backend.release(name, holder);
        try (Connection acquire = server.connect(url)) {
            acquire.setAutoCommit(false);
            // what an acquire statement holds from before it draws its token until it commits
            guard(acquire, "pg_advisory_xact_lock_shared", name);
            backend.purgeFree(Duration.ZERO);
            assertThat(backend.inspect(name))
                    .as("record of a name with an acquire in flight")
                    .isPresent();
            acquire.commit();
        }
        backend.purgeFree(Duration.ZERO);
        assertThat(backend.inspect(name)).as("record once the acquire ended").isEmpty();
    }

    @Test
    void anInsertThatWaitedBehindAPurgeDrawsItsTokenAfterThePurge() throws Exception {
        String name = name(); // no record: the acquire takes the insert branch
        ExecutorService acquirer = Executors.newSingleThreadExecutor();
        try (Connection purge = server.connect(url)) {
            purge.setAutoCommit(false);
            // what a purge statement holds from its try of the name's guard until it commits
            guard(purge, "pg_try_advisory_xact_lock", name);
            Future<AcquireResult> acquire = acquirer.submit(() -> backend.tryAcquire(name, lease(), TTL));
            awaitBlocked(acquire, () -> waitsForGuard(purge, name), "the name's guard");
            long drawnByThePurge;
            try (Statement s = purge.createStatement();
                    ResultSet rs = s.executeQuery("SELECT nextval('fencelock_locks_token_seq')")) {
                rs.next();
                drawnByThePurge = rs.getLong(1);
            }
            purge.commit();
            AcquireResult result = acquire.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            assertThat(result.acquired()).isTrue();
            assertThat(result.token())
                    .as("token of an insert that waited for a purge")
                    .isGreaterThan(drawnByThePurge);
        } finally {
            acquirer.shutdownNow();
        }
    }

    @Test
    void aKnownRowsGrantThatWaitedBehindAPurgesDeleteTakesTheGuardedInsert() throws Exception {
        String name = name();
        String holder = lease();
        long before = backend.tryAcquire(name, holder, TTL).token(); // the backend knows the row now
        backend.release(name, holder);
        ExecutorService acquirer = Executors.newSingleThreadExecutor();
        try (Connection purge = server.connect(url)) {
            purge.setAutoCommit(false);
            // a purge's batch, stopped between its delete and its commit: the row is locked and gone
            guard(purge, "pg_try_advisory_xact_lock", name);
            try (PreparedStatement ps = purge.prepareStatement("DELETE FROM fencelock_locks WHERE name = ?")) {
                ps.setString(1, name);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            Future<AcquireResult> acquire = acquirer.submit(() -> backend.tryAcquire(name, lease(), TTL));
            awaitBlocked(acquire, () -> waitsForALock(purge), "the purge's row lock");
            purge.commit();
            AcquireResult result = acquire.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
            assertThat(result.acquired())
                    .as("granted by the insert after the update matched nothing")
                    .isTrue();
            assertThat(result.token()).as("token after the row was purged").isGreaterThan(before);
            assertThat(backend.inspect(name).orElseThrow().token()).isEqualTo(result.token());
        } finally {
            acquirer.shutdownNow();
        }
    }

    /** Another session of this database waits for a lock (a row lock: its transaction id). */
    private static boolean waitsForALock(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND datname = current_database() AND pid <> pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }

    /** A server-side condition, read by a query. */
    private interface ServerCondition {
        boolean holds() throws SQLException;
    }

    /**
     * Waits, at most the hang guard, until the server shows {@code acquire} blocked on {@code what}; fails at
     * once if the acquire ends first.
     */
    private static void awaitBlocked(Future<AcquireResult> acquire, ServerCondition blocked, String what)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (!blocked.holds()) {
            assertThat(System.nanoTime() - deadline)
                    .as("the acquire to wait for " + what)
                    .isNegative();
            assertThat(acquire).as("the acquire, while another holds " + what).isNotDone();
            Thread.sleep(2); // polling the server's lock view for the waiter
        }
    }

    /** Takes the name's guard as the provider's statements key it: (this table, hashtext(name)). */
    private static void guard(Connection c, String function, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + function + "('public.fencelock_locks'::regclass::oid::int, hashtext(?))")) {
            ps.setString(1, name);
            ps.executeQuery().close();
        }
    }

    private static boolean waitsForGuard(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                + " AND objid = hashtext(?)::oid")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    private static int countRows(String prefix) throws SQLException {
        try (Connection c = server.connect(url);
                PreparedStatement ps =
                        c.prepareStatement("SELECT count(*) FROM fencelock_locks WHERE starts_with(name, ?)")) {
            ps.setString(1, prefix);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Test
    void subscriberIsWokenByARelease() throws InterruptedException {
        String name = name();
        String holder = lease();
        backend.tryAcquire(name, holder, TTL);
        CountDownLatch released = new CountDownLatch(1);
        CountDownLatch unrelated = new CountDownLatch(1);
        try (PostgresLockBackend waiterSide = builder().build()) {
            SpiChecks.subscribe(waiterSide, name, released::countDown);
            WakeUpSubscription other = SpiChecks.subscribe(waiterSide, name(), unrelated::countDown);
            assertThat(waiterSide.tryAcquire(name, lease(), TTL).acquired())
                    .as("the waiter's refused attempt")
                    .isFalse();

            assertThat(backend.release(name, holder)).isTrue();

            assertThat(released.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken by the release")
                    .isTrue();
            assertThat(unrelated.getCount()).as("another name's subscriber").isEqualTo(1);
            other.close(); // closing a subscription is allowed at any time; the backend's close ends the rest
        }
    }

    /**
     * A release of a name nobody is queued for is one plain update (the common case). It leaves the row as
     * the full release does (free, the holder's metadata gone, the token kept for the next grant to pass),
     * and still wakes a caller refused without a queue place (contended: woken by the name). A release with a
     * queue goes on to the full release, which grants the first queued waiter
     * ({@link #aReleaseGrantsTheFirstQueuedWaiterAlone}).
     */
    @Test
    void aReleaseNobodyIsQueuedForFreesTheRowAsTheFullReleaseAndStillWakesARefusedCaller() throws Exception {
        String name = name();
        String holder = lease();
        AcquireResult granted =
                backend.tryAcquire(name, holder, TTL, LockMetadata.of("owner-1", "job", Map.of("k", "v")));
        assertThat(granted.acquired()).isTrue();
        CountDownLatch released = new CountDownLatch(1);
        try (PostgresLockBackend listening = builder().build();
                PostgresLockBackend refused = builder().build()) {
            SpiChecks.subscribe(listening, name, released::countDown);
            assertThat(refused.tryAcquire(name, lease(), TTL).acquired())
                    .as("a caller that does not wait: refused, marked contended, not queued")
                    .isFalse();

            assertThat(backend.release(name, holder)).isTrue();

            assertThat(released.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the contended release wakes the name's listeners")
                    .isTrue();
        }
        try (Connection c = server.connect(url);
                PreparedStatement ps = c.prepareStatement("SELECT lease_id, expires_at <= clock_timestamp(), token,"
                        + " lock_owner, lock_type, lock_data, granted_at, granted_to, woken, waiters, queued_grants"
                        + " FROM fencelock_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).as("lease").isNull();
                assertThat(rs.getBoolean(2)).as("expired").isTrue();
                assertThat(rs.getLong(3)).as("token kept").isEqualTo(granted.token());
                for (int column = 4; column <= 11; column++) {
                    assertThat(rs.getObject(column)).as("column %d", column).isNull();
                }
            }
        }
        assertThat(backend.release(name, holder)).as("released once").isFalse();
        AcquireResult next = backend.tryAcquire(name, lease(), TTL);
        assertThat(next.acquired()).isTrue();
        assertThat(next.token()).isGreaterThan(granted.token());
    }

    /**
     * Waiting clients queue on the row in the order of their first refusal, each under the lease of that
     * refusal, and a release grants the first alone in the same update and tells its client
     * ({@link QueuedGrantProviderChecks#assertAReleaseGrantsTheFirstQueuedWaiterAlone}); notifications reach
     * every listener in commit order.
     */
    @Test
    void aReleaseGrantsTheFirstQueuedWaiterAlone() throws Exception {
        try (PostgresLockBackend firstSide = builder().build();
                PostgresLockBackend secondSide = builder().build()) {
            QueuedGrantProviderChecks.assertAReleaseGrantsTheFirstQueuedWaiterAlone(
                    backend, firstSide, secondSide, name(), PostgresLockBackendTest::queueLength);
        }
    }

    /** How many clients {@code name}'s row queues. */
    private static int queueLength(String name) {
        try {
            return waiters(name).size();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String queue(PostgresLockBackend side, String name, Semaphore wakeUps) {
        return QueuedGrantProviderChecks.queue(side, name, wakeUps);
    }

    /**
     * A queued waiter whose client is gone does not hold the lock back: a client that closes leaves the queue
     * (one that crashed is skipped, below), and the release grants the waiter behind it.
     */
    @Test
    void aQueuedWaiterThatIsGoneDoesNotHoldTheLockBack() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore second = new Semaphore(0);
        try (PostgresLockBackend secondSide = builder().build()) {
            try (PostgresLockBackend gone = builder().build()) {
                SpiChecks.subscribe(gone, name, () -> {});
                assertThat(gone.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            }
            String secondQueued = queue(secondSide, name, second);

            assertThat(backend.release(name, holder)).isTrue();
            assertThat(second.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the waiter behind the gone one is told")
                    .isTrue();
            assertThat(backend.inspect(name).map(LockInfo::leaseId))
                    .as("the holder after the release")
                    .contains(secondQueued);
            assertThat(secondSide.release(name, secondQueued)).isTrue();
        }
    }

    /** The row's queue of listener ids, in order. */
    private static List<String> waiters(String name) throws SQLException {
        try (Connection c = server.connect(url);
                PreparedStatement ps = c.prepareStatement("SELECT waiters FROM fencelock_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the row of " + name).isTrue();
                java.sql.Array a = rs.getArray(1);
                return a == null ? List.of() : List.of((String[]) a.getArray());
            }
        }
    }

    /** What a client that crashed while queued leaves behind: its listener's id, first in the queue. */
    private static void queueACrashedClientFirst(String name) throws SQLException {
        try (Connection c = server.connect(url);
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE fencelock_locks SET waiters = array_prepend(?, waiters) WHERE name = ?")) {
            ps.setString(1, UUID.randomUUID().toString());
            ps.setString(2, name);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    /** No connection holds the listener key of a crashed client's id: the release skips it and drops it. */
    @Test
    void aReleaseSkipsTheEntriesOfClientsThatCrashed() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend survivor = builder().build()) {
            Semaphore survivorWoken = new Semaphore(0);
            queue(survivor, name, survivorWoken);
            queueACrashedClientFirst(name);
            queueACrashedClientFirst(name);
            assertThat(waiters(name)).hasSize(3);

            assertThat(backend.release(name, holder)).isTrue();
            assertThat(survivorWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the release skips the crashed clients and wakes the next")
                    .isTrue();
            assertThat(waiters(name))
                    .as("the crashed clients' entries went with the wake-up")
                    .isEmpty();
        }
    }

    /**
     * A client whose waiter stops waiting leaves the queue (its leave runs on the listener's thread), and the
     * release grants the client that stayed. Which comes first, the leave or a release, is the engine's to
     * settle (it releases a grant nobody here waits for: {@code releaseWakesTheNextWaiterWhenOneLeft}); here
     * the release waits for the leave.
     */
    @Test
    void aWaiterThatStopsWaitingLeavesTheQueue() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend leaving = builder().build();
                PostgresLockBackend staying = builder().build()) {
            Semaphore stayingWoken = new Semaphore(0);
            WakeUpSubscription leavingWait = SpiChecks.subscribe(leaving, name, () -> {});
            assertThat(leaving.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            String stayed = queue(staying, name, stayingWoken);
            assertThat(waiters(name)).hasSize(2);

            leavingWait.close();
            awaitQueue(name, 1);
            assertThat(backend.release(name, holder)).isTrue();
            assertThat(stayingWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the waiter that stayed is told of its grant")
                    .isTrue();
            assertThat(backend.inspect(name).map(LockInfo::leaseId)).contains(stayed);
            assertThat(waiters(name))
                    .as("the queue once the one who stayed is granted")
                    .isEmpty();
            assertThat(staying.release(name, stayed)).isTrue();
        }
    }

    /**
     * A client of an earlier version queues without a grant: a release wakes it alone and leaves the name
     * free, and a client woken after it stopped waiting passes the wake-up on (the leave statement wakes the
     * next, as a release would). Shown with the grants taken out of the row, as such a queue looks.
     */
    @Test
    void aWakeUpHeardAndNotUsedIsPassedOn() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend first = builder().build();
                PostgresLockBackend second = builder().build()) {
            Semaphore firstWoken = new Semaphore(0);
            Semaphore secondWoken = new Semaphore(0);
            WakeUpSubscription firstWait = SpiChecks.subscribe(first, name, firstWoken::release);
            assertThat(first.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            queue(second, name, secondWoken);
            try (Connection c = server.connect(url);
                    PreparedStatement ps =
                            c.prepareStatement("UPDATE fencelock_locks SET queued_grants = NULL WHERE name = ?")) {
                ps.setString(1, name);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }

            assertThat(backend.release(name, holder)).isTrue();
            assertThat(firstWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the first client is woken")
                    .isTrue();
            assertThat(backend.inspect(name).map(LockInfo::held))
                    .as("a wake-up, not a grant")
                    .contains(false);
            assertThat(secondWoken.availablePermits()).as("the second, not yet").isZero();
            firstWait.close();
            assertThat(secondWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the wake-up the first did not use reaches the second")
                    .isTrue();
            assertThat(waiters(name)).isEmpty();
        }
    }

    @Test
    void aClosingClientLeavesTheQueue() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend closing = builder().build()) {
            queue(closing, name, new Semaphore(0));
            assertThat(waiters(name)).hasSize(1);
        }
        assertThat(waiters(name)).as("the queue after its only client closed").isEmpty();
        assertThat(backend.release(name, holder)).isTrue();
    }

    /**
     * A queued waiter granted by a release leaves the queue with its grant entry: its own release of that
     * grant notifies nobody, so the next grant it hears is the one its next refusal asked for. Notifications
     * reach a listener in commit order, so once that one is heard, one of its own release would have been too.
     */
    @Test
    void aQueuedWaiterGrantedLeavesTheQueue() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore first = new Semaphore(0);
        try (PostgresLockBackend firstSide = builder().build()) {
            String queued = queue(firstSide, name, first);
            assertThat(backend.release(name, holder)).isTrue();
            assertThat(first.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(waiters(name)).isEmpty();
            assertThat(queuedGrants(name)).as("the grant entries once granted").isNull();
            assertThat(firstSide.release(name, queued)).isTrue();

            String next = lease();
            assertThat(backend.tryAcquire(name, next, TTL).acquired()).isTrue();
            String queuedAgain = lease();
            assertThat(firstSide.tryAcquire(name, queuedAgain, TTL).queuedAs())
                    .as("queued again, under its new refused lease")
                    .isEqualTo(queuedAgain);
            assertThat(backend.release(name, next)).isTrue();
            assertThat(first.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("told of the grant its new refusal asked for")
                    .isTrue();
            assertThat(first.availablePermits())
                    .as("and of nothing by its own release before")
                    .isZero();
            assertThat(backend.inspect(name).map(LockInfo::leaseId)).contains(queuedAgain);
            assertThat(firstSide.release(name, queuedAgain)).isTrue();
        }
    }

    /** A queue entry is rewritten only when a quarter of its TTL old: {@link QueuedGrantProviderChecks}. */
    @Test
    void aQueuedGrantGrownOldTakesTheLatestRefusedLease() throws Exception {
        try (PostgresLockBackend side = builder().build()) {
            QueuedGrantProviderChecks.assertAPlaceGrownOldTakesTheLatestRefusedLease(
                    backend, side, name(), PostgresLockBackendTest::queueLength);
        }
    }

    /** The release of the lease a client is queued under, holding nothing, withdraws the client's place. */
    @Test
    void aReleaseOfAQueuedLeaseWithdrawsItsPlace() throws Exception {
        String name = name();
        try (PostgresLockBackend side = builder().build()) {
            QueuedGrantProviderChecks.assertAReleaseOfAQueuedLeaseWithdrawsItsPlace(
                    backend, side, name, PostgresLockBackendTest::queueLength);
        }
        assertThat(queuedGrants(name)).as("no grant entry left").isNull();
    }

    /** The row's grant entries of queued waiters (null when none). */
    private static String queuedGrants(String name) throws SQLException {
        try (Connection c = server.connect(url);
                PreparedStatement ps =
                        c.prepareStatement("SELECT queued_grants::text FROM fencelock_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the row of " + name).isTrue();
                return rs.getString(1);
            }
        }
    }

    /** Waits (bounded) until {@code name}'s queue has {@code size} entries: a leave runs on the listener's thread. */
    private static void awaitQueue(String name, int size) throws Exception {
        long start = System.nanoTime();
        while (waiters(name).size() != size) {
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the queue of " + name + " to have " + size + " entries")
                    .isLessThan(Duration.ofSeconds(HANG_GUARD_SECONDS));
            Thread.onSpinWait();
        }
    }

    /** A NOTIFY serialises commits database-wide: only a release that an attempt was refused on since the grant sends one. */
    @Test
    void onlyAReleaseSomeoneWasRefusedOnNotifies() throws InterruptedException {
        SpiChecks.assertOnlyReleasesAfterARefusalSignal(backend, name(), TTL, Duration.ofSeconds(HANG_GUARD_SECONDS));
    }

    /**
     * Once a refusal since the grant is recorded, further refusals are plain reads: they neither wait
     * for nor take the row lock (a row lock is written into the row, and refused waiters would commit
     * one after another behind each grant). Shown with the row locked by an open transaction, which
     * would block a refusal that took the lock until that transaction ends.
     */
    @Test
    void aRecordedRefusalIsRepeatedWithoutTheRowLock() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                .as("the first refusal, recorded")
                .isFalse();
        ExecutorService refuser = Executors.newSingleThreadExecutor();
        try (Connection locker = server.connect(url)) {
            locker.setAutoCommit(false);
            try (PreparedStatement ps =
                    locker.prepareStatement("SELECT 1 FROM fencelock_locks WHERE name = ? FOR UPDATE")) {
                ps.setString(1, name);
                ps.executeQuery().close();
            }
            Future<AcquireResult> again = refuser.submit(() -> backend.tryAcquire(name, lease(), TTL));
            AcquireResult refused = again.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS); // while the row stays locked
            assertThat(refused.acquired()).isFalse();
            assertThat(refused.holderRemaining())
                    .as("the holder's remaining time")
                    .isPositive();
            locker.rollback();
        } finally {
            refuser.shutdownNow();
        }
        assertThat(backend.release(name, holder)).isTrue();
        AcquireResult next = backend.tryAcquire(name, lease(), TTL);
        assertThat(next.acquired()).as("free after the release").isTrue();
    }

    @Test
    void worksOnTheApplicationsTransactionalPoolAndLeavesItOpen() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(server.user());
        config.setPassword(server.password());
        config.setAutoCommit(false); // an application pool in transaction mode
        config.setMaximumPoolSize(3);
        try (HikariDataSource appPool = new HikariDataSource(config)) {
            String name = name();
            String holder = lease();
            CountDownLatch released = new CountDownLatch(1);
            try (PostgresLockBackend onAppPool =
                    PostgresLockBackend.builder().dataSource(appPool).build()) {
                SpiChecks.subscribe(onAppPool, name, released::countDown);
                assertThat(onAppPool.tryAcquire(name, holder, TTL).acquired()).isTrue();
                assertThat(backend.inspect(name).orElseThrow().holder())
                        .as("committed, seen by others")
                        .contains(holder);
                assertThat(onAppPool.tryAcquire(name, lease(), TTL).acquired())
                        .as("a waiter's refused attempt")
                        .isFalse();
                assertThat(onAppPool.release(name, holder)).isTrue();
                assertThat(released.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                        .as("woken through the app's pool")
                        .isTrue();
            }
            assertThat(appPool.isClosed()).isFalse();
            try (Connection c = appPool.getConnection()) {
                assertThat(c.isValid(5)).isTrue();
            }
        }
    }

    /**
     * With {@code synchronous_commit = off} a commit returns before its WAL is on disk, and a crash may lose the
     * last grants and their sequence values, so tokens could be issued again: the backend does not declare
     * DURABLE_TOKENS then, whether the setting comes from the URL, the application's pool or the server.
     */
    @Test
    void durableTokensAreDeclaredOnlyWhenACommitIsFlushedBeforeItReturns() {
        assertThat(backend.capabilities()).contains(Capability.DURABLE_TOKENS);
        String lazyUrl = url + (url.contains("?") ? "&" : "?") + "options=-c%20synchronous_commit%3Doff";
        try (PostgresLockBackend onLazyUrl = PostgresLockBackend.builder()
                .jdbcUrl(lazyUrl)
                .user(server.user())
                .password(server.password())
                .build()) {
            assertThat(onLazyUrl.capabilities())
                    .doesNotContain(Capability.DURABLE_TOKENS)
                    .contains(Capability.FENCING, Capability.SERVER_TIME);
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(server.user());
        config.setPassword(server.password());
        config.setMaximumPoolSize(1);
        config.setConnectionInitSql("SET synchronous_commit = off");
        try (HikariDataSource appPool = new HikariDataSource(config);
                PostgresLockBackend onLazyPool =
                        PostgresLockBackend.builder().dataSource(appPool).build()) {
            assertThat(onLazyPool.capabilities()).doesNotContain(Capability.DURABLE_TOKENS);
        }
        config.setConnectionInitSql("SET synchronous_commit = local"); // flushed here, not awaited on a standby
        try (HikariDataSource appPool = new HikariDataSource(config);
                PostgresLockBackend onLocalPool =
                        PostgresLockBackend.builder().dataSource(appPool).build()) {
            assertThat(onLocalPool.capabilities()).contains(Capability.DURABLE_TOKENS);
        }
    }

    /**
     * A pooler in transaction mode hands one server process to whichever client has a transaction: pgjdbc's
     * prepared statements then meet other clients' under the same names, and the LISTEN is lost. A backend whose
     * own pool or application's pool would go through one (a real PgBouncer, in front of the test's server)
     * refuses to start, naming it; through the same PgBouncer in session mode it works.
     */
    @Test
    void aUrlThroughAPoolerInTransactionModeIsRefusedAndOneInSessionModeWorks() throws Exception {
        String database = url.replaceFirst("^jdbc:postgresql://[^/]*/", "").replaceFirst("\\?.*$", "");
        PgBouncerProcess pgbouncer = PgBouncerProcess.inFrontOf(
                Endpoints.single(url, 5432).orElseThrow(), database, server.user(), server.password());
        try {
            assertThatThrownBy(() -> PostgresLockBackend.builder()
                            .jdbcUrl(pgbouncer.jdbcUrl("transactions"))
                            .user(server.user())
                            .password(server.password())
                            .build()
                            .close())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("pooler in transaction or statement mode");
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(pgbouncer.jdbcUrl("transactions"));
            config.setUsername(server.user());
            config.setPassword(server.password());
            config.setMaximumPoolSize(2);
            try (HikariDataSource appPool = new HikariDataSource(config)) {
                assertThatThrownBy(() -> PostgresLockBackend.builder()
                                .dataSource(appPool)
                                .build()
                                .close())
                        .as("an application's pool through it")
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("pooler in transaction or statement mode");
            }
            try (PostgresLockBackend inSessions = PostgresLockBackend.builder()
                    .jdbcUrl(pgbouncer.jdbcUrl("sessions"))
                    .user(server.user())
                    .password(server.password())
                    .build()) {
                String name = name();
                String holder = lease();
                assertThat(inSessions.tryAcquire(name, holder, TTL).acquired()).isTrue();
                assertThat(inSessions.tryAcquire(name, lease(), TTL).acquired()).isFalse();
                assertThat(inSessions.release(name, holder)).isTrue();
            }
        } finally {
            pgbouncer.destroy();
        }
    }

    /**
     * A hot standby (in recovery) is refused at start-up with an {@link IllegalStateException} that says so, before
     * a table is created or verified: it takes no writes, so every acquire on it would fail. Its tables came with
     * the base backup, so only the check refuses it. Its primary, while the standby streams asynchronously,
     * declares neither {@link Capability#LINEARIZABLE} nor {@link Capability#DURABLE_TOKENS} (a failover to the
     * standby could lose the last grants and their tokens), and both again once every commit waits for the
     * standby ({@code synchronous_standby_names}).
     */
    @Test
    void aStandbyIsRefusedAndItsPrimaryDeclaresWhatAFailoverKeeps() throws SQLException {
        try (PostgresServer primary = PostgresServer.start(PostgresServer.Source.BINARIES)) {
            String primaryUrl = primary.createDatabase("pg_standby");
            try (PostgresLockBackend alone =
                    ownServerBuilder(primary, primaryUrl).createTable(true).build()) {
                assertThat(alone.capabilities())
                        .as("a primary without standbys")
                        .contains(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS);
                assertThat(alone.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
            }
            try (PostgresServer standby = PostgresServer.startStandbyOf(primary)) {
                String standbyUrl =
                        PostgresServer.withAddress(primaryUrl, standby.address().orElseThrow());
                for (boolean createTable : new boolean[] {true, false}) {
                    assertThatThrownBy(() -> ownServerBuilder(standby, standbyUrl)
                                    .createTable(createTable)
                                    .build())
                            .as("createTable(%s) on the standby", createTable)
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("is a standby (in recovery)");
                }
                try (PostgresLockBackend streaming =
                        ownServerBuilder(primary, primaryUrl).build()) {
                    assertThat(streaming.capabilities())
                            .as("a primary streaming to a standby asynchronously")
                            .doesNotContain(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS)
                            .contains(Capability.FENCING, Capability.GRANT_ON_RELEASE);
                    assertThat(streaming.tryAcquire(name(), lease(), TTL).acquired())
                            .isTrue();
                }
                try (Connection c = primary.connect(primaryUrl);
                        Statement s = c.createStatement()) {
                    s.execute("ALTER SYSTEM SET synchronous_standby_names = '*'");
                    s.execute("SELECT pg_reload_conf()");
                }
                awaitNewSessionsSee(primary, primaryUrl, "synchronous_standby_names", "*");
                try (PostgresLockBackend waitingForIt =
                        ownServerBuilder(primary, primaryUrl).build()) {
                    assertThat(waitingForIt.capabilities())
                            .as("a primary whose commits wait for its standby")
                            .contains(Capability.LINEARIZABLE, Capability.DURABLE_TOKENS);
                    assertThat(waitingForIt.tryAcquire(name(), lease(), TTL).acquired())
                            .isTrue();
                }
            }
        }
    }

    /** Until a new session reads {@code value} for {@code setting} (a reload reaches new sessions soon after). */
    private static void awaitNewSessionsSee(PostgresServer server, String url, String setting, String value)
            throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Connection c = server.connect(url);
                    PreparedStatement s = c.prepareStatement("SELECT current_setting(?)")) {
                s.setString(1, setting);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if (value.equals(rs.getString(1))) {
                        return;
                    }
                }
            }
            assertThat(System.nanoTime())
                    .as("%s = %s seen within 30 s", setting, value)
                    .isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private static PostgresLockBackend.Builder ownServerBuilder(PostgresServer own, String ownUrl) {
        return PostgresLockBackend.builder().jdbcUrl(ownUrl).user(own.user()).password(own.password());
    }

    @Test
    void survivesACrashOfTheServerWithRisingTokensAndWakeUps() throws InterruptedException {
        try (PostgresServer own = PostgresServer.start(PostgresServer.Source.BINARIES)) {
            ServerControl control = own.control().orElseThrow();
            String ownUrl = own.createDatabase("pg_crash");
            Semaphore wakeUps = new Semaphore(0);
            String name = name();
            try (PostgresLockBackend crashing = PostgresLockBackend.builder()
                    .jdbcUrl(ownUrl)
                    .user(own.user())
                    .password(own.password())
                    .createTable(true)
                    .build()) {
                SpiChecks.subscribe(crashing, name, wakeUps::release);
                long before =
                        crashing.tryAcquire(name, lease(), EXPIRED_AT_ONCE).token();

                control.kill();
                LockBackendException down =
                        catchThrowableOfType(LockBackendException.class, () -> crashing.inspect(name));
                assertThat(down).isNotNull();
                assertThat(down.isRetryable()).as(down.getMessage()).isTrue();
                control.start();

                // the listener wakes everyone once it has reconnected: from then on it hears releases again
                assertThat(wakeUps.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                        .as("woken after reconnecting")
                        .isTrue();
                String holder = lease();
                AcquireResult after = retryWhileRetryable(() -> crashing.tryAcquire(name, holder, TTL));
                assertThat(after.token()).as("the sequence survived the crash").isGreaterThan(before);
                assertThat(crashing.tryAcquire(name, lease(), TTL).acquired())
                        .as("a waiter's refused attempt")
                        .isFalse();
                assertThat(crashing.release(name, holder)).isTrue();
                assertThat(wakeUps.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                        .as("woken by the release")
                        .isTrue();
            }
        }
    }

    /** Connections died with the server; the engine retries retryable failures, and so does this. */
    private static <T> T retryWhileRetryable(Callable<T> operation) {
        return SpiChecks.retryWhileRetryable(operation, Duration.ofSeconds(HANG_GUARD_SECONDS));
    }

    @Test
    void badIdentifiersAreRejectedBeforeAnyIo() {
        // an unreachable URL: any I/O would fail with a connection error, not the expected message
        PostgresLockBackend.Builder offline =
                PostgresLockBackend.builder().jdbcUrl("jdbc:postgresql://127.0.0.1:1/none");
        assertThatThrownBy(() -> offline.schema("public; drop table x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema")
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> offline.table("locks\""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table");
        assertThatThrownBy(() -> offline.table("t".repeat(54)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 53");
        assertThatThrownBy(() -> PostgresLockBackend.builder().jdbcUrl("jdbc:mysql://h/db"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PostgresLockBackendProvider()
                        .open("jdbc:postgresql://127.0.0.1:1/none", Map.of("tabel", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[tabel]")
                .as("the refusal lists the known properties")
                .hasMessageContaining("createTable");
    }

    @Test
    void selfCheckRejectsACachedSequenceAMissingTableAndAnOlderTable() throws SQLException {
        String table = "cached_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        execute(PostgresLockBackend.ddl("public", table));
        execute("ALTER SEQUENCE public." + table + "_token_seq CACHE 20");

        assertThatThrownBy(() -> builder().table(table).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("CACHE 20")
                .hasMessageContaining("ALTER SEQUENCE \"public\".\"" + table + "_token_seq\" CACHE 1");

        assertThatThrownBy(() -> builder().table("missing_locks").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("\"public\".\"missing_locks\" does not exist")
                .hasMessageContaining("createTable(true)")
                .hasMessageContaining("CREATE TABLE");

        String noKey = "nokey_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        execute(
                "CREATE SEQUENCE " + noKey + "_token_seq CACHE 1",
                "CREATE TABLE " + noKey + " (name text, lease_id text, token int NOT NULL,"
                        + " token_issued_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)");
        assertThatThrownBy(() -> builder().table(noKey).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("column token is integer, expected bigint")
                .hasMessageContaining("no primary key on (name)");

        String older = "older_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        execute(
                "CREATE SEQUENCE " + older + "_token_seq CACHE 1",
                "CREATE TABLE " + older + " (name text PRIMARY KEY, lease_id text, token bigint NOT NULL,"
                        + " token_issued_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)");
        String upgrade = "ALTER TABLE \"public\".\"" + older + "\""
                + " ADD COLUMN IF NOT EXISTS contended boolean NOT NULL DEFAULT false,"
                + " ADD COLUMN IF NOT EXISTS lock_owner text, ADD COLUMN IF NOT EXISTS lock_type text,"
                + " ADD COLUMN IF NOT EXISTS lock_data jsonb, ADD COLUMN IF NOT EXISTS granted_at timestamptz,"
                + " ADD COLUMN IF NOT EXISTS shared_kind text, ADD COLUMN IF NOT EXISTS shared_limit integer,"
                + " ADD COLUMN IF NOT EXISTS shared_until timestamptz,"
                + " ADD COLUMN IF NOT EXISTS shared_held_until timestamptz, ADD COLUMN IF NOT EXISTS waiters text[],"
                + " ADD COLUMN IF NOT EXISTS woken text, ADD COLUMN IF NOT EXISTS queued_grants jsonb,"
                + " ADD COLUMN IF NOT EXISTS granted_to text";
        assertThatThrownBy(() -> builder().table(older).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("createTable(true)")
                .hasMessageContaining(upgrade)
                .hasMessageContaining("the table of shared grants \"public\".\"" + older + "_shared\" is missing");
        // the hint's ALTER, then the statements it shows (all of them safe to run again)
        execute(upgrade, PostgresLockBackend.ddl("public", older));
        try (PostgresLockBackend upgraded = builder().table(older).build()) {
            assertThat(upgraded.tryAcquire(name(), lease(), TTL).acquired())
                    .as("the table as the hint left it")
                    .isTrue();
        }
    }

    @Test
    void createTableAddsTheMetadataColumnsToATableOfTheVersionBefore() throws SQLException {
        String table =
                "premeta_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        // the DDL of the version before metadata, and a grant it made
        execute(
                "CREATE SEQUENCE " + table + "_token_seq AS bigint CACHE 1 NO CYCLE",
                "CREATE TABLE " + table + " (name text PRIMARY KEY, lease_id text, token bigint NOT NULL,"
                        + " token_issued_at timestamptz NOT NULL, expires_at timestamptz NOT NULL,"
                        + " contended boolean NOT NULL DEFAULT false)",
                "INSERT INTO " + table + " VALUES ('old/held', 'old-lease', nextval('" + table + "_token_seq'),"
                        + " clock_timestamp(), clock_timestamp() + interval '1 hour', false)");
        assertThatThrownBy(() -> builder().table(table).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "[lock_owner, lock_type, lock_data, granted_at, shared_kind, shared_limit, shared_until,"
                                + " shared_held_until, waiters, woken, queued_grants, granted_to]");

        try (PostgresLockBackend upgraded =
                builder().table(table).createTable(true).build()) {
            LockInfo old = upgraded.inspect("old/held").orElseThrow();
            assertThat(old.holder()).as("the older grant, still held").contains("old-lease");
            assertThat(old.metadata()).isEqualTo(LockMetadata.NONE);
            assertThat(old.heldSince()).as("an older grant's time is unknown").isNull();

            String name = name();
            String lease = lease();
            LockMetadata metadata = LockMetadata.of("host/1/c", "job", Map.of("k", "v"));
            AcquireResult granted = upgraded.tryAcquire(name, lease, TTL, metadata);
            assertThat(granted.token()).as("tokens go on from the sequence").isGreaterThan(old.token());
            LockInfo seen = upgraded.inspect(name).orElseThrow();
            assertThat(seen.metadata()).isEqualTo(metadata);
            assertThat(seen.heldSince()).isNotNull();
        }
        // up to date now: a start without createTable passes the check
        builder().table(table).build().close();
    }

    @Test
    void createTableAddsSharedLocksToATableOfTheVersionBeforeAndReplacesFunctionsOfAnotherVersion()
            throws SQLException {
        String table =
                "preshared_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        // the DDL of the version before shared locks, and a grant it made
        execute(
                "CREATE SEQUENCE " + table + "_token_seq AS bigint CACHE 1 NO CYCLE",
                "CREATE TABLE " + table + " (name text PRIMARY KEY, lease_id text, token bigint NOT NULL,"
                        + " token_issued_at timestamptz NOT NULL, expires_at timestamptz NOT NULL,"
                        + " contended boolean NOT NULL DEFAULT false, lock_owner text, lock_type text,"
                        + " lock_data jsonb, granted_at timestamptz)",
                "INSERT INTO " + table + " (name, lease_id, token, token_issued_at, expires_at)"
                        + " VALUES ('old/held', 'old-lease', nextval('" + table + "_token_seq'),"
                        + " clock_timestamp(), clock_timestamp() + interval '1 hour')");
        String function = "\"public\".\"" + table + "_sh_acq\"(";
        assertThatThrownBy(() -> builder().table(table).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "[shared_kind, shared_limit, shared_until, shared_held_until, waiters, woken, queued_grants, granted_to]")
                .hasMessageContaining("the table of shared grants \"public\".\"" + table + "_shared\" is missing")
                .hasMessageContaining("function " + function)
                .hasMessageContaining("CREATE OR REPLACE FUNCTION " + function);

        try (PostgresLockBackend upgraded =
                builder().table(table).createTable(true).build()) {
            assertThat(upgraded.inspect("old/held").orElseThrow().holder()).contains("old-lease");
            SharedRequest threePermits = new SharedRequest(LockMode.PERMITS, 2, 3, lease(), false, false);
            assertThatThrownBy(
                            () -> upgraded.tryAcquireShared("old/held", lease(), TTL, threePermits, LockMetadata.NONE))
                    .as("the older grant's name is a mutex while it is held")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a mutex");
            String name = name();
            AcquireResult permits = upgraded.tryAcquireShared(name, lease(), TTL, threePermits, LockMetadata.NONE);
            assertThat(permits.token())
                    .as("shared tokens go on from the sequence")
                    .isGreaterThan(upgraded.inspect("old/held").orElseThrow().token());
            assertThat(upgraded.inspect(name).orElseThrow().permitsHeld()).isEqualTo(2);
        }
        builder().table(table).build().close(); // up to date now

        // a function of another version (an older release's body) is named, and createTable(true) replaces it
        execute("CREATE OR REPLACE FUNCTION \"" + table + "_sh_rel\"(p_name text, p_id text, p_channel text)"
                + " RETURNS boolean LANGUAGE sql AS 'SELECT false'");
        assertThatThrownBy(() -> builder().table(table).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "function \"public\".\"" + table + "_sh_rel\"(text,text,text) is of another version");
        builder().table(table).createTable(true).build().close();
        builder().table(table).build().close();
    }

    @Test
    void createTableIsIdempotentAndSafeWhenFourThreadsRace() throws Exception {
        String table = "raced_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
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
        try (PostgresLockBackend again =
                builder().table(table).createTable(true).build()) {
            assertThat(again.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
        }
    }

    /**
     * The own pool admits as many borrowers as it has connections (lock-jdbc's ConnectionGate): more threads than
     * connections all get their turn, and each gives its admission back, whether its call succeeded or not.
     */
    @Test
    void moreThreadsThanPooledConnectionsEachGetTheirTurnAndGiveItBack() throws Exception {
        try (PostgresLockBackend small = builder().poolSize(2).build()) {
            int threads = 12;
            int cycles = 25;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> runs = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    String name = name();
                    runs.add(pool.submit(() -> {
                        int granted = 0;
                        for (int i = 0; i < cycles; i++) {
                            String id = lease();
                            if (small.tryAcquire(name, id, TTL).acquired() && small.release(name, id)) {
                                granted++;
                            }
                        }
                        return granted;
                    }));
                }
                for (Future<Integer> run : runs) {
                    assertThat(run.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isEqualTo(cycles);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(small.connections().freeAdmissions()).isEqualTo(2);
        }
    }

    /**
     * A borrower that finds every connection taken waits up to the connect timeout, then fails retryably with the
     * backend unchanged; an interrupted caller is still served while a connection is free (its interrupt stays
     * set), and fails at once when it would have to wait.
     */
    @Test
    void aBorrowerWaitsForAConnectionOnlyAsLongAsTheConnectTimeout() throws Exception {
        try (PostgresLockBackend one =
                builder().poolSize(1).connectTimeout(Duration.ofMillis(400)).build()) {
            String name = name();
            try (Connection taken = one.connections().connection()) {
                assertThat(one.connections().freeAdmissions()).isZero();
                long start = System.nanoTime();
                LockBackendException waited =
                        catchThrowableOfType(() -> one.tryAcquire(name, lease(), TTL), LockBackendException.class);
                assertThat(waited.isRetryable()).isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
                Thread.currentThread().interrupt();
                try {
                    LockBackendException interrupted =
                            catchThrowableOfType(() -> one.tryAcquire(name, lease(), TTL), LockBackendException.class);
                    assertThat(interrupted).hasMessageContaining("interrupted while waiting for a connection");
                    assertThat(Thread.currentThread().isInterrupted()).isTrue();
                } finally {
                    Thread.interrupted();
                }
            }
            assertThat(one.connections().freeAdmissions()).isEqualTo(1);
            assertThat(one.inspect(name)).isEmpty(); // neither refused call reached the table
            String id = lease();
            Thread.currentThread().interrupt();
            try {
                assertThat(one.tryAcquire(name, id, TTL).acquired()).isTrue();
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(one.release(name, id)).isTrue();
            assertThat(one.connections().freeAdmissions()).isEqualTo(1);
        }
    }

    @Test
    void tablesInOneDatabaseDoNotShareWakeUps() throws InterruptedException {
        String name = name();
        CountDownLatch otherTable = new CountDownLatch(1);
        CountDownLatch sameTable = new CountDownLatch(1);
        WakeUpSubscription subscription = SpiChecks.subscribe(backend, name, sameTable::countDown);
        try (PostgresLockBackend second =
                builder().table("second_locks").createTable(true).build()) {
            SpiChecks.subscribe(second, name, otherTable::countDown);
            String holder = lease();
            backend.tryAcquire(name, holder, TTL);
            assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                    .as("a waiter's refused attempt")
                    .isFalse();
            backend.release(name, holder);

            assertThat(sameTable.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(otherTable.getCount()).isEqualTo(1);
        } finally {
            subscription.close();
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
        CredentialChecks.assertNoSecret(wrongPassword, secret);
    }

    @Test
    void credentialsOfEveryShapeStayOutOfMessagesAndLogsWhileTheServersWordsArriveIntact() throws SQLException {
        String role = "verify_" + UUID.randomUUID().toString().substring(0, 6);
        String right = CredentialChecks.special("right");
        String wrong = CredentialChecks.special("wrong");
        String other = CredentialChecks.special("other");
        execute(
                "CREATE ROLE " + role + " LOGIN PASSWORD '" + right + "'", // no quote or backslash in it
                "GRANT ALL ON SCHEMA public TO " + role,
                "GRANT ALL ON ALL TABLES IN SCHEMA public TO " + role,
                "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO " + role);
        try {
            // the right password percent-encoded in the URL, unknown password1..3 beside it: connects, shows no secret
            String rightUrl = CredentialChecks.withParameters(
                    url,
                    "user=" + role + "&password=" + CredentialChecks.encoded(right)
                            + "&password1=" + CredentialChecks.encoded(other) + "&password2="
                            + CredentialChecks.encoded(other)
                            + "&password3=" + CredentialChecks.encoded(other));
            try (PostgresLockBackend ok =
                    PostgresLockBackend.builder().jdbcUrl(rightUrl).poolSize(1).build()) {
                assertThat(ok.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
                CredentialChecks.assertNoSecret(ok.toString(), right, other);
                String dump = CredentialChecks.hikariConfigurationDump(ok.ownPool());
                assertThat(dump).contains("fencelock-postgres");
                CredentialChecks.assertNoSecret(dump, right, other);
            }
            Throwable refused = catchThrowable(() -> PostgresLockBackend.builder()
                    .jdbcUrl(CredentialChecks.withParameters(
                            url,
                            "user=" + role + "&password=" + CredentialChecks.encoded(wrong) + "&password1="
                                    + CredentialChecks.encoded(other)))
                    .poolSize(1)
                    .build()
                    .close());
            assertThat(refused)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("password authentication failed for user \"" + role + "\"")
                    .hasMessageContaining("password1=***");
            assertThat(((LockBackendException) refused).isRetryable()).isFalse();
            CredentialChecks.assertNoSecret(refused, wrong, other);
            // user-info, encoded or raw, is no pgjdbc URL: refused before any I/O, naming no part of it
            for (String userInfo : List.of(role + ":" + CredentialChecks.encoded(wrong), role + ":" + wrong)) {
                Throwable notPgjdbc = catchThrowable(() -> PostgresLockBackend.builder()
                        .jdbcUrl(CredentialChecks.withUserInfo(url, userInfo))
                        .poolSize(1)
                        .build()
                        .close());
                assertThat(notPgjdbc).isInstanceOf(IllegalArgumentException.class);
                CredentialChecks.assertNoSecret(notPgjdbc, wrong);
                assertThat(notPgjdbc.getMessage()).doesNotContain(role + ":");
            }
        } finally {
            execute("DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }

    @Test
    void declaresItsCapabilities() {
        assertThat(backend.capabilities())
                .containsExactlyInAnyOrder(
                        Capability.FENCING,
                        Capability.DURABLE_TOKENS,
                        Capability.SERVER_TIME,
                        Capability.WAKE_ON_RELEASE,
                        Capability.BATCH_RENEW,
                        Capability.TOKEN_PERIOD,
                        Capability.LINEARIZABLE,
                        Capability.PURGE_FREE,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL,
                        Capability.SHARED_LOCKS,
                        Capability.FAIR_ORDER,
                        Capability.HAND_OVER,
                        Capability.GRANT_ON_RELEASE);
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
