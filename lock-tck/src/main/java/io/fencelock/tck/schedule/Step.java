package io.fencelock.tck.schedule;

import java.util.Objects;

/**
 * One step of a process script.
 *
 * @param action what to do
 * @param lock   index into the schedule's lock names (0 where the action uses no lock)
 * @param millis the wait of {@link Action#ACQUIRE}, the sleep of {@link Action#HOLD} and
 *               {@link Action#PAUSE}; 0 for the other actions
 */
public record Step(Action action, int lock, long millis) {

    public Step {
        Objects.requireNonNull(action, "action");
        if (lock < 0) {
            throw new IllegalArgumentException("lock index must be >= 0: " + lock);
        }
        if (millis < 0) {
            throw new IllegalArgumentException("millis must be >= 0: " + millis);
        }
    }

    /** A step whose action takes no time argument. */
    public static Step of(Action action, int lock) {
        return new Step(action, lock, 0);
    }

    public static Step acquire(int lock, long waitMillis) {
        return new Step(Action.ACQUIRE, lock, waitMillis);
    }

    public static Step hold(int lock, long millis) {
        return new Step(Action.HOLD, lock, millis);
    }

    public static Step pause(long millis) {
        return new Step(Action.PAUSE, 0, millis);
    }

    public static Step purge() {
        return new Step(Action.PURGE, 0, 0);
    }

    public Step withLock(int newLock) {
        return new Step(action, newLock, millis);
    }

    public Step withMillis(long newMillis) {
        return new Step(action, lock, newMillis);
    }

    /** Like {@code ACQUIRE(L0, wait=300ms)}, {@code HOLD(L1, 250ms)}, {@code PAUSE(40ms)}, {@code WRITE(L0)}. */
    @Override
    public String toString() {
        return switch (action) {
            case ACQUIRE -> "ACQUIRE(L" + lock + ", wait=" + millis + "ms)";
            case HOLD -> "HOLD(L" + lock + ", " + millis + "ms)";
            case PAUSE -> "PAUSE(" + millis + "ms)";
            case PURGE -> "PURGE";
            default -> action + "(L" + lock + ")";
        };
    }
}
