package io.fencelock.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.testservers.mongo.MongoServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The provider's own promises for shared grants on the Mongo fixture's server: the read-then-write
 * grant under contention, expiry from a server time taken after the request, the mutex and shared
 * kinds refusing each other, waiter withdrawal, renewal batches mixing both, and the token period.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MongoSharedLocksTest {
    private static final Duration TTL = Duration.ofSeconds(10);
    private MongoServer server;
    private String database;
    private MongoLockBackend backend;

    @BeforeAll
    void open() {
        server = MongoServer.shared();
        database = server.uniqueDatabase("shared");
        backend = open(server, database);
    }

    private static MongoLockBackend open(MongoServer server, String database) {
        return MongoLockBackend.builder().uri(server.uri()).database(database).build();
    }

    @AfterAll
    void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    private static String name() {
        return "s-" + UUID.randomUUID();
    }

    private static SharedRequest permits(int k, int n) {
        return new SharedRequest(LockMode.PERMITS, k, n, id(), false, false);
    }

    private static SharedRequest of(LockMode mode, String waiter, boolean waits, boolean fair) {
        return new SharedRequest(mode, 1, 0, waiter, waits, fair);
    }

    private AcquireResult take(String name, String lease, SharedRequest r) {
        return backend.tryAcquireShared(name, lease, TTL, r, LockMetadata.NONE);
    }

    @Test
    void racingPermitRequestsOfEightClientsGetExactlyTheLimitWithDistinctRisingTokens() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<LockBackend> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                clients.add(open(server, database));
            }
            for (int round = 0; round < 10; round++) {
                String name = name();
                long before = round % 2 == 0
                        ? 0
                        : backend.tryAcquire(name, id(), Duration.ofMillis(1)).token();
                Thread.sleep(round % 2 * 5L); // odd rounds: a mutex record that has just expired, even ones: a new name
                CyclicBarrier start = new CyclicBarrier(clients.size());
                List<Future<AcquireResult>> attempts = new ArrayList<>();
                for (LockBackend c : clients) {
                    attempts.add(pool.submit(() -> {
                        start.await(5, TimeUnit.SECONDS);
                        return c.tryAcquireShared(name, id(), TTL, permits(1, 3), LockMetadata.NONE);
                    }));
                }
                List<Long> tokens = new ArrayList<>();
                for (Future<AcquireResult> f : attempts) {
                    AcquireResult r = f.get(20, TimeUnit.SECONDS);
                    if (r.acquired()) {
                        tokens.add(r.token());
                    } else {
                        assertThat(r.holderRemaining()).isBetween(Duration.ZERO, TTL);
                    }
                }
                assertThat(tokens).as("grants in round " + round).hasSize(3).doesNotHaveDuplicates();
                assertThat(tokens).allMatch(t -> t > before && t <= before + 3);
                assertThat(backend.inspect(name).orElseThrow().permitsHeld()).isEqualTo(3);
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(LockBackend::close);
        }
    }

    @Test
    void aGrantExpiresNoEarlierThanTheTtlAfterTheRequestWasSentAndInspectShowsIt() throws Exception {
        String name = name();
        backend.tryAcquire(name, id(), Duration.ofMillis(1)); // the document exists: the two-round-trip path
        Thread.sleep(2);
        Instant serverBefore = backend.inspect(name).orElseThrow().serverTime();
        String lease = id();
        LockMetadata meta = LockMetadata.of("host/1", "job", Map.of("a.b", "$x"));
        AcquireResult r = backend.tryAcquireShared(name, lease, TTL, permits(2, 5), meta);
        assertThat(r.acquired()).isTrue();
        assertThat(r.expiresAt()).isAfterOrEqualTo(serverBefore.plus(TTL));
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.kind()).isEqualTo(LockMode.PERMITS);
        assertThat(info.limit()).isEqualTo(5);
        assertThat(info.token()).isEqualTo(r.token());
        LockHolder h = info.holders().get(0);
        assertThat(h.leaseId()).isEqualTo(lease);
        assertThat(h.permits()).isEqualTo(2);
        assertThat(h.metadata()).isEqualTo(meta);
        assertThat(h.expiresAt()).isEqualTo(r.expiresAt());
        assertThat(h.heldSince()).isAfterOrEqualTo(serverBefore).isBeforeOrEqualTo(info.serverTime());
        assertThat(backend.list(name)).extracting(LockInfo::name).containsExactly(name);
    }

    @Test
    void theMutexAndTheSharedKindsRefuseEachOtherButAFairMutexQueuesBehindTheMutex() {
        String name = name();
        String mutex = id();
        assertThat(backend.tryAcquire(name, mutex, TTL).acquired()).isTrue();
        assertThatThrownBy(() -> take(name, id(), of(LockMode.READ, id(), true, false)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a mutex")
                .hasMessageContaining("read-write");
        String fairWaiter = id();
        AcquireResult queued = take(name, id(), of(LockMode.EXCLUSIVE, fairWaiter, true, true));
        assertThat(queued.acquired()).isFalse();
        assertThat(queued.holderRemaining()).isBetween(Duration.ofSeconds(8), TTL);
        assertThat(backend.release(name, mutex)).isTrue();
        String fair = id();
        assertThat(take(name, fair, of(LockMode.EXCLUSIVE, fairWaiter, true, true))
                        .acquired())
                .as("the queued fair waiter, first in line")
                .isTrue();
        assertThat(backend.tryAcquire(name, id(), TTL).acquired())
                .as("the ordinary mutex waits for the fair mutex's holder")
                .isFalse();
        assertThat(backend.release(name, fair)).isTrue();

        String semaphore = name();
        String permit = id();
        take(semaphore, permit, permits(1, 2));
        assertThatThrownBy(() -> backend.tryAcquire(semaphore, id(), TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("semaphore of 2 permits")
                .hasMessageContaining("a mutex");
        assertThat(backend.inspect(semaphore).orElseThrow().permitsHeld()).isEqualTo(1);
        assertThat(backend.release(semaphore, permit)).isTrue();
        assertThat(backend.tryAcquire(semaphore, id(), TTL).acquired())
                .as("a free name takes a new kind")
                .isTrue();
    }

    @Test
    void aWithdrawnWriterIntentLetsReadersInAgainAndReleaseOfItFreesNothing() {
        String name = name();
        String reader = id();
        assertThat(take(name, reader, of(LockMode.READ, id(), true, false)).acquired())
                .isTrue();
        String writer = id();
        assertThat(take(name, id(), of(LockMode.WRITE, writer, true, false)).acquired())
                .isFalse();
        assertThat(take(name, id(), of(LockMode.READ, id(), false, false)).acquired())
                .as("a new reader behind a standing writer's intent")
                .isFalse();
        assertThat(backend.release(name, writer))
                .as("the withdrawal frees no grant")
                .isFalse();
        String second = id();
        assertThat(take(name, second, of(LockMode.READ, id(), false, false)).acquired())
                .isTrue();
        assertThat(backend.inspect(name).orElseThrow().holders())
                .extracting(LockHolder::leaseId)
                .containsExactlyInAnyOrder(reader, second);
        assertThat(backend.release(name, reader)).isTrue();
        assertThat(backend.release(name, reader)).as("a second release").isFalse();
    }

    @Test
    void oneRenewalBatchCoversMutexAndSharedHoldersAndDowngradeKeepsTheToken() throws Exception {
        String mutexName = name();
        String mutex = id();
        backend.tryAcquire(mutexName, mutex, TTL);
        String rw = name();
        String writer = id();
        AcquireResult w = take(rw, writer, of(LockMode.WRITE, id(), false, false));
        String sem = name();
        String a = id();
        String expiring = id();
        String released = id();
        take(sem, a, permits(1, 3));
        backend.tryAcquireShared(sem, expiring, Duration.ofMillis(30), permits(1, 3), LockMetadata.NONE);
        take(sem, released, permits(1, 3));
        backend.release(sem, released);
        Thread.sleep(60); // the 30 ms grant expires: the TTL is the behaviour under test
        List<RenewResult> results = backend.renew(List.of(
                new RenewRequest(mutexName, mutex, Duration.ofSeconds(60), null),
                new RenewRequest(rw, writer, Duration.ofSeconds(60), null),
                new RenewRequest(sem, a, Duration.ofSeconds(60), null),
                new RenewRequest(sem, expiring, Duration.ofSeconds(60), null),
                new RenewRequest(sem, released, Duration.ofSeconds(60), null),
                new RenewRequest(sem, mutex, Duration.ofSeconds(60), null)));
        assertThat(results).extracting(RenewResult::renewed).containsExactly(true, true, true, false, false, false);
        LockInfo semInfo = backend.inspect(sem).orElseThrow();
        assertThat(semInfo.holders()).extracting(LockHolder::leaseId).containsExactly(a);
        assertThat(Duration.between(semInfo.serverTime(), semInfo.expiresAt())).isGreaterThan(Duration.ofSeconds(50));
        assertThat(results.get(2).expiresAt()).isEqualTo(semInfo.expiresAt());

        RenewResult down = backend.downgrade(rw, writer, TTL);
        assertThat(down.renewed()).isTrue();
        assertThat(down.token()).isEqualTo(w.token());
        assertThat(backend.inspect(rw).orElseThrow().holders())
                .singleElement()
                .satisfies(h -> assertThat(h.mode()).isEqualTo(LockMode.READ));
        assertThat(backend.downgrade(rw, writer, TTL).renewed())
                .as("a downgrade retried: a renewal")
                .isTrue();
        assertThat(backend.downgrade(sem, a, TTL).renewed())
                .as("a semaphore's permits are no write grant")
                .isFalse();
        assertThat(backend.downgrade(rw, id(), TTL).renewed()).isFalse();
    }

    @Test
    void theTokenPeriodRaisesASharedHoldersTokenAboveEveryEarlierOne() throws Exception {
        String name = name();
        String a = id();
        String b = id();
        long first = take(name, a, permits(1, 2)).token();
        long second = take(name, b, permits(1, 2)).token();
        Duration period = Duration.ofMillis(200);
        RenewResult early = backend.renew(List.of(new RenewRequest(name, a, TTL, Duration.ofSeconds(30))))
                .get(0);
        assertThat(early.token()).as("before the period has passed").isEqualTo(first);
        Thread.sleep(250); // the period is the behaviour under test
        RenewResult raised =
                backend.renew(List.of(new RenewRequest(name, a, TTL, period))).get(0);
        assertThat(raised.renewed()).isTrue();
        assertThat(raised.token()).isEqualTo(second + 1);
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.token()).isEqualTo(second + 1);
        assertThat(info.holders())
                .filteredOn(h -> h.leaseId().equals(a))
                .singleElement()
                .satisfies(h -> assertThat(h.token()).isEqualTo(second + 1));
        assertThat(backend.renew(List.of(new RenewRequest(name, a, TTL, period)))
                        .get(0)
                        .token())
                .as("right after a raise: the same token")
                .isEqualTo(second + 1);
    }
}
