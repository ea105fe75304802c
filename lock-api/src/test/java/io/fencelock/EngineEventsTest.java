package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every event a metrics binder needs, once, with the right outcome and times, on a clock the test moves. */
class EngineEventsTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final FakeClock clock = new FakeClock();
    private final ScriptedBackend backend =
            new ScriptedBackend(InMemoryLockBackend.builder().clock(clock).build(), true);
    private final LockOptions options = LockOptions.builder().ttl(TTL).build();
    private final LockClient client = LockClient.withClock(backend, options, clock);
    private final LockClient other = LockClient.withClock(backend, options, clock);
    private final Recorder events = new Recorder();

    EngineEventsTest() {
        client.addListener(events);
    }

    @AfterEach
    void close() {
        client.close();
        other.close();
    }

    @Test
    void acquireOutcomes() throws Exception {
        Lease lease = client.tryAcquire("a").orElseThrow();
        assertThat(client.tryAcquire("held-by-other-lease-of-same-client")).isPresent();
        Lease mine = other.tryAcquire("b").orElseThrow();
        assertThat(client.tryAcquire("b")).isEmpty();
        assertThat(client.acquire("b", Duration.ZERO)).isEmpty();
        backend.loseNextAcquireAnswer.set(true);
        assertThatThrownBy(() -> client.tryAcquire("c")).isInstanceOf(LockBackendException.class);
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> client.acquire("b", Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class);

        assertThat(events.acquires)
                .extracting(AcquireEvent::outcome)
                .containsExactly(
                        AcquireEvent.Outcome.GRANTED,
                        AcquireEvent.Outcome.GRANTED,
                        AcquireEvent.Outcome.REFUSED,
                        AcquireEvent.Outcome.TIMED_OUT,
                        AcquireEvent.Outcome.FAILED,
                        AcquireEvent.Outcome.FAILED);
        assertThat(events.acquires.get(0).lease()).isSameAs(lease);
        assertThat(events.acquires.get(0).ttl()).isEqualTo(TTL);
        assertThat(events.acquires.get(4).failure()).isInstanceOf(LockBackendException.class);
        assertThat(events.acquires.get(5).failure()).isInstanceOf(InterruptedException.class);
        assertThat(events.granted).as("acquired(lease) still called for grants").hasSize(2);
        mine.release();
    }

    @Test
    void releaseCarriesTheHoldTime() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        clock.advance(Duration.ofMillis(1234));
        lease.release();
        assertThat(events.heldFor).containsExactly(Duration.ofMillis(1234));
    }

    @Test
    void aFailedRenewalSaysWhetherItWillBeRetried() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        backend.failingRenews.set(1);
        clock.advance(options.renewInterval(TTL));
        client.engine().watchdog.renewTurn();
        assertThat(events.renewalFailures).containsExactly(true);
        backend.failingRenews.set(1);
        assertThatThrownBy(lease::renew).isInstanceOf(LockBackendException.class);
        assertThat(events.renewalFailures).containsExactly(true, true);
        assertThat(lease.state()).isEqualTo(LeaseState.HELD);
    }

    @Test
    void aForcedReleaseIsLearnedAsARejectedRenewal() {
        Lease lease = client.lock("a").type("job").tryAcquire().orElseThrow();
        LockInfo ended = other.forceRelease("a").orElseThrow();
        assertThat(ended.leaseId()).isEqualTo(lease.leaseId());
        assertThat(ended.type()).contains("job");
        Lease next = other.tryAcquire("a").orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(lease.renew()).isFalse();
        assertThat(events.losses).containsExactly(LeaseLoss.Reason.REJECTED);
        assertThat(other.forceRelease("free-name")).isEmpty();
    }

    @Test
    void listenersMayFailWithoutHarm() {
        client.addListener(new LockEventListener() {
            @Override
            public void acquireFinished(AcquireEvent event) {
                throw new IllegalStateException("a broken listener");
            }
        });
        assertThat(client.tryAcquire("a")).isPresent();
        assertThat(events.acquires).hasSize(1);
    }

    private static final class Recorder implements LockEventListener {
        final List<AcquireEvent> acquires = new CopyOnWriteArrayList<>();
        final List<Lease> granted = new CopyOnWriteArrayList<>();
        final List<Duration> heldFor = new CopyOnWriteArrayList<>();
        final List<Boolean> renewalFailures = new CopyOnWriteArrayList<>();
        final List<LeaseLoss.Reason> losses = new CopyOnWriteArrayList<>();

        @Override
        public void acquireFinished(AcquireEvent event) {
            acquires.add(event);
            LockEventListener.super.acquireFinished(event);
        }

        @Override
        public void acquired(Lease lease) {
            granted.add(lease);
        }

        @Override
        public void released(Lease lease, boolean freedOnBackend, Duration held) {
            heldFor.add(held);
        }

        @Override
        public void renewalFailed(Lease lease, Throwable cause, boolean willRetry) {
            renewalFailures.add(willRetry);
        }

        @Override
        public void lost(LeaseLoss loss) {
            losses.add(loss.reason());
        }
    }
}
