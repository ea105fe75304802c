package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockInfo;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The wake-up queue across clients: a release wakes the first waiting client only, a crashed or
 * departed waiter does not hold the others back, and the queue decides whom to wake, never who holds.
 * Each waiter is its own backend (its own connections), subscribed as the engine subscribes.
 */
class RedisWakeUpQueueTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 10;

    private static RedisServer server;
    private static RedisLockBackend holderSide;
    private static RedisClient raw;
    private static StatefulRedisConnection<String, String> rawConnection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void open() {
        server = RedisServer.shared();
        holderSide = RedisLockBackend.builder().uri(server.uri()).build();
        raw = RedisClient.create(server.uri());
        rawConnection = raw.connect();
        redis = rawConnection.sync();
    }

    @AfterAll
    static void close() {
        holderSide.close();
        rawConnection.close();
        LettuceClients.shutDown(raw);
    }

    @Test
    void aReleaseWakesOnlyTheFirstWaitingClient() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (RedisLockBackend first = backend();
                RedisLockBackend second = backend()) {
            Semaphore firstWoken = new Semaphore(0);
            Semaphore secondWoken = new Semaphore(0);
            SpiChecks.subscribe(first, name, firstWoken::release);
            SpiChecks.subscribe(second, name, secondWoken::release);
            assertThat(first.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            nextServerMillisecond(); // places are server milliseconds: the second waiter's is later
            assertThat(second.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(redis.zcard(queue(name))).isEqualTo(2);

            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(firstWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the first waiter is woken")
                    .isTrue();
            String next = lease();
            assertThat(first.tryAcquire(name, next, TTL).acquired()).isTrue();
            assertThat(first.release(name, next)).isTrue();

            assertThat(secondWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the second waiter is woken by the next release")
                    .isTrue();
            // its wake-ups arrive in order on its own connection: had the first release woken it too,
            // that wake-up would be here already
            assertThat(secondWoken.availablePermits())
                    .as("wake-ups of the second waiter beyond the second release's")
                    .isZero();
            assertThat(firstWoken.availablePermits())
                    .as("the first waiter, granted, is out of the queue")
                    .isZero();
            assertThat(redis.exists(queue(name))).as("nobody queues any more").isZero();
        }
    }

    @Test
    void aCrashedWaiterDoesNotHoldTheNextOneBack() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore survivorWoken = new Semaphore(0);
        try (RedisLockBackend survivor = backend()) {
            SpiChecks.subscribe(survivor, name, survivorWoken::release);
            try (RedisLockBackend crashing = backend()) {
                SpiChecks.subscribe(crashing, name, () -> {});
                assertThat(crashing.tryAcquire(name, lease(), TTL).acquired()).isFalse();
                nextServerMillisecond();
                assertThat(survivor.tryAcquire(name, lease(), TTL).acquired()).isFalse();
                assertThat(redis.zrange(queue(name), 0, 0))
                        .as("the crashing client is first")
                        .hasSize(1);
            } // its connections close: no subscriber hears its channel any more, and its entry stays

            assertThat(redis.zcard(queue(name))).isEqualTo(2);
            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(survivorWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the release skips the dead waiter and wakes the next")
                    .isTrue();
            assertThat(redis.exists(queue(name))).isZero();
        }
    }

    @Test
    void aWaiterThatStopsWaitingPassesItsWakeUpOn() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (RedisLockBackend leaving = backend();
                RedisLockBackend staying = backend()) {
            Semaphore stayingWoken = new Semaphore(0);
            WakeUpSubscription leavingWait = SpiChecks.subscribe(leaving, name, () -> {});
            SpiChecks.subscribe(staying, name, stayingWoken::release);
            assertThat(leaving.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            nextServerMillisecond();
            assertThat(staying.tryAcquire(name, lease(), TTL).acquired()).isFalse();

            // the first waiter's wait ends: it leaves the queue, or, if the release comes first, hears
            // a wake-up it no longer wants and passes it on; either way the next waiter is woken
            leavingWait.close();
            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(stayingWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the waiter that stayed is woken")
                    .isTrue();
        }
    }

    @Test
    void theQueueWakesButNeverGrants() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (RedisLockBackend queued = backend();
                RedisLockBackend newcomer = backend()) {
            Semaphore queuedWoken = new Semaphore(0);
            SpiChecks.subscribe(queued, name, queuedWoken::release);
            assertThat(queued.tryAcquire(name, lease(), TTL).acquired()).isFalse();

            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(queuedWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .isTrue();
            assertThat(holderSide.inspect(name).map(LockInfo::held))
                    .as("woken, the waiter holds nothing until its own grant")
                    .contains(false);
            String barging = lease();
            assertThat(newcomer.tryAcquire(name, barging, TTL).acquired())
                    .as("a client outside the queue may take a free lock")
                    .isTrue();
            assertThat(queued.tryAcquire(name, lease(), TTL).acquired())
                    .as("the woken waiter lost the race: refused, queued again")
                    .isFalse();
            assertThat(redis.zcard(queue(name))).isEqualTo(1);

            assertThat(newcomer.release(name, barging)).isTrue();
            assertThat(queuedWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken again by the next release")
                    .isTrue();
            String own = lease();
            assertThat(queued.tryAcquire(name, own, TTL).token())
                    .as("its own grant, with its own token")
                    .isEqualTo(3);
            assertThat(redis.exists(queue(name)))
                    .as("the grant took it out of the queue")
                    .isZero();
            assertThat(queued.release(name, own)).isTrue();
        }
    }

    private static RedisLockBackend backend() {
        return RedisLockBackend.builder().uri(server.uri()).build();
    }

    /** Waits (briefly: a millisecond at most) until the server's clock shows the next millisecond. */
    private static void nextServerMillisecond() {
        long start = millis(redis.time());
        while (millis(redis.time()) == start) {
            Thread.onSpinWait();
        }
    }

    private static long millis(List<String> time) {
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }

    private static String queue(String name) {
        return "fencelock:{" + name + "}:queue";
    }

    private static String name() {
        return "wake-" + UUID.randomUUID();
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
