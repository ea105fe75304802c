package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockInfo;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.spi.QueuedGrantProviderChecks;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The queue across clients: a release grants the first waiting client only (GRANT_ON_RELEASE), and a
 * crashed or departed waiter does not hold the others back.
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

    /**
     * A release grants the first queued client alone, in the release's script (GRANT_NEXT), and tells it on
     * its own channel: {@link QueuedGrantProviderChecks#assertAReleaseGrantsTheFirstQueuedWaiterAlone}.
     */
    @Test
    void aReleaseGrantsTheFirstQueuedClientAlone() throws InterruptedException {
        try (RedisLockBackend first = backend();
                RedisLockBackend second = backend()) {
            QueuedGrantProviderChecks.assertAReleaseGrantsTheFirstQueuedWaiterAlone(
                    holderSide,
                    first,
                    second,
                    name(),
                    RedisWakeUpQueueTest::queueLength,
                    RedisWakeUpQueueTest::nextServerMillisecond); // places are server milliseconds
        }
    }

    /** A release of a queued lease holding nothing withdraws the place: {@link QueuedGrantProviderChecks}. */
    @Test
    void aReleaseOfAQueuedLeaseWithdrawsItsPlace() {
        try (RedisLockBackend side = backend()) {
            QueuedGrantProviderChecks.assertAReleaseOfAQueuedLeaseWithdrawsItsPlace(
                    holderSide, side, name(), RedisWakeUpQueueTest::queueLength);
        }
    }

    /** A grant request is rewritten only when a quarter of its TTL old: {@link QueuedGrantProviderChecks}. */
    @Test
    void aRequestGrownOldTakesTheLatestRefusedLease() {
        try (RedisLockBackend side = backend()) {
            QueuedGrantProviderChecks.assertAPlaceGrownOldTakesTheLatestRefusedLease(
                    holderSide, side, name(), RedisWakeUpQueueTest::queueLength);
        }
    }

    private static int queueLength(String name) {
        return redis.zcard(queue(name)).intValue();
    }

    @Test
    void aCrashedWaiterDoesNotHoldTheNextOneBack() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore survivorWoken = new Semaphore(0);
        String survivorLease = lease();
        try (RedisLockBackend survivor = backend()) {
            SpiChecks.subscribe(survivor, name, survivorWoken::release);
            try (RedisLockBackend crashing = backend()) {
                SpiChecks.subscribe(crashing, name, () -> {});
                assertThat(crashing.tryAcquire(name, lease(), TTL).acquired()).isFalse();
                nextServerMillisecond();
                assertThat(survivor.tryAcquire(name, survivorLease, TTL).acquired())
                        .isFalse();
                assertThat(redis.zrange(queue(name), 0, 0))
                        .as("the crashing client is first")
                        .hasSize(1);
            } // its connections close: no subscriber hears its channel any more, and its entry stays

            assertThat(redis.zcard(queue(name))).isEqualTo(2);
            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(survivorWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the release skips the dead waiter and grants the next")
                    .isTrue();
            assertThat(redis.exists(queue(name))).isZero();
            assertThat(holderSide.inspect(name).map(LockInfo::leaseId)).contains(survivorLease);
            assertThat(survivor.release(name, survivorLease)).isTrue();
        }
    }

    @Test
    void aWaiterThatStopsWaitingLeavesTheQueueToTheNext() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (RedisLockBackend leaving = backend();
                RedisLockBackend staying = backend()) {
            Semaphore stayingWoken = new Semaphore(0);
            WakeUpSubscription leavingWait = SpiChecks.subscribe(leaving, name, () -> {});
            SpiChecks.subscribe(staying, name, stayingWoken::release);
            String leavingLease = lease();
            assertThat(leaving.tryAcquire(name, leavingLease, TTL).acquired()).isFalse();
            nextServerMillisecond();
            String stayingLease = lease();
            assertThat(staying.tryAcquire(name, stayingLease, TTL).acquired()).isFalse();

            // the first waiter's wait ends: as the engine does, it releases the lease it is queued under,
            // which withdraws its request and place, and stops watching the name
            assertThat(leaving.release(name, leavingLease))
                    .as("nothing was held")
                    .isFalse();
            leavingWait.close();
            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(stayingWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the waiter that stayed is granted")
                    .isTrue();
            assertThat(holderSide.inspect(name).map(LockInfo::leaseId)).contains(stayingLease);
            assertThat(staying.release(name, stayingLease)).isTrue();
        }
    }

    /**
     * A release tells a grant only once it is written. A {@code PUBLISH} also reaches a replica's subscribers,
     * whom its count leaves out (a client still attached to a demoted master after a Sentinel failover): a
     * release that published the grant first and wrote it only if someone was counted told such a client of a
     * grant never written. Here the queued client's own subscription is gone with it, and a subscriber on a
     * replica listens on its channel.
     */
    @Test
    void aGrantIsToldOnlyWhereItIsWritten() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        String waiterId;
        try (RedisLockBackend departed = backend()) {
            SpiChecks.subscribe(departed, name, () -> {});
            assertThat(departed.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            waiterId = redis.zrange(queue(name), 0, 0).get(0);
        } // its subscription closes with it; its request and place stay
        String channel = "fencelock:released:" + waiterId;
        awaitNoSubscriberOnTheMaster(channel);
        RedisClient replicaClient = null;
        try (RedisServer replica = RedisServer.startReplicaOf(server)) {
            replicaClient = RedisClient.create(replica.uri());
            StatefulRedisPubSubConnection<String, String> onReplica = replicaClient.connectPubSub();
            BlockingQueue<String> heard = new LinkedBlockingQueue<>();
            onReplica.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String from, String message) {
                    heard.add(message);
                }
            });
            onReplica.sync().subscribe(channel);

            assertThat(holderSide.release(name, holder)).isTrue();
            redis.publish(channel, "after the release"); // replicated in order: whatever the release told comes first
            assertThat(heard.poll(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the first message the replica's subscriber heard on the departed client's channel")
                    .isEqualTo("after the release");
            assertThat(redis.exists(lock(name)))
                    .as("no grant was written: its client listens nowhere on the master")
                    .isZero();
        } finally {
            if (replicaClient != null) {
                LettuceClients.shutDown(replicaClient);
            }
        }
    }

    /** The server drops a closed client's subscription when it reads the close: until then it still counts. */
    private static void awaitNoSubscriberOnTheMaster(String channel) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (redis.pubsubNumsub(channel).getOrDefault(channel, 0L) > 0) {
            assertThat(System.nanoTime())
                    .as("the closed client's subscription is gone within " + HANG_GUARD_SECONDS + " s")
                    .isLessThan(deadline);
            Thread.onSpinWait();
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

    private static String lock(String name) {
        return "fencelock:{" + name + "}";
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
