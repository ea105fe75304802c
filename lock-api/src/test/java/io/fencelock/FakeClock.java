package io.fencelock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/** A monotonic clock that moves only when the test moves it (from an odd start, to catch absolute uses). */
final class FakeClock implements LongSupplier {
    private final AtomicLong now =
            new AtomicLong(Long.MAX_VALUE - Duration.ofDays(1).toNanos());

    private final AtomicReference<Thread> hookedReader = new AtomicReference<>();
    private volatile Runnable onHookedRead = () -> {};

    @Override
    public long getAsLong() {
        Thread reader = hookedReader.get();
        if (reader == Thread.currentThread() && hookedReader.compareAndSet(reader, null)) {
            onHookedRead.run();
        }
        return now.get();
    }

    /** Runs {@code hook} on {@code reader}'s next read of the clock, once: stops that thread at a known step. */
    void onNextReadBy(Thread reader, Runnable hook) {
        onHookedRead = hook;
        hookedReader.set(reader);
    }

    void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }
}
