package io.fencelock;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The sleep of one background thread that wakes at a planned time or when woken. A thread that
 * hands it new work with a time ({@link #wakeIfBefore}) wakes it only when that time comes before
 * the planned one, so that a busy client does not wake its background threads on every acquire.
 *
 * <p>The sleeper calls {@link #looking()} before it looks at its work and {@link #sleepUntil}
 * after: work published before a {@code wakeIfBefore} that finds a planned time is therefore seen
 * by the sleeper's next look at the latest at that time.
 */
final class PlannedWake {
    private static final long LOOKING = Long.MIN_VALUE;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private boolean wakeRequested;
    /** When the sleeper wakes by itself ({@link System#nanoTime()}), or {@link #LOOKING}. */
    private volatile long plannedNanos = LOOKING;

    /** The sleeper is about to look at its work: every {@code wakeIfBefore} wakes it until it sleeps. */
    void looking() {
        plannedNanos = LOOKING;
    }

    /** Wakes the sleeper unless it is planned to wake by itself no later than {@code atNanos}. */
    void wakeIfBefore(long atNanos) {
        long planned = plannedNanos;
        if (planned == LOOKING || atNanos - planned < 0) {
            wake();
        }
    }

    void wake() {
        lock.lock();
        try {
            wakeRequested = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sleeps until {@code atNanos}, a {@link #wake()} (also one that came since {@link #looking()}),
     * or {@code stop} is true when woken.
     *
     * @throws InterruptedException when the sleeper is interrupted
     */
    void sleepUntil(long atNanos, java.util.function.BooleanSupplier stop) throws InterruptedException {
        plannedNanos = atNanos;
        lock.lock();
        try {
            long left = atNanos - System.nanoTime();
            while (!wakeRequested && !stop.getAsBoolean() && left > 0) {
                left = wake.awaitNanos(left);
            }
            wakeRequested = false;
        } finally {
            lock.unlock();
        }
    }

    /** As {@link #sleepUntil}, {@code nanos} from now. */
    void sleepFor(long nanos, java.util.function.BooleanSupplier stop) throws InterruptedException {
        sleepUntil(System.nanoTime() + nanos, stop);
    }
}
