package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.GrantKind;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watchdog on a clock the test moves, driven by hand: renewal batching and retry, the local
 * validity deadline, the lost signal, and the task interrupted by a loss. No sleeps: every moment
 * is set by {@link FakeClock#advance}.
 */
class EngineRenewalTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final FakeClock clock = new FakeClock();
    private final ScriptedBackend backend =
            new ScriptedBackend(InMemoryLockBackend.builder().clock(clock).build(), true);
    private final LockOptions options = LockOptions.builder().ttl(TTL).build();
    private final LockClient client = LockClient.withClock(backend, options, clock);
    private final Watchdog watchdog = client.engine().watchdog;
    private final Duration window = options.validityWindow(TTL);

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void dueLeasesAreRenewedInOneRoundTripWithThoseDueWithinSixtyPercentOfAnInterval() {
        Duration ttl = Duration.ofMillis(2_400); // renewed every 800 ms: below the watchdog's idle second
        LockOptions shortLeases = LockOptions.builder().ttl(ttl).build();
        try (LockClient c = LockClient.withClock(backend, shortLeases, clock)) {
            Watchdog dog = c.engine().watchdog;
            Lease a = c.tryAcquire("a").orElseThrow();
            Lease b = c.tryAcquire("b").orElseThrow();
            clock.advance(Duration.ofMillis(300)); // c falls due 300 ms after a and b: within 60% of the interval
            Lease third = c.tryAcquire("c").orElseThrow();
            assertThat(dog.renewTurn())
                    .as("nothing due yet: sleep until a and b are")
                    .isEqualTo(Duration.ofMillis(500).toNanos());

            clock.advance(Duration.ofMillis(500));
            assertThat(dog.renewTurn()).as("renewed: look again at once").isEqualTo(-1);
            assertThat(backend.renewBatches).containsExactly(3);
            for (Lease lease : List.of(a, b, third)) {
                assertThat(lease.remainingValidity()).as(lease.name()).isEqualTo(shortLeases.validityWindow(ttl));
            }
            assertThat(dog.renewTurn())
                    .as("next renewal a renew interval after the one just sent")
                    .isEqualTo(shortLeases.renewInterval(ttl).toNanos());
        }
    }

    @Test
    void twoGroupsHalfAnIntervalApartShareOneRoundTrip() {
        Duration ttl = Duration.ofMillis(2_400); // renewed every 800 ms
        LockOptions shortLeases = LockOptions.builder().ttl(ttl).build();
        try (LockClient c = LockClient.withClock(backend, shortLeases, clock)) {
            Watchdog dog = c.engine().watchdog;
            c.tryAcquire("early").orElseThrow();
            clock.advance(Duration.ofMillis(440)); // more than half an interval later
            c.tryAcquire("late").orElseThrow();
            clock.advance(Duration.ofMillis(360));
            assertThat(dog.renewTurn()).as("the early lease is due").isEqualTo(-1);
            assertThat(backend.renewBatches)
                    .as("the late lease, due 440 ms on, joins: with half an interval the two stayed apart")
                    .containsExactly(2);
            assertThat(dog.renewTurn())
                    .as("one round trip per interval from now on")
                    .isEqualTo(shortLeases.renewInterval(ttl).toNanos());
        }
    }

    @Test
    void aFailedRenewalIsRetriedUntilTheDeadlineAndThenTheLeaseIsLost() throws Exception {
        Lease lease = client.tryAcquire("a").orElseThrow();
        backend.failingRenews.set(Integer.MAX_VALUE);
        clock.advance(options.renewInterval(TTL));
        watchdog.renewTurn();
        long retry = watchdog.renewTurn();
        assertThat(retry)
                .as("retried after a jittered fifth of the interval, at most 1 s")
                .isBetween(
                        Duration.ofMillis(500).toNanos(), Duration.ofSeconds(1).toNanos());
        clock.advance(Duration.ofNanos(retry));
        watchdog.renewTurn();
        assertThat(backend.renewBatches).hasSize(2);
        assertThat(lease.state()).isEqualTo(LeaseState.HELD);

        clock.advance(window.minus(options.renewInterval(TTL)).minusNanos(retry + 1));
        assertThat(lease.isValid()).as("one nanosecond before the deadline").isTrue();
        clock.advance(Duration.ofNanos(1));
        assertThat(lease.isValid())
                .as("at the deadline, before any thread noticed")
                .isFalse();
        watchdog.checkExpiries();
        LeaseLoss loss = lease.lost().toCompletableFuture().getNow(null);
        assertThat(loss).isNotNull();
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
        assertThat(loss.cause()).as("the last renewal failure").isInstanceOf(LockBackendException.class);
        assertThat(client.held()).isEmpty();

        watchdog.renewTurn(); // the background release of the lost lease (the backend still holds it)
        assertThat(backend.inspect("a").orElseThrow().held())
                .as("freed on the backend before its TTL")
                .isFalse();
        assertThat(backend.releasedAs).as("the lost lease's grant").containsEntry(lease.leaseId(), GrantKind.MUTEX);
    }

    @Test
    void aReleaseRetriedInTheBackgroundStillSaysWhichCallGrantedTheLease() {
        ReadWriteLockHandle lock = client.readWriteLock("r");
        Lease reader = lock.tryRead().orElseThrow();
        backend.failingReleases.set(1);
        assertThatThrownBy(reader::release).isInstanceOf(LockBackendException.class);
        backend.releasedAs.clear();
        watchdog.renewTurn(); // the retry in the background
        assertThat(backend.releasedAs).containsExactly(Map.entry(reader.leaseId(), GrantKind.SHARED));
        assertThat(lock.tryWrite()).as("the reader's grant freed").isPresent();
    }

    /**
     * A renewal and a release tell the backend which call granted each lease, so a backend that keeps the
     * mutex's holder and shared grants apart looks in one place: a mutex is MUTEX; a reader, a writer (still
     * after its downgrade), permits and a fair mutex are SHARED. An id the engine does not hold is EITHER.
     */
    @Test
    void renewalsAndReleasesSayWhichCallGrantedEachLease() {
        Lease mutex = client.tryAcquire("mutex").orElseThrow();
        Lease reader = client.readWriteLock("read").tryRead().orElseThrow();
        ReadWriteLockHandle writes = client.readWriteLock("write");
        Lease writer = writes.tryWrite().orElseThrow();
        Lease permits = client.semaphore("permits", 3).tryAcquire(2).orElseThrow();
        Lease fair = client.lock("fair").fair(true).tryAcquire().orElseThrow();
        assertThat(writes.downgrade(writer)).isTrue();
        clock.advance(options.renewInterval(TTL));
        watchdog.renewTurn();
        Map<String, GrantKind> kinds = Map.of(
                mutex.leaseId(), GrantKind.MUTEX,
                reader.leaseId(), GrantKind.SHARED,
                writer.leaseId(), GrantKind.SHARED,
                permits.leaseId(), GrantKind.SHARED,
                fair.leaseId(), GrantKind.SHARED);
        assertThat(backend.renewedAs).containsAllEntriesOf(kinds);
        for (Lease lease : List.of(mutex, reader, writer, permits, fair)) {
            assertThat(lease.release()).as(lease.name()).isTrue();
        }
        assertThat(backend.releasedAs).containsAllEntriesOf(kinds);
        Lease held = client.tryAcquire("forced").orElseThrow();
        assertThat(client.forceRelease("forced")).isPresent();
        assertThat(backend.releasedAs)
                .as("an id released by name only")
                .containsEntry(held.leaseId(), GrantKind.EITHER);
    }

    @Test
    void aRejectedRenewalLosesTheLeaseAtOnce() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        backend.delegate.release("a", lease.leaseId()); // someone freed it behind the client's back
        clock.advance(options.renewInterval(TTL));
        watchdog.renewTurn();
        assertThat(lease.state()).isEqualTo(LeaseState.LOST);
        assertThat(lease.lost().toCompletableFuture().getNow(null).reason()).isEqualTo(LeaseLoss.Reason.REJECTED);
    }

    @Test
    void aRenewalAnsweredAfterTheDeadlineCannotReviveTheLease() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        clock.advance(options.renewInterval(TTL));
        backend.beforeRenewAnswer = () -> clock.advance(window); // the answer comes past the deadline
        watchdog.renewTurn();
        assertThat(lease.state()).isEqualTo(LeaseState.LOST);
        assertThat(lease.lost().toCompletableFuture().getNow(null).reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
    }

    @Test
    void aTokenPeriodRaisesTheTokenOnRenewal() {
        LockOptions periodic = LockOptions.builder()
                .ttl(TTL)
                .tokenPeriod(Duration.ofSeconds(10))
                .build();
        try (LockClient c = LockClient.withClock(backend, periodic, clock)) {
            Lease lease = c.tryAcquire("p").orElseThrow();
            long first = lease.fencingToken();
            clock.advance(periodic.renewInterval(TTL));
            c.engine().watchdog.renewTurn();
            assertThat(lease.fencingToken()).isGreaterThan(first);
        }
    }

    @Test
    void aLossInterruptsTheTaskOfRunExclusivelyAndIsThrownWhenItReturns() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean interruptKept = new AtomicBoolean(true);
        try {
            Future<Throwable> outcome = pool.submit(() -> {
                Throwable thrown = catchThrowable(() -> client.runExclusively("task", Duration.ZERO, lease -> {
                    running.countDown();
                    Thread.sleep(TimeUnit.HOURS.toMillis(1));
                    return null;
                }));
                interruptKept.set(Thread.currentThread().isInterrupted());
                return thrown;
            });
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            clock.advance(window);
            watchdog.checkExpiries();
            Throwable thrown = outcome.get(10, TimeUnit.SECONDS);
            assertThat(thrown).isInstanceOf(LeaseLostException.class).hasCauseInstanceOf(InterruptedException.class);
            assertThat(interruptKept)
                    .as("the interrupt the loss caused is cleared once the task is done")
                    .isFalse();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aTaskThatEndsNormallyReleasesItsLock() throws Exception {
        assertThat(client.runExclusively("task", Duration.ZERO, lease -> lease.fencingToken()))
                .isPresent();
        assertThat(backend.inspect("task").orElseThrow().held()).isFalse();
        assertThat(client.held()).isEmpty();
    }
}
