package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockMetadata;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hand-over script (Scripts.HAND_OVER) on a real server: the old grant ends and the new one is
 * drawn in one step, only from the lease that holds the name; other clients' waiters, queued or marked,
 * are woken by the new holder's release, and the hand-over itself wakes nobody.
 */
class RedisHandOverTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 10;

    private static RedisServer server;
    private static RedisLockBackend backend;
    private static RedisClient raw;
    private static StatefulRedisConnection<String, String> rawConnection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void open() {
        server = RedisServer.shared();
        backend = backend();
        raw = RedisClient.create(server.uri());
        rawConnection = raw.connect();
        redis = rawConnection.sync();
    }

    @AfterAll
    static void close() {
        backend.close();
        rawConnection.close();
        LettuceClients.shutDown(raw);
    }

    /** The TCK checks what inspect shows (handOverGrantsANewerTokenAndEndsTheHolder); here, the keys. */
    @Test
    void aHandOverWritesTheAcquiresValueAndDrawsOneToken() {
        String name = name();
        String old = lease();
        long first = backend.tryAcquire(name, old, TTL).token();
        String next = lease();
        LockMetadata metadata = LockMetadata.of("batch", "report", Map.of("run", "2"));

        long token = backend.handOver(name, old, next, TTL, metadata).token();

        String[] value = redis.get(lock(name)).split("\n", 3);
        assertThat(value[0]).isEqualTo(next);
        assertThat(value[2]).isEqualTo(MetadataCodec.encode(metadata));
        assertThat(redis.pttl(lock(name))).isPositive();
        assertThat(token).isEqualTo(first + 1);
        assertThat(redis.hget(record(name), "n")).isEqualTo(Long.toString(token));
        assertThat(backend.release(name, next)).isTrue();
    }

    /** The TCK checks that a refused hand-over grants nothing (handOverIsOwnerChecked); here, that it writes nothing. */
    @Test
    void aRefusedHandOverWritesNothing() {
        try (RedisLockBackend other = backend()) {
            HandOverProviderChecks.refusedHandOversWriteNothing(
                    backend, other, RedisHandOverTest::name, RedisHandOverTest::state);
        }
    }

    /** A waiter of another client queued while the old lease held: the new holder's release wakes it. */
    @Test
    void theNewHoldersReleaseWakesAQueuedWaiterOfAnotherClient() throws InterruptedException {
        String name = name();
        String old = lease();
        backend.tryAcquire(name, old, TTL);
        try (RedisLockBackend waiterSide = backend()) {
            Semaphore woken = new Semaphore(0);
            Semaphore fence = new Semaphore(0);
            SpiChecks.subscribe(waiterSide, name, woken::release);
            String fenceName = name();
            SpiChecks.subscribe(waiterSide, fenceName, fence::release);
            assertThat(waiterSide.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(redis.zcard(queue(name))).isEqualTo(1);

            String next = lease();
            assertThat(backend.handOver(name, old, next, TTL, LockMetadata.NONE).acquired())
                    .isTrue();
            assertNobodyWasWoken(woken, fence, fenceName);
            assertThat(redis.zcard(queue(name)))
                    .as("the queue stays for the new holder's release")
                    .isEqualTo(1);

            assertThat(backend.release(name, next)).isTrue();
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken by the new holder's release")
                    .isTrue();
        }
    }

    /** A refused attempt that named no waiter marked the old lease: the mark moves, and the new holder's release publishes. */
    @Test
    void theNewHoldersReleasePublishesWhenTheOldLeaseWasMarked() throws InterruptedException {
        String name = name();
        String old = lease();
        backend.tryAcquire(name, old, TTL);
        try (RedisLockBackend marker = backend();
                RedisLockBackend listener = backend()) {
            Semaphore woken = new Semaphore(0);
            Semaphore fence = new Semaphore(0);
            SpiChecks.subscribe(listener, name, woken::release);
            String fenceName = name();
            SpiChecks.subscribe(listener, fenceName, fence::release);
            assertThat(marker.tryAcquire(name, lease(), TTL).acquired())
                    .as("an attempt that waits for nothing")
                    .isFalse();
            assertThat(redis.hget(record(name), "w")).isEqualTo(old);

            String next = lease();
            assertThat(backend.handOver(name, old, next, TTL, LockMetadata.NONE).acquired())
                    .isTrue();
            assertThat(redis.hget(record(name), "w"))
                    .as("the mark names the new holder")
                    .isEqualTo(next);
            assertNobodyWasWoken(woken, fence, fenceName);

            assertThat(backend.release(name, next)).isTrue();
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken by the new holder's release")
                    .isTrue();
        }
    }

    /**
     * Publishes the fence name on the release channel and waits for it: the listener's messages arrive in
     * order on one connection, so a wake-up the hand-over had sent would be here before the fence.
     */
    private static void assertNobodyWasWoken(Semaphore woken, Semaphore fence, String fenceName)
            throws InterruptedException {
        redis.publish("fencelock:released", fenceName);
        assertThat(fence.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(woken.availablePermits())
                .as("wake-ups sent by the hand-over")
                .isZero();
    }

    /** Everything the scripts keep of a name: the lock's value, the token record and the wake-up queue. */
    private static Map<String, String> state(String name) {
        String lock = lock(name);
        return Map.of(
                "lock", String.valueOf(redis.get(lock)),
                "record", String.valueOf(redis.hgetall(record(name))),
                "shared", String.valueOf(redis.hgetall(lock + ":shared")),
                "queue", String.valueOf(redis.zrangeWithScores(queue(name), 0, -1)));
    }

    private static String lock(String name) {
        return "fencelock:{" + name + "}";
    }

    private static String record(String name) {
        return "fencelock:{" + name + "}:token";
    }

    private static String queue(String name) {
        return "fencelock:{" + name + "}:queue";
    }

    private static RedisLockBackend backend() {
        return RedisLockBackend.builder().uri(server.uri()).build();
    }

    private static String name() {
        return "handover-" + UUID.randomUUID();
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
