package io.fencelock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** A monotonic clock that moves only when the test moves it (from an odd start, to catch absolute uses). */
final class FakeClock implements LongSupplier {
    private final AtomicLong now =
            new AtomicLong(Long.MAX_VALUE - Duration.ofDays(1).toNanos());

    @Override
    public long getAsLong() {
        return now.get();
    }

    void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
