package io.fencelock.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.testservers.postgres.PostgresServer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hand-over statement on a real PostgreSQL (the contract runs the TCK's hand-over properties): the
 * record it writes, a waiter of another client through the engine, and what is PostgreSQL's own: a hand-over sends no NOTIFY, and it keeps the row's waiter queue and contention mark,
 * so that the new holder's release wakes the other clients' waiters as the old holder's would have.
 * Notifications reach every listener in commit order: once a waiter hears the release, it has also heard
 * anything the hand-over before it sent.
 */
class PostgresHandOverTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private static final long HANG_GUARD_SECONDS = 30;

    private static PostgresServer server;
    private static String url;
    private static PostgresLockBackend backend;

    @BeforeAll
    static void openBackend() {
        server = PostgresServer.shared();
        url = server.createDatabase("pg_hand_over");
        backend = builder().createTable(true).build();
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
        return "hand-over/" + UUID.randomUUID();
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    @Test
    void aHandOverWritesTheRecordAsAGrantDoes() {
        HandOverProviderChecks.assertAHandOverWritesTheRecordAsAGrant(backend, name(), Duration.ZERO);
    }

    @Test
    void aWaiterOfAnotherClientGetsTheNameAfterAHandOver() throws Exception {
        HandOverProviderChecks.assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
                builder().build(), builder().build(), name());
    }

    /**
     * Another client's waiter, queued behind this client's own (its head, refused while its client held),
     * is the one the new holder's release grants: the hand-over took the grantee's client out of the queue,
     * as a grant does, and kept the rest.
     */
    @Test
    void theNewHoldersReleaseGrantsTheQueuedWaiterOfAnotherClientAndTheHandOverWakesNobody()
            throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore own = new Semaphore(0);
        Semaphore theirs = new Semaphore(0);
        try (PostgresLockBackend otherClient = builder().build()) {
            SpiChecks.subscribe(backend, name, own::release);
            SpiChecks.subscribe(otherClient, name, theirs::release);
            assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                    .as("this client's waiter, refused: first in the queue")
                    .isFalse();
            String theirLease = lease();
            assertThat(otherClient.tryAcquire(name, theirLease, TTL).acquired())
                    .as("the other client's waiter, refused: second")
                    .isFalse();

            String next = lease();
            AcquireResult handed = backend.handOver(name, holder, next, TTL, LockMetadata.NONE);
            assertThat(handed.acquired()).isTrue();
            assertThat(backend.release(name, next)).isTrue();

            assertThat(theirs.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("the other client's waiter, granted by the new holder's release")
                    .isTrue();
            assertThat(theirs.availablePermits()).as("and by nothing before it").isZero();
            assertThat(own.availablePermits())
                    .as("the grantee's client, out of the queue")
                    .isZero();
            AcquireResult granted = otherClient.tryAcquire(name, lease(), TTL);
            assertThat(granted.queuedGrant())
                    .as("the other client's queued lease holds")
                    .isTrue();
            assertThat(granted.queuedAs()).isEqualTo(theirLease);
            assertThat(granted.token()).isGreaterThan(handed.token());
            assertThat(otherClient.release(name, theirLease)).isTrue();
        }
    }

    /** A refusal that names no waiter marks the row contended; the hand-over keeps the mark, so the release wakes every listener. */
    @Test
    void theNewHoldersReleaseWakesEveryListenerWhenARefusalNamedNoWaiter() throws InterruptedException {
        String name = name();
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Semaphore listening = new Semaphore(0);
        try (PostgresLockBackend refused = builder().build();
                PostgresLockBackend listener = builder().build()) {
            assertThat(refused.tryAcquire(name, lease(), TTL).acquired())
                    .as("a refusal of a client that does not watch the name")
                    .isFalse();
            SpiChecks.subscribe(listener, name, listening::release);

            String next = lease();
            assertThat(backend.handOver(name, holder, next, TTL, LockMetadata.NONE)
                            .acquired())
                    .isTrue();
            assertThat(backend.release(name, next)).isTrue();

            assertThat(listening.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("a listener of the name, woken by the new holder's release")
                    .isTrue();
            assertThat(listening.availablePermits())
                    .as("and by nothing before it")
                    .isZero();
        }
    }
}
