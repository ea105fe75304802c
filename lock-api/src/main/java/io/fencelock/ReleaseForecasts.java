package io.fencelock;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * When a waiter on a backend without a release signal should poll next: one client's forecasts, per
 * lock name, of how long after a waiter's first refusal the name is released, and the pause that
 * follows from them.
 *
 * <p>A forecast is a running estimate of the spans this client's waits observed (first refusal to
 * release). A release by a holder of the same client is dated by its signal; otherwise a wait only
 * knows that the release came between its last refusal and its grant, so it reports the middle of
 * that interval and the interval's width. A Kalman-style update weighs an observation by
 * that width against the forecast's own uncertainty: a precise observation (a wait that polled fast
 * near the release) outweighs a forecast built from a coarse one (a wait that backed off), and the
 * weight of a new span never falls under a quarter, so a forecast follows a name whose holds
 * change within a few waits and one odd wait moves it only part of the way. Only the {@link #CAPACITY}
 * most recently used names are kept: memory stays bounded however many names a client waits for.
 * It is read and written only by waits that met a holder, never on an uncontended acquire.
 */
final class ReleaseForecasts {
    /** The most names remembered; an evicted name's next wait starts without a forecast. */
    static final int CAPACITY = 1024;

    /** No forecast (yet) for a name. */
    static final long NONE = -1;

    /** The least weight of one new span: a few waits follow a change, one odd wait moves a forecast little. */
    private static final double LEAST_GAIN = 0.25;

    private static final long FLOOR_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, double[]> spans = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
            return size() > CAPACITY;
        }
    };

    /** The forecast span of {@code name} in nanoseconds, or {@link #NONE}. */
    long expectedSpanNanos(String name) {
        lock.lock();
        try {
            double[] forecast = spans.get(name);
            return forecast == null ? NONE : Math.round(forecast[0]);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A wait for {@code name} saw it released {@code spanNanos} after its first refusal, give or take
     * half of {@code widthNanos} (the time between its last refusal and its grant).
     */
    void observed(String name, long spanNanos, long widthNanos) {
        double span = Math.max(0, spanNanos);
        double width = Math.max(0, widthNanos);
        double variance = width * width / 12; // a release anywhere in the interval, equally likely
        lock.lock();
        try {
            double[] forecast = spans.get(name);
            if (forecast == null) {
                spans.put(name, new double[] {span, variance});
                return;
            }
            double sum = forecast[1] + variance;
            double gain = sum > 0 ? Math.max(LEAST_GAIN, forecast[1] / sum) : LEAST_GAIN;
            forecast[0] += gain * (span - forecast[0]);
            forecast[1] = (1 - gain) * (1 - gain) * forecast[1] + gain * gain * variance;
        } finally {
            lock.unlock();
        }
    }

    /** How many names have a forecast. */
    int size() {
        lock.lock();
        try {
            return spans.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The quickest poll: a quarter of the initial poll interval (1.25 ms by default), never under
     * 100 µs, so a waiter near a likely release answers within about one round trip without spinning.
     */
    static long fastPollNanos(LockOptions options) {
        return Math.max(FLOOR_NANOS, options.initialPollInterval().toNanos() / 4);
    }

    /**
     * The pause before the next attempt of a waiter without a release signal; pure, for the tests.
     *
     * <p>Without a forecast, the jittered exponential backoff from the initial to the maximum poll
     * interval. With one, the pause is at most the distance to the forecast release, before it and
     * after it, and at least the fast poll: the waiter closes in on the likely moment in a few long
     * pauses, polls fast around it, and backs off again as it passes, so a hand-off is late by about
     * the forecast's error and a wait costs a few attempts more than the forecast's accuracy needs.
     * Never past the holder's known expiry, never over the maximum poll interval.
     *
     * @param misses          refusals since the wait began or since the last local release signal
     * @param sinceFirstMiss  nanoseconds since the wait's first refusal
     * @param expectedSpan    the name's forecast span, or {@link #NONE}
     * @param holderRemaining the holder's remaining time from the last refusal, or {@code null}
     * @param jitter          a uniform draw in [0, 1]: the pause lies in the upper half of its ceiling
     */
    static long pauseNanos(
            LockOptions options,
            int misses,
            long sinceFirstMiss,
            long expectedSpan,
            Duration holderRemaining,
            double jitter) {
        long max = options.maxPollInterval().toNanos();
        long ceiling;
        if (expectedSpan == NONE) {
            ceiling = options.initialPollInterval().toNanos() << Math.min(misses, 20);
            if (ceiling <= 0 || ceiling > max) {
                ceiling = max;
            }
        } else {
            long distance = Math.abs(expectedSpan - sinceFirstMiss);
            ceiling = Math.min(max, Math.max(fastPollNanos(options), distance));
        }
        long pause = ceiling / 2 + (long) (jitter * (ceiling - ceiling / 2));
        if (holderRemaining != null && !holderRemaining.isNegative()) {
            pause = Math.min(pause, holderRemaining.toNanos() + TimeUnit.MILLISECONDS.toNanos(1));
        }
        return Math.max(pause, FLOOR_NANOS);
    }
}
