package io.fencelock.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.postgres.PostgresServer;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The mutex's wake-up queue across clients (the row's {@code waiters}): a client whose waiters stopped
 * waiting leaves it or passes a wake-up on, a closing client leaves it, and a release skips the entry of
 * a client that crashed (no connection holds its listener's key). Each waiter is its own backend, with
 * its own listener, subscribed as the engine subscribes.
 */
class PostgresWakeUpQueueTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 20;

    private static PostgresServer server;
    private static String url;
    private static PostgresLockBackend holderSide;

    @BeforeAll
    static void open() {
        server = PostgresServer.shared();
        url = server.createDatabase("pg_wake_up_queue");
        holderSide = builder().createTable(true).build();
    }

    @AfterAll
    static void close() {
        if (holderSide != null) {
            holderSide.close();
        }
    }

    private static PostgresLockBackend.Builder builder() {
        return PostgresLockBackend.builder().jdbcUrl(url).user(server.user()).password(server.password());
    }

    private static String name() {
        return "wake-up-queue/" + UUID.randomUUID();
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    /** The row's queue of listener ids, in order. */
    private static List<String> waiters(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, server.user(), server.password());
                PreparedStatement ps = c.prepareStatement("SELECT waiters FROM fencelock_locks WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the row of " + name).isTrue();
                Array a = rs.getArray(1);
                return a == null ? List.of() : List.of((String[]) a.getArray());
            }
        }
    }

    /** What a client that crashed while queued leaves behind: its listener's id, first in the queue. */
    private static void queueACrashedClientFirst(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, server.user(), server.password());
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE fencelock_locks SET waiters = array_prepend(?, waiters) WHERE name = ?")) {
            ps.setString(1, UUID.randomUUID().toString());
            ps.setString(2, name);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @Test
    void aReleaseSkipsTheEntriesOfClientsThatCrashed() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend survivor = builder().build()) {
            Semaphore survivorWoken = new Semaphore(0);
            SpiChecks.subscribe(survivor, name, survivorWoken::release);
            assertThat(survivor.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            queueACrashedClientFirst(name);
            queueACrashedClientFirst(name);
            assertThat(waiters(name)).hasSize(3);

            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(survivorWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the release skips the crashed clients and wakes the next")
                    .isTrue();
            assertThat(waiters(name))
                    .as("the crashed clients' entries went with the wake-up")
                    .isEmpty();
        }
    }

    @Test
    void aWaiterThatStopsWaitingLeavesTheQueue() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend leaving = builder().build();
                PostgresLockBackend staying = builder().build()) {
            Semaphore stayingWoken = new Semaphore(0);
            WakeUpSubscription leavingWait = SpiChecks.subscribe(leaving, name, () -> {});
            SpiChecks.subscribe(staying, name, stayingWoken::release);
            assertThat(leaving.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(staying.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(waiters(name)).hasSize(2);

            leavingWait.close();
            awaitQueueOf(name, 1);
            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(stayingWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the waiter that stayed is woken")
                    .isTrue();
        }
    }

    /**
     * The first client is woken while it waits and stops waiting without trying again: it passes the
     * wake-up on, since the name is still free.
     */
    @Test
    void aWakeUpHeardAndNotUsedIsPassedOn() throws Exception {
        String name = name();
        String holder = lease();
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend first = builder().build();
                PostgresLockBackend second = builder().build()) {
            Semaphore firstWoken = new Semaphore(0);
            Semaphore secondWoken = new Semaphore(0);
            WakeUpSubscription firstWait = SpiChecks.subscribe(first, name, firstWoken::release);
            SpiChecks.subscribe(second, name, secondWoken::release);
            assertThat(first.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(second.tryAcquire(name, lease(), TTL).acquired()).isFalse();

            assertThat(holderSide.release(name, holder)).isTrue();
            assertThat(firstWoken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the first client is woken")
                    .isTrue();
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
        assertThat(holderSide.tryAcquire(name, holder, TTL).acquired()).isTrue();
        try (PostgresLockBackend closing = builder().build()) {
            SpiChecks.subscribe(closing, name, () -> {});
            assertThat(closing.tryAcquire(name, lease(), TTL).acquired()).isFalse();
            assertThat(waiters(name)).hasSize(1);
        }
        assertThat(waiters(name)).as("the queue after its only client closed").isEmpty();
        assertThat(holderSide.release(name, holder)).isTrue();
    }

    /** The leave runs on the listener's own thread: waits for it, bounded only to stop a hang. */
    private static void awaitQueueOf(String name, int size) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (waiters(name).size() != size) {
            assertThat(System.nanoTime() - end)
                    .as("the queue of " + name + " to hold " + size)
                    .isNegative();
            Thread.sleep(5);
        }
    }
}
