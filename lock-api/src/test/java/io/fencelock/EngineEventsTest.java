package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The listener's events as {@link LockEventListener} and {@link AcquireEvent} document them, on a
 * clock the test moves (so every duration is exact): one acquire event per call with its outcome
 * and the time waited, renewal failures with whether they are retried, releases with the hold
 * time, and losses.
 */
class EngineEventsTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final FakeClock clock = new FakeClock();
    private final InMemoryLockBackend.Builder store =
            InMemoryLockBackend.builder().store("events-" + System.nanoTime()).clock(clock);
    private final ScriptedBackend backend = new ScriptedBackend(store.build(), true);
    private final LockOptions options = LockOptions.builder().ttl(TTL).build();
    private final LockClient client = LockClient.withClock(backend, options, clock);
    private final LockClient other = LockClient.withClock(store.build(), options, clock);
    private final List<String> events = new CopyOnWriteArrayList<>();

    /** Writes each event as one line, durations in milliseconds. */
    private final LockEventListener recorder = new LockEventListener() {
        @Override
        public void acquireFinished(AcquireEvent e) {
            events.add("acquire " + e.name() + " " + e.outcome() + " waited="
                    + e.waited().toMillis() + " ttl="
                    + e.ttl().toSeconds() + " lease=" + (e.lease() != null) + " failure="
                    + (e.failure() == null ? null : e.failure().getClass().getSimpleName()));
        }

        @Override
        public void renewed(Lease lease, long sentNanos) {
            events.add("renewed " + lease.name());
        }

        @Override
        public void renewalFailed(Lease lease, Throwable cause, boolean willRetry) {
            events.add(
                    "renewalFailed " + lease.name() + " " + cause.getClass().getSimpleName() + " retry=" + willRetry);
        }

        @Override
        public void released(Lease lease, boolean freedOnBackend, Duration heldFor) {
            events.add("released " + lease.name() + " freed=" + freedOnBackend + " held=" + heldFor.toMillis());
        }

        @Override
        public void lost(LeaseLoss loss) {
            events.add("lost " + loss.lease().name() + " " + loss.reason());
        }
    };

    @AfterEach
    void close() {
        client.close();
        other.close();
    }

    @Test
    void everyAcquireCallEndsInOneEventWithItsOutcomeAndTheTimeWaited() {
        client.addListener(recorder);
        backend.duringAcquire = () -> clock.advance(Duration.ofMillis(250));
        Lease granted = client.tryAcquire("a").orElseThrow();
        other.tryAcquire("b").orElseThrow();
        assertThat(client.tryAcquire("b")).isEmpty();
        Throwable timedOut = catchThrowable(
                () -> assertThat(client.acquire("b", Duration.ofMillis(100))).isEmpty());
        backend.loseNextAcquireAnswer.set(true);
        Throwable failed = catchThrowable(() -> client.tryAcquire("c"));
        Thread.currentThread().interrupt();
        Throwable interrupted = catchThrowable(() -> client.acquire("d", Duration.ofHours(1)));

        assertThat(timedOut).isNull();
        assertThat(failed).isInstanceOf(LockBackendException.class);
        assertThat(interrupted).isInstanceOf(InterruptedException.class);
        assertThat(events)
                .containsExactly(
                        "acquire a GRANTED waited=250 ttl=30 lease=true failure=null",
                        "acquire b REFUSED waited=250 ttl=30 lease=false failure=null",
                        "acquire b TIMED_OUT waited=250 ttl=30 lease=false failure=null",
                        "acquire c FAILED waited=250 ttl=30 lease=false failure=LockBackendException",
                        "acquire d FAILED waited=0 ttl=30 lease=false failure=InterruptedException");
        assertThat(granted.isValid()).isTrue();
    }

    @Test
    void releasesCarryTheHoldTimeAndWhetherTheBackendFreedTheLock() {
        client.addListener(recorder);
        Lease a = client.tryAcquire("a").orElseThrow();
        Lease b = client.tryAcquire("b").orElseThrow();
        clock.advance(Duration.ofSeconds(5));
        a.release();
        clock.advance(Duration.ofSeconds(1));
        assertThat(b.releaseAfter(Duration.ofSeconds(10))).isTrue();

        assertThat(events)
                .filteredOn(e -> e.startsWith("released"))
                .containsExactly("released a freed=true held=5000", "released b freed=false held=6000");
        assertThat(client.held()).isEmpty();
    }

    @Test
    void renewalFailuresSayWhetherTheyAreRetriedAndARejectionIsALoss() {
        client.addListener(recorder);
        Lease watched = client.tryAcquire("watched").orElseThrow();
        Lease manual = client.lock("manual").autoRenew(false).tryAcquire().orElseThrow();
        backend.failingRenews.set(2);
        clock.advance(options.renewInterval(TTL));
        client.engine().watchdog.renewTurn();
        assertThat(catchThrowable(manual::renew)).isInstanceOf(LockBackendException.class);
        assertThat(manual.renew()).isTrue();
        backend.delegate.release("manual", manual.leaseId()); // freed behind the client's back
        assertThat(manual.renew()).isFalse();

        assertThat(events)
                .filteredOn(e -> !e.startsWith("acquire"))
                .containsExactly(
                        "renewalFailed watched LockBackendException retry=true",
                        "renewalFailed manual LockBackendException retry=false",
                        "renewed manual",
                        "lost manual REJECTED");
        assertThat(watched.state()).isEqualTo(LeaseState.HELD);
    }

    @Test
    void aListenerOfTheOlderCallbacksStillHearsGrantsAndReleases() {
        List<String> heard = new CopyOnWriteArrayList<>();
        client.addListener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                heard.add("acquired " + lease.name());
            }

            @Override
            public void released(Lease lease, boolean freedOnBackend) {
                heard.add("released " + lease.name() + " " + freedOnBackend);
            }
        });
        client.tryAcquire("a").orElseThrow().release();
        other.tryAcquire("b").orElseThrow();
        assertThat(client.tryAcquire("b")).isEmpty();

        assertThat(heard).containsExactly("acquired a", "released a true");
    }

    @Test
    void aForcedReleaseIsLearnedAsARejectedRenewal() {
        client.addListener(recorder);
        Lease lease = client.lock("a").type("job").tryAcquire().orElseThrow();
        LockInfo ended = other.forceRelease("a").orElseThrow();
        assertThat(ended.leaseId()).isEqualTo(lease.leaseId());
        assertThat(ended.type()).contains("job");
        Lease next = other.tryAcquire("a").orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(lease.renew()).isFalse();
        assertThat(events).endsWith("lost a REJECTED");
        assertThat(other.forceRelease("free-name")).isEmpty();
    }

    @Test
    void aFailingListenerHarmsNeitherTheCallNorTheOtherListeners() {
        client.addListener(new LockEventListener() {
            @Override
            public void acquireFinished(AcquireEvent event) {
                throw new IllegalStateException("a broken listener");
            }
        });
        client.addListener(recorder);
        assertThat(client.tryAcquire("a")).isPresent();
        assertThat(events).hasSize(1);
    }
}
