package io.fencelock.bench;

import java.time.Duration;

/** Waiting without a release signal the simplest way: try again at once until the wait runs out. */
final class BusyRetry {
    private BusyRetry() {}

    @FunctionalInterface
    interface Attempt {
        LockContender.Held once() throws Exception;
    }

    static LockContender.Held until(Duration wait, Attempt attempt) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        do {
            LockContender.Held held = attempt.once();
            if (held != null) {
                return held;
            }
        } while (System.nanoTime() - deadline < 0 && !Thread.currentThread().isInterrupted());
        return null;
    }
}
