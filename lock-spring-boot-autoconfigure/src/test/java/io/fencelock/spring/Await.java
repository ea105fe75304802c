package io.fencelock.spring;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition, bounded; fails with what was awaited. */
final class Await {
    private Await() {}

    static void until(String what, Duration bound, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + bound + ": " + what);
            }
            Thread.sleep(10); // polling interval of the check, not a wait for the outcome
        }
    }
}
