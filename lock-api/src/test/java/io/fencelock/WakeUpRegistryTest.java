package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.WakeUpRegistry;
import io.fencelock.spi.WakeUpSubscription;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The engine's one wake-up registry over a scripted feed: fan-out, isolation, reconnects. */
class WakeUpRegistryTest {
    private static final long HANG_GUARD_SECONDS = 10;

    /** A feed the test scripts: opens fail while {@code failingOpens} > 0; a read delivers what the test queued or breaks. */
    private static final class ScriptedFeed implements ReleaseFeed {
        final boolean reading;
        final AtomicInteger failingOpens = new AtomicInteger();
        final AtomicInteger opens = new AtomicInteger();
        final List<String> watched = new CopyOnWriteArrayList<>();
        final LinkedBlockingQueue<String> arriving = new LinkedBlockingQueue<>();
        volatile Sink sink;
        volatile boolean closed;

        ScriptedFeed(boolean reading) {
            this.reading = reading;
        }

        @Override
        public void open(Sink sink) {
            if (closed) {
                throw new IllegalStateException("closed");
            }
            if (failingOpens.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new LockBackendException("cannot connect", true);
            }
            opens.incrementAndGet();
            this.sink = sink;
        }

        @Override
        public boolean needsReading() {
            return reading;
        }

        @Override
        public void read(Duration max) {
            if (closed) {
                throw new IllegalStateException("closed");
            }
            try {
                String name = arriving.poll(max.toNanos(), TimeUnit.NANOSECONDS);
                if ("!break".equals(name)) {
                    throw new LockBackendException("connection lost", true);
                }
                if (name != null) {
                    sink.released(name);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void watch(String name) {
            watched.add(name);
        }

        @Override
        public void unwatch(String name) {
            watched.remove(name);
        }

        @Override
        public void close() {
            closed = true;
            arriving.add("!closed");
        }
    }

    @Test
    void aSignalReachesEverySubscriberOfItsNameAndAFailingCallbackHarmsNoOther() throws InterruptedException {
        ScriptedFeed feed = new ScriptedFeed(true);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            Semaphore a = new Semaphore(0);
            Semaphore b = new Semaphore(0);
            registry.subscribe("x", () -> {
                throw new IllegalStateException("a callback that fails");
            });
            registry.subscribe("x", a::release);
            registry.subscribe("y", b::release);
            assertThat(feed.opens.get()).as("open before subscribe returns").isEqualTo(1);
            assertThat(feed.watched).containsExactlyInAnyOrder("x", "y");
            feed.arriving.add("x");
            assertThat(a.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            feed.arriving.add("y");
            assertThat(b.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(a.availablePermits()).as("x's subscriber hears only x").isZero();
        }
        assertThat(feed.closed).as("the registry closes its feed").isTrue();
    }

    @Test
    void theLastSubscriberOfANameUnwatchesIt() {
        ScriptedFeed feed = new ScriptedFeed(false);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            WakeUpSubscription first = registry.subscribe("x", () -> {});
            WakeUpSubscription second = registry.subscribe("x", () -> {});
            assertThat(feed.watched).containsExactly("x");
            first.close();
            assertThat(feed.watched).containsExactly("x");
            second.close();
            assertThat(feed.watched).isEmpty();
        }
    }

    @Test
    void closingOneOfSeveralSubscribersLeavesTheOthersHearingAndTheNameWatched() throws InterruptedException {
        ScriptedFeed feed = new ScriptedFeed(true);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            Semaphore first = new Semaphore(0);
            Semaphore middle = new Semaphore(0);
            Semaphore last = new Semaphore(0);
            WakeUpSubscription a = registry.subscribe("x", first::release);
            WakeUpSubscription b = registry.subscribe("x", middle::release);
            WakeUpSubscription c = registry.subscribe("x", last::release);
            b.close();
            b.close(); // a second close changes nothing
            assertThat(feed.watched).containsExactly("x");
            feed.arriving.add("x");
            assertThat(first.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(last.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(middle.availablePermits())
                    .as("a closed subscriber hears nothing")
                    .isZero();
            a.close();
            assertThat(feed.watched).containsExactly("x");
            c.close();
            assertThat(feed.watched).isEmpty();
        }
    }

    @Test
    void aBrokenFeedIsReopenedAndEverySubscriberWokenOnce() throws InterruptedException {
        ScriptedFeed feed = new ScriptedFeed(true);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            Semaphore woken = new Semaphore(0);
            registry.subscribe("x", woken::release);
            registry.subscribe("y", woken::release);
            feed.failingOpens.set(2); // the first two reconnects fail: the backoff grows, the registry keeps trying
            feed.arriving.add("!break");
            assertThat(woken.tryAcquire(2, HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("both woken after the reopen")
                    .isTrue();
            assertThat(feed.opens.get()).isEqualTo(2);
            assertThat(feed.watched)
                    .as("names watched again on the new feed")
                    .containsExactlyInAnyOrder("x", "y", "x", "y");
            feed.arriving.add("x");
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("signals heard again")
                    .isTrue();
        }
    }

    @Test
    void aFeedThatCannotOpenAtFirstIsOpenedLaterAndAPushFeedsResumeWakesEveryone() throws InterruptedException {
        ScriptedFeed feed = new ScriptedFeed(false);
        feed.failingOpens.set(1);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            Semaphore woken = new Semaphore(0);
            registry.subscribe("x", woken::release); // returns although the feed could not open: the waiter polls
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken when it opened")
                    .isTrue();
            assertThat(feed.opens.get()).isEqualTo(1);
            feed.sink.resumed();
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken when the driver reconnected")
                    .isTrue();
            feed.sink.broken(new LockBackendException("gone", true));
            assertThat(woken.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken after the reopen")
                    .isTrue();
            assertThat(feed.opens.get()).isEqualTo(2);
        }
    }

    @Test
    void aClosedSubscriptionHearsNothingMore() throws InterruptedException {
        ScriptedFeed feed = new ScriptedFeed(false);
        try (WakeUpRegistry registry = new WakeUpRegistry(feed, "test-wake-ups")) {
            AtomicInteger calls = new AtomicInteger();
            Semaphore other = new Semaphore(0);
            registry.subscribe("x", calls::incrementAndGet).close();
            registry.subscribe("x", other::release);
            feed.sink.released("x");
            assertThat(other.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(calls.get()).isZero();
        }
    }
}
