package io.fencelock.tck.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.SpiChecks;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

/**
 * Checks of a backend's queue of grants by release ({@link io.fencelock.Capability#GRANT_ON_RELEASE}) for a
 * provider's own tests against its real server, beside the TCK's properties ({@code releaseGrantsTheQueuedWaiter},
 * {@code aReleaseAfterAWaiterGaveUpLeavesTheNameFree}): the order of the queue, what a release grants and
 * tells, what a refusal writes, and what withdraws a place. {@code places} counts the queue's places of a
 * name as the backend stores them. The hang guards only stop a broken backend; no outcome depends on timing.
 */
public final class QueuedGrantProviderChecks {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 30;

    private QueuedGrantProviderChecks() {}

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    /**
     * A waiter of {@code side}'s client, refused on a held name: queued, its wake-ups (and grants) counted by
     * {@code wakeUps}. Returns the lease it is queued under.
     */
    public static String queue(LockBackend side, String name, Semaphore wakeUps) {
        SpiChecks.subscribe(side, name, wakeUps::release);
        String lease = lease();
        AcquireResult refused = side.tryAcquire(name, lease, TTL);
        assertThat(refused.acquired()).as("refused while held").isFalse();
        assertThat(refused.queuedAs()).as("queued under the refused lease").isEqualTo(lease);
        return lease;
    }

    /**
     * Waiting clients queue in the order of their first refusal, each under the lease of that refusal, and a
     * release grants the first alone (a new token, its lease) and tells its client; the name is never free in
     * between, and the client's later attempts learn of the grant too. Releasing that grant grants the next,
     * and the release of that one frees the name. Each client's signals arrive in the backend's order, so once
     * the second client hears the grant meant for it, it has also seen (and ignored) the one before.
     */
    public static void assertAReleaseGrantsTheFirstQueuedWaiterAlone(
            LockBackend backend,
            LockBackend firstSide,
            LockBackend secondSide,
            String name,
            ToIntFunction<String> places)
            throws InterruptedException {
        assertAReleaseGrantsTheFirstQueuedWaiterAlone(backend, firstSide, secondSide, name, places, () -> {});
    }

    /**
     * The same, with {@code betweenRefusals} run between the two clients' first refusals (a backend whose
     * queue places are server times of a coarse clock waits there for the next tick).
     */
    public static void assertAReleaseGrantsTheFirstQueuedWaiterAlone(
            LockBackend backend,
            LockBackend firstSide,
            LockBackend secondSide,
            String name,
            ToIntFunction<String> places,
            Runnable betweenRefusals)
            throws InterruptedException {
        String holder = lease();
        AcquireResult held = backend.tryAcquire(name, holder, TTL);
        assertThat(held.acquired()).isTrue();
        Semaphore first = new Semaphore(0);
        Semaphore second = new Semaphore(0);
        String firstQueued = queue(firstSide, name, first);
        betweenRefusals.run();
        String secondQueued = queue(secondSide, name, second);
        AcquireResult again = firstSide.tryAcquire(name, lease(), TTL);
        assertThat(again.acquired()).as("refused again").isFalse();
        assertThat(again.queuedAs())
                .as("still queued under its first refused lease")
                .isEqualTo(firstQueued);
        assertThat(places.applyAsInt(name)).as("two places").isEqualTo(2);

        assertThat(backend.release(name, holder)).isTrue();
        assertThat(first.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                .as("the first waiter's client is told")
                .isTrue();
        AcquireResult right = secondSide.tryAcquire(name, lease(), TTL);
        assertThat(right.acquired())
                .as("a caller right after the release: the name went to the queue")
                .isFalse();
        assertThat(right.queuedAs()).as("the second, still queued").isEqualTo(secondQueued);
        AcquireResult told = firstSide.tryAcquire(name, lease(), TTL);
        assertThat(told.queuedGrant())
                .as("the first client's next attempt learns of its grant")
                .isTrue();
        assertThat(told.queuedAs()).isEqualTo(firstQueued);
        assertThat(told.token()).as("a new token").isGreaterThan(held.token());
        assertThat(backend.inspect(name).map(LockInfo::leaseId)).contains(firstQueued);
        assertThat(backend.inspect(name).map(LockInfo::token)).contains(told.token());
        assertThat(places.applyAsInt(name))
                .as("the queue after the grant: the second client")
                .isEqualTo(1);

        assertThat(firstSide.release(name, firstQueued))
                .as("the grant, released as any grant")
                .isTrue();
        assertThat(second.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                .as("the second waiter's client, told of the grant that release made")
                .isTrue();
        assertThat(backend.inspect(name).map(LockInfo::leaseId)).contains(secondQueued);
        assertThat(second.availablePermits()).as("and by no release before it").isZero();
        assertThat(first.availablePermits())
                .as("nor the first, gone from the queue")
                .isZero();
        assertThat(places.applyAsInt(name))
                .as("the queue once both were granted")
                .isZero();
        assertThat(secondSide.release(name, secondQueued)).isTrue();
        assertThat(backend.inspect(name).filter(LockInfo::held))
                .as("free: nobody was queued any more")
                .isEmpty();
    }

    /** The release of the lease a client is queued under, holding nothing, withdraws the client's place. */
    public static void assertAReleaseOfAQueuedLeaseWithdrawsItsPlace(
            LockBackend backend, LockBackend side, String name, ToIntFunction<String> places) {
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        String queued = queue(side, name, new Semaphore(0));
        assertThat(side.release(name, lease()))
                .as("another lease: nothing to withdraw")
                .isFalse();
        assertThat(places.applyAsInt(name)).isEqualTo(1);
        assertThat(side.release(name, queued)).as("nothing was held").isFalse();
        assertThat(places.applyAsInt(name))
                .as("the queue once the place is withdrawn")
                .isZero();
        assertThat(backend.release(name, holder)).isTrue();
        assertThat(backend.inspect(name).filter(LockInfo::held))
                .as("free after the release")
                .isEmpty();
    }

    /**
     * A place is written once and rewritten only when a quarter of its TTL old: a client counts its grant's
     * validity from the attempt that wrote the place, so a long wait must not leave that attempt far behind;
     * refusals in between write nothing. A release then grants the latest refused lease. The place's age at an
     * attempt is read from this side's clock (from before the attempt that wrote it to after the one that asks):
     * a refusal that may have come after the quarter, on a machine slow enough to take that long for two round
     * trips, may find the place rewritten, and the check goes on from the place it finds.
     */
    public static void assertAPlaceGrownOldTakesTheLatestRefusedLease(
            LockBackend backend, LockBackend side, String name, ToIntFunction<String> places) {
        String holder = lease();
        assertThat(backend.tryAcquire(name, holder, TTL).acquired()).isTrue();
        Duration shortTtl = Duration.ofSeconds(2);
        long quarter = shortTtl.dividedBy(4).toNanos();
        String warmUp = lease(); // a first request of a client may set up connections or scripts
        assertThat(side.tryAcquire(name + "-warm-up", warmUp, shortTtl).acquired())
                .isTrue();
        assertThat(side.release(name + "-warm-up", warmUp)).isTrue();
        SpiChecks.subscribe(side, name, () -> {});
        String place = lease();
        long writtenAfter = System.nanoTime(); // the place is written no earlier than this
        assertThat(side.tryAcquire(name, place, shortTtl).queuedAs()).isEqualTo(place);
        String refused = lease();
        long sent = System.nanoTime();
        String queuedAs = side.tryAcquire(name, refused, shortTtl).queuedAs();
        long age = System.nanoTime() - writtenAfter; // the place's age at that refusal is at most this
        if (age < quarter) {
            assertThat(queuedAs)
                    .as("young (%d ms at most): the place stands", age / 1_000_000)
                    .isEqualTo(place);
        } else {
            assertThat(queuedAs)
                    .as("%d ms after the place was written", age / 1_000_000)
                    .isIn(place, refused);
            if (queuedAs.equals(refused)) {
                place = refused;
                writtenAfter = sent;
            }
        }
        String later;
        do {
            assertThat(Duration.ofNanos(System.nanoTime() - writtenAfter))
                    .isLessThan(Duration.ofSeconds(HANG_GUARD_SECONDS));
            later = lease();
            queuedAs = side.tryAcquire(name, later, shortTtl).queuedAs();
        } while (queuedAs.equals(place));
        assertThat(queuedAs).as("grown old: the place takes the refused lease").isEqualTo(later);
        assertThat(Duration.ofNanos(System.nanoTime() - writtenAfter))
                .as("rewritten once a quarter of its TTL old")
                .isGreaterThanOrEqualTo(Duration.ofNanos(quarter).minusMillis(50));
        assertThat(places.applyAsInt(name)).as("one place in the queue").isEqualTo(1);
        assertThat(backend.release(name, holder)).isTrue();
        assertThat(backend.inspect(name).map(LockInfo::leaseId))
                .as("granted to the latest refused lease")
                .contains(later);
        assertThat(side.release(name, later)).isTrue();
    }
}
