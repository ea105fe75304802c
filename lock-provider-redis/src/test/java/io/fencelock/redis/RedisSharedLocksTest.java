package io.fencelock.redis;

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
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.redis.RedisServer;
import io.fencelock.testservers.redis.RedisServer.Persistence;
import io.fencelock.testservers.redis.RedisServer.Source;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What is Redis's own in shared grants: the keys and their expiry, the marker, one script per renewal batch, signals. */
class RedisSharedLocksTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 20;

    private static RedisServer server;
    private static RedisLockBackend backend;

    @BeforeAll
    static void openBackend() {
        server = RedisServer.shared();
        backend = RedisLockBackend.builder().uri(server.uri()).build();
    }

    @AfterAll
    static void closeBackend() {
        if (backend != null) {
            backend.close();
        }
    }

    private static String name() {
        return "shared/" + UUID.randomUUID();
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    private static SharedRequest permits(int k, int n) {
        return new SharedRequest(LockMode.PERMITS, k, n, id(), false, false);
    }

    private static SharedRequest rw(LockMode mode, String waiter, boolean waits, boolean fair) {
        return new SharedRequest(mode, 1, 0, waiter, waits, fair);
    }

    private static AcquireResult take(LockBackend b, String name, String lease, Duration ttl, SharedRequest r) {
        return b.tryAcquireShared(name, lease, ttl, r, LockMetadata.NONE);
    }

    @Test
    void theSharedRecordExpiresWithItsLatestEntryAndTheTokenRecordStays() throws InterruptedException {
        String name = name();
        String lock = "fencelock:{" + name + "}";
        String shared = lock + ":shared";
        String longer = id();
        assertThat(take(backend, name, id(), Duration.ofMillis(200), permits(1, 3))
                        .acquired())
                .isTrue();
        assertThat(take(backend, name, longer, TTL, permits(2, 3)).acquired()).isTrue();
        withRedis(redis -> {
            assertThat(redis.get(lock)).as("the lock key holds the marker").isEqualTo("\n");
            assertThat(redis.pttl(lock)).as("expiring with the latest grant").isGreaterThan(TTL.toMillis() - 5_000);
            assertThat(redis.pttl(shared)).isGreaterThan(TTL.toMillis() - 5_000);
            assertThat(redis.hget(lock + ":token", "n")).isEqualTo("2");
            return null;
        });
        assertThat(backend.release(name, longer)).isTrue();
        withRedis(redis -> {
            assertThat(redis.pttl(lock))
                    .as("a release moves the expiry to the latest live entry's (or the key is gone: -2)")
                    .isLessThanOrEqualTo(200L);
            return null;
        });
        // nothing releases the short grant: its expiry deletes both keys by itself
        await("the keys of a free name to expire", () -> withRedis(redis -> redis.exists(lock, shared) == 0));
        withRedis(redis -> {
            assertThat(redis.pttl(lock + ":token"))
                    .as("the token record never expires")
                    .isEqualTo(-1);
            return null;
        });
        assertThat(backend.tryAcquire(name, id(), TTL).token())
                .as("the mutex draws from the same counter")
                .isEqualTo(3);
    }

    @Test
    void aMutexAndSharedGrantsOfOneNameKeepTheirKinds() {
        String name = name();
        String reader = id();
        assertThat(take(backend, name, reader, TTL, rw(LockMode.READ, id(), false, false))
                        .acquired())
                .isTrue();
        assertThatThrownBy(() -> backend.tryAcquire(name, id(), TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a read-write lock; a request for a mutex is refused");
        assertThat(backend.inspect(name).orElseThrow().holders()).hasSize(1);
        assertThat(backend.release(name, reader)).isTrue();

        String mutex = id();
        assertThat(backend.tryAcquire(name, mutex, TTL).acquired()).isTrue();
        assertThatThrownBy(() -> take(backend, name, id(), TTL, permits(1, 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a mutex; a request for a semaphore of 2 permits is refused");
        // a fair mutex waits in line behind the ordinary one and keeps its place
        String fairWaiter = id();
        SharedRequest fair = new SharedRequest(LockMode.EXCLUSIVE, 1, 0, fairWaiter, true, true);
        AcquireResult refused = take(backend, name, id(), TTL, fair);
        assertThat(refused.acquired()).isFalse();
        assertThat(refused.holderRemaining()).isNotNull();
        assertThat(backend.release(name, mutex)).isTrue();
        String fairLease = id();
        assertThat(take(backend, name, fairLease, TTL, fair).acquired()).isTrue();
        AcquireResult behindFair = backend.tryAcquire(name, id(), TTL);
        assertThat(behindFair.acquired())
                .as("an ordinary mutex waits for a fair one")
                .isFalse();
        assertThat(behindFair.holderRemaining()).isPositive();
        assertThat(backend.inspect(name).orElseThrow().holders())
                .extracting(LockHolder::leaseId, LockHolder::mode)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(fairLease, LockMode.EXCLUSIVE));
        SharedRequest next = new SharedRequest(LockMode.EXCLUSIVE, 1, 0, id(), true, true);
        assertThat(take(backend, name, id(), TTL, next).acquired())
                .as("queued behind the fair holder")
                .isFalse();
        assertThat(backend.release(name, fairLease)).isTrue();
        // only a fair waiter's place is left under the marker: an ordinary mutex takes the name (it never queues)
        String barging = id();
        assertThat(backend.tryAcquire(name, barging, TTL).acquired()).isTrue();
        assertThat(backend.inspect(name).orElseThrow().leaseId()).isEqualTo(barging);
        assertThat(take(backend, name, id(), TTL, next).acquired()).isFalse();
        assertThat(backend.release(name, barging)).isTrue();
        assertThat(take(backend, name, id(), TTL, next).acquired()).isTrue();
    }

    @Test
    void mutexAndSharedLeasesRenewInOneScriptCall() throws InterruptedException {
        String mutexName = name();
        String semaphoreName = name();
        String mutex = id();
        String permit = id();
        String gone = id();
        backend.tryAcquire(mutexName, mutex, TTL);
        long token = take(backend, semaphoreName, permit, TTL, permits(1, 2)).token();
        take(backend, semaphoreName, gone, Duration.ofMillis(1), permits(1, 2));
        Thread.sleep(5); // past the 1 ms grant on the server's clock
        backend.renew(List.of(new RenewRequest(mutexName, id(), TTL, null))); // the server has the script now
        long before = scriptCalls();
        List<RenewResult> renewed = backend.renew(List.of(
                new RenewRequest(mutexName, mutex, TTL, null),
                new RenewRequest(semaphoreName, permit, TTL, Duration.ofMillis(1)),
                new RenewRequest(semaphoreName, gone, TTL, null),
                new RenewRequest(semaphoreName, mutex, TTL, null)));
        if (server.source() != Source.ENV) { // someone else's server may be busy with other clients
            assertThat(scriptCalls() - before)
                    .as("one script call for the batch")
                    .isEqualTo(1);
        }
        assertThat(renewed.get(0).renewed()).isTrue();
        assertThat(renewed.get(1).renewed()).isTrue();
        assertThat(renewed.get(1).token())
                .as("a token older than the period is replaced")
                .isGreaterThan(token);
        assertThat(renewed.subList(2, 4)).containsOnly(RenewResult.rejected());
        LockHolder holder =
                backend.inspect(semaphoreName).orElseThrow().holders().get(0);
        assertThat(holder.token()).isEqualTo(renewed.get(1).token());
        assertThat(holder.expiresAt()).isEqualTo(renewed.get(1).expiresAt());
    }

    @Test
    void releasesDowngradesAndWithdrawalsSignalWaiters() throws InterruptedException {
        String name = name();
        String writer = id();
        assertThat(take(backend, name, writer, TTL, rw(LockMode.WRITE, id(), false, false))
                        .acquired())
                .isTrue();
        try (RedisLockBackend waiterSide =
                RedisLockBackend.builder().uri(server.uri()).build()) {
            CountDownLatch[] signal = {new CountDownLatch(1)};
            SpiChecks.subscribe(waiterSide, name, () -> signal[0].countDown());
            String waitingWriter = id();
            assertThat(take(waiterSide, name, id(), TTL, rw(LockMode.WRITE, waitingWriter, true, false))
                            .acquired())
                    .isFalse();
            assertThat(backend.downgrade(name, writer, TTL).renewed()).isTrue();
            assertThat(signal[0].await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("after the downgrade")
                    .isTrue();
            assertThat(take(waiterSide, name, id(), TTL, rw(LockMode.READ, id(), false, false))
                            .acquired())
                    .as("the waiting writer's intent holds new readers back")
                    .isFalse();
            signal[0] = new CountDownLatch(1);
            assertThat(waiterSide.release(name, waitingWriter))
                    .as("a withdrawal frees no grant")
                    .isFalse();
            assertThat(signal[0].await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("after the withdrawal")
                    .isTrue();
            String reader = id();
            assertThat(take(waiterSide, name, reader, TTL, rw(LockMode.READ, id(), false, false))
                            .acquired())
                    .isTrue();
            signal[0] = new CountDownLatch(1);
            assertThat(backend.release(name, writer)).isTrue();
            assertThat(signal[0].await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("after a reader's release")
                    .isTrue();
            assertThat(backend.release(name, reader)).isTrue();
            assertThat(backend.release(name, reader))
                    .as("a second release frees nothing")
                    .isFalse();
        }
    }

    @Test
    void inspectAndListShowEveryHolderWithItsMetadataAndGrantTime() {
        String prefix = "shared-list-" + UUID.randomUUID() + "/";
        String name = prefix + "a";
        LockMetadata ops = LockMetadata.of("ops", "job", Map.of("run", "7"));
        String a = id();
        String b = id();
        backend.tryAcquireShared(name, a, TTL, permits(2, 5), ops);
        backend.tryAcquireShared(name, b, TTL, permits(1, 5), LockMetadata.NONE);
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.kind()).isEqualTo(LockMode.PERMITS);
        assertThat(info.limit()).isEqualTo(5);
        assertThat(info.permitsHeld()).isEqualTo(3);
        assertThat(info.leaseId()).as("the latest grant").isEqualTo(b);
        assertThat(info.holders()).extracting(LockHolder::leaseId).containsExactly(a, b);
        LockHolder first = info.holders().get(0);
        assertThat(first.metadata()).isEqualTo(ops);
        assertThat(first.heldSince()).isBetween(info.serverTime().minusSeconds(5), info.serverTime());
        assertThat(first.expiresAt()).isAfter(info.serverTime());
        assertThat(backend.list(prefix)).extracting(LockInfo::name).containsExactly(name);
        backend.release(name, a);
        backend.release(name, b);
        assertThat(backend.list(prefix)).isEmpty();
        assertThat(backend.inspect(name).orElseThrow().held()).isFalse();
    }

    @Test
    void worksOnRedis62FromTheEmbeddedSource() {
        try (RedisServer old = RedisServer.start(Source.EMBEDDED, Persistence.NONE);
                RedisLockBackend b = RedisLockBackend.builder().uri(old.uri()).build()) {
            String name = name();
            String writer = id();
            assertThat(take(b, name, writer, TTL, rw(LockMode.WRITE, id(), false, false))
                            .token())
                    .isEqualTo(1);
            assertThat(take(b, name, id(), TTL, rw(LockMode.READ, id(), false, false))
                            .acquired())
                    .isFalse();
            assertThat(b.downgrade(name, writer, TTL).token()).isEqualTo(1);
            String reader = id();
            assertThat(take(b, name, reader, TTL, rw(LockMode.READ, id(), false, false))
                            .token())
                    .isEqualTo(2);
            assertThat(b.renew(List.of(new RenewRequest(name, reader, TTL, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            assertThat(b.inspect(name).orElseThrow().holders()).hasSize(2);
            assertThat(b.release(name, writer)).isTrue();
            assertThat(b.release(name, reader)).isTrue();
            assertThat(b.tryAcquire(name, id(), TTL).token()).isEqualTo(3);
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as("waiting for " + what).isNegative();
            Thread.sleep(10);
        }
    }

    private static long scriptCalls() {
        return RedisLockBackendTest.scriptCalls(server);
    }

    private static <T> T withRedis(Function<RedisCommands<String, String>, T> work) {
        return RedisLockBackendTest.withRedis(server, work);
    }
}
