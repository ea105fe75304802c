package io.fencelock.bench;

import io.fencelock.LockBackendException;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * Waiting without a release signal the simplest way: try again at once until the wait runs out. A
 * failure the backend calls retryable (a conditional write that lost a race, a moment's outage) is
 * tried again like a refusal, as any caller of the primitive would.
 */
final class BusyRetry {
    private BusyRetry() {}

    @FunctionalInterface
    interface Attempt {
        LockContender.Held once() throws Exception;
    }

    static LockContender.Held until(Duration wait, Attempt attempt) throws Exception {
        return until(wait, new LongAdder(), attempt);
    }

    /** As {@link #until(Duration, Attempt)}, adding one to {@code attempts} for every attempt made. */
    static LockContender.Held until(Duration wait, LongAdder attempts, Attempt attempt) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        do {
            attempts.increment();
            try {
                LockContender.Held held = attempt.once();
                if (held != null) {
                    return held;
                }
            } catch (LockBackendException e) {
                if (!e.isRetryable()) {
                    throw e;
                }
            }
        } while (System.nanoTime() - deadline < 0 && !Thread.currentThread().isInterrupted());
        return null;
    }
}
