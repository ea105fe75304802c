package io.fencelock.mysql;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;

/**
 * The server's UTC clock as seen from this JVM: an offset to the local wall clock, measured from
 * answers that carry the server's time (the start-up check, inspect, list, renewals). It is used
 * for one thing only, reporting the expiry of a grant, because the acquire statement returns just
 * the token. Nothing is ever decided by it: expiry is decided in SQL by {@code UTC_TIMESTAMP(6)}.
 */
final class ServerClock {
    /** A sample this old gives way to any newer one (the clocks drift, the local one may be stepped). */
    private static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** The server read its clock somewhere within {@code roundTripMicros}; the offset assumes the middle. */
    private record Sample(long offsetMicros, long roundTripMicros, long takenNanos) {}

    private volatile Sample best;

    /**
     * Takes {@code serverTime}, read by the server during a call sent at {@code sentAt} and
     * answered at {@code receivedAt} (both local wall-clock times). The sample with the shortest
     * round trip of the last minute wins, since it pins the server's reading down best.
     */
    void observe(Instant sentAt, Instant serverTime, Instant receivedAt) {
        long roundTrip = ChronoUnit.MICROS.between(sentAt, receivedAt);
        if (serverTime == null || roundTrip < 0) {
            return;
        }
        long now = System.nanoTime();
        Sample current = best;
        if (current == null
                || roundTrip <= current.roundTripMicros + current.roundTripMicros / 2 + 100
                || now - current.takenNanos > MAX_AGE_NANOS) {
            best = new Sample(
                    ChronoUnit.MICROS.between(sentAt.plus(roundTrip / 2, ChronoUnit.MICROS), serverTime),
                    roundTrip,
                    now);
        }
    }

    /** The server's time now, to within about half a round trip (plus any wall-clock step since the last sample). */
    Instant now() {
        Sample current = best;
        Instant local = Instant.now();
        return current == null ? local : local.plus(Duration.of(current.offsetMicros, ChronoUnit.MICROS));
    }
}
