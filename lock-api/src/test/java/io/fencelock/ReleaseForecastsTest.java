package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The adaptive poll of a waiter without a release signal: the pause as a pure function of the wait's
 * progress, the name's forecast and the holder's expiry (a simulated wait on a simulated clock, with
 * seeded jitter), the bounded per-name forecasts, and the engine learning them from its waits.
 */
class ReleaseForecastsTest {
    private static final long MS = 1_000_000;
    private static final LockOptions OPTIONS = LockOptions.defaults(); // polls 5 ms .. 500 ms
    private static final long FAST = ReleaseForecasts.fastPollNanos(OPTIONS);
    private static final long NONE = ReleaseForecasts.NONE;

    /** A wait simulated on its own clock: attempts until the first one sent at or after {@code release}. */
    private record Wait(long delay, int attempts) {
        static Wait of(long release, long forecast, long seed) {
            Random jitter = new Random(seed);
            long now = 0; // the first refusal
            int attempts = 1;
            int misses = 0;
            while (now < release) {
                now += ReleaseForecasts.pauseNanos(OPTIONS, misses++, now, forecast, null, jitter.nextDouble());
                attempts++;
            }
            return new Wait(now - release, attempts);
        }
    }

    @Test
    void withoutAForecastThePauseIsTheJitteredBackoff() {
        for (int misses = 0; misses < 30; misses++) {
            long ceiling = Math.min(5 * MS << Math.min(misses, 20), 500 * MS);
            assertThat(ReleaseForecasts.pauseNanos(OPTIONS, misses, 7 * MS, NONE, null, 0.0))
                    .isEqualTo(ceiling / 2);
            assertThat(ReleaseForecasts.pauseNanos(OPTIONS, misses, 7 * MS, NONE, null, 1.0))
                    .isEqualTo(ceiling);
        }
    }

    @Test
    void withAForecastThePauseNeverPassesTheForecastReleaseAndIsFastAroundIt() {
        long forecast = 200 * MS;
        for (long since = 0; since < forecast; since += MS / 4) {
            for (double j : new double[] {0.0, 0.5, 1.0}) {
                long pause = ReleaseForecasts.pauseNanos(OPTIONS, 3, since, forecast, null, j);
                assertThat(since + pause)
                        .as("at %d ns of a forecast of %d ns", since, forecast)
                        .isLessThanOrEqualTo(Math.max(forecast, since + FAST));
                assertThat(pause).isGreaterThanOrEqualTo(Math.min(FAST, forecast - since) / 2);
            }
        }
        assertThat(ReleaseForecasts.pauseNanos(OPTIONS, 9, forecast - MS / 2, forecast, null, 1.0))
                .as("next to the forecast release: the fast poll")
                .isEqualTo(FAST);
        assertThat(ReleaseForecasts.pauseNanos(OPTIONS, 9, forecast + 40 * MS, forecast, null, 1.0))
                .as("past it, the pause grows with the time since")
                .isEqualTo(40 * MS);
        assertThat(ReleaseForecasts.pauseNanos(
                        OPTIONS, 0, 0, Duration.ofHours(1).toNanos(), null, 1.0))
                .as("far from it: the maximum poll interval, slow")
                .isEqualTo(500 * MS);
    }

    @Test
    void thePauseNeverSleepsPastTheHoldersExpiryAndNeverSpins() {
        long forecast = Duration.ofSeconds(10).toNanos();
        assertThat(ReleaseForecasts.pauseNanos(OPTIONS, 2, 0, forecast, Duration.ofMillis(3), 1.0))
                .isEqualTo(4 * MS);
        assertThat(ReleaseForecasts.pauseNanos(OPTIONS, 2, 0, NONE, Duration.ofMillis(3), 1.0))
                .isLessThanOrEqualTo(4 * MS);
        assertThat(ReleaseForecasts.pauseNanos(OPTIONS, 2, forecast, forecast, Duration.ZERO, 0.0))
                .isGreaterThanOrEqualTo(100_000);
        LockOptions tiny = LockOptions.builder()
                .initialPollInterval(Duration.ofNanos(1))
                .maxPollInterval(Duration.ofNanos(1))
                .build();
        assertThat(ReleaseForecasts.fastPollNanos(tiny)).isEqualTo(100_000);
        assertThat(ReleaseForecasts.pauseNanos(tiny, 0, 0, NONE, null, 0.0)).isEqualTo(100_000);
    }

    @Test
    void aHandOffIsLateByAtMostTheForecastsErrorOrTheFastPoll() {
        long hold = 30 * MS;
        for (long error : new long[] {0, MS, -MS, 5 * MS, -5 * MS, -25 * MS, 60 * MS}) {
            for (long seed = 0; seed < 500; seed++) {
                Wait w = Wait.of(hold, hold + error, seed);
                assertThat(w.delay())
                        .as("forecast off by %d ns, seed %d", error, seed)
                        .isLessThanOrEqualTo(Math.max(FAST, Math.abs(error)));
            }
        }
    }

    @Test
    void anAccurateForecastCostsAFewAttemptsAndBeatsTheBackoff() {
        long hold = 30 * MS;
        long forecastDelays = 0;
        long backoffDelays = 0;
        int most = 0;
        for (long seed = 0; seed < 500; seed++) {
            Wait forecast = Wait.of(hold, hold, seed);
            Wait backoff = Wait.of(hold, NONE, seed);
            forecastDelays += forecast.delay();
            backoffDelays += backoff.delay();
            most = Math.max(most, forecast.attempts());
        }
        assertThat(most).as("attempts of a 30 ms wait").isLessThanOrEqualTo(10);
        assertThat(forecastDelays / 500).isLessThanOrEqualTo(FAST);
        assertThat(backoffDelays / 500).isGreaterThan(5 * MS);
        // A long hold stays slow: a minute's wait with an accurate forecast costs a few hundred attempts at most.
        Wait minute =
                Wait.of(Duration.ofMinutes(1).toNanos(), Duration.ofMinutes(1).toNanos(), 1);
        assertThat(minute.attempts()).isBetween(100, 200);
        assertThat(minute.delay()).isLessThanOrEqualTo(FAST);
    }

    @Test
    void observationsOfEqualPrecisionAverageWithAQuartersWeightAtLeast() {
        ReleaseForecasts f = new ReleaseForecasts();
        assertThat(f.expectedSpanNanos("n")).isEqualTo(NONE);
        f.observed("n", 40 * MS, 0);
        assertThat(f.expectedSpanNanos("n")).isEqualTo(40 * MS);
        f.observed("n", 0, 0);
        assertThat(f.expectedSpanNanos("n")).isEqualTo(30 * MS);
        for (int i = 0; i < 40; i++) {
            f.observed("n", 10 * MS, MS);
        }
        assertThat(f.expectedSpanNanos("n")).isBetween(10 * MS - MS / 100, 10 * MS + MS / 100);
        f.observed("n", -5, -5);
        assertThat(f.expectedSpanNanos("n")).as("never negative").isGreaterThanOrEqualTo(0);
    }

    @Test
    void aPreciseObservationOutweighsAForecastFromACoarseOne() {
        ReleaseForecasts f = new ReleaseForecasts();
        f.observed("n", 40 * MS, 40 * MS); // a wait that backed off: released somewhere in 20..60 ms
        f.observed("n", 30 * MS, MS); // a wait that polled fast near the release: 29.5..30.5 ms
        assertThat(f.expectedSpanNanos("n")).isBetween(30 * MS - MS / 10, 30 * MS + MS / 10);
        f.observed("n", 70 * MS, 40 * MS); // a coarse, odd one now moves it only a quarter of the way
        assertThat(f.expectedSpanNanos("n")).isBetween(40 * MS - MS / 10, 40 * MS + MS / 10);
    }

    @Test
    void onlyTheMostRecentlyUsedNamesAreKept() {
        ReleaseForecasts f = new ReleaseForecasts();
        for (int i = 0; i < ReleaseForecasts.CAPACITY; i++) {
            f.observed("name-" + i, MS, 0);
        }
        f.expectedSpanNanos("name-0"); // used again: the eldest is now name-1
        f.observed("one-more", MS, 0);
        assertThat(f.size()).isEqualTo(ReleaseForecasts.CAPACITY);
        assertThat(f.expectedSpanNanos("name-0")).isEqualTo(MS);
        assertThat(f.expectedSpanNanos("name-1")).isEqualTo(NONE);
        assertThat(f.expectedSpanNanos("one-more")).isEqualTo(MS);
    }

    /** A waiter's client on a scripted in-memory backend, with or without its release signal, and a holder's client. */
    private static final class TwoClients implements AutoCloseable {
        final FakeClock clock = new FakeClock();
        final InMemoryLockBackend.Builder store = InMemoryLockBackend.builder()
                .store("forecast-" + System.nanoTime())
                .clock(clock);
        final ScriptedBackend waiterBackend;
        final LockClient waiter;
        final LockClient holder;

        TwoClients(boolean signals) {
            this(signals, Duration.ofMillis(5), Duration.ofMillis(20)); // the waiter's real sleeps stay short
        }

        TwoClients(boolean signals, Duration initialPoll, Duration maxPoll) {
            LockOptions options = LockOptions.builder()
                    .ttl(Duration.ofSeconds(30))
                    .autoRenew(false)
                    .initialPollInterval(initialPoll)
                    .maxPollInterval(maxPoll)
                    .build();
            waiterBackend = new ScriptedBackend(store.build(), signals);
            waiter = LockClient.withClock(waiterBackend, options, clock);
            holder = LockClient.withClock(store.build(), options, clock);
        }

        /** Refused at 0 ms, refused again at 0 ms while 40 ms pass, released during the third attempt. */
        void releaseDuringTheThirdAttempt(Lease held) {
            AtomicInteger attempt = new AtomicInteger();
            waiterBackend.duringAcquire = () -> {
                switch (attempt.incrementAndGet()) {
                    case 2 -> clock.advance(Duration.ofMillis(40));
                    case 3 -> held.release();
                    default -> {}
                }
            };
        }

        @Override
        public void close() {
            waiter.close();
            holder.close();
        }
    }

    @Test
    void aWaitWithoutAReleaseSignalTeachesItsClientTheNamesSpan() throws Exception {
        try (TwoClients c = new TwoClients(false)) {
            c.releaseDuringTheThirdAttempt(c.holder.tryAcquire("f").orElseThrow());
            assertThat(c.waiter.acquire("f", Duration.ofHours(1))).isPresent();
            assertThat(c.waiterBackend.attempts.get()).isEqualTo(3);
            assertThat(c.waiter.engine().forecasts.expectedSpanNanos("f"))
                    .as("released between the last refusal (0 ms) and the grant (40 ms): midway")
                    .isEqualTo(20 * MS);
            assertThat(c.holder.engine().forecasts.size())
                    .as("the holder never waited")
                    .isZero();
        }
    }

    @Test
    void aLocalReleaseTeachesTheExactSpan() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // polls an hour apart: only the local release's signal can end this wait
        try (TwoClients c = new TwoClients(false, Duration.ofHours(1), Duration.ofHours(1))) {
            Lease held = c.waiter.tryAcquire("l").orElseThrow(); // a holder of the waiter's own client
            Thread[] waiting = new Thread[1];
            Future<Optional<Lease>> next = pool.submit(() -> {
                waiting[0] = Thread.currentThread();
                return c.waiter.acquire("l", Duration.ofHours(1));
            });
            long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // waiting from 0 ms without asking (its own client holds the name), asleep until a signal
            while (waiting[0] == null || waiting[0].getState() != Thread.State.TIMED_WAITING) {
                assertThat(System.nanoTime()).as("hang guard").isLessThan(guard);
                Thread.onSpinWait();
            }
            c.clock.advance(Duration.ofMillis(40));
            held.release(); // wakes the waiter at once, at 40 ms
            assertThat(next.get(10, TimeUnit.SECONDS)).isPresent();
            assertThat(c.waiterBackend.attempts.get())
                    .as("the holder's grant and the waiter's: no refusal")
                    .isEqualTo(2);
            assertThat(c.waiter.engine().forecasts.expectedSpanNanos("l"))
                    .as("the release's own signal dates it")
                    .isEqualTo(40 * MS);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aBackendWithAReleaseSignalKeepsItsSignalAndLearnsNothing() throws Exception {
        try (TwoClients c = new TwoClients(true)) {
            c.releaseDuringTheThirdAttempt(c.holder.tryAcquire("s").orElseThrow());
            assertThat(c.waiter.acquire("s", Duration.ofHours(1))).isPresent();
            assertThat(c.waiter.engine().forecasts.size()).isZero();
        }
    }
}
