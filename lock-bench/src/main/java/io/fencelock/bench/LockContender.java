package io.fencelock.bench;

import java.time.Duration;

/**
 * One lock implementation as the workloads see it: fencelock, the backend's raw primitive, or a peer
 * library. An instance is one client (its own connections), as one process would open it; the
 * workloads open a second instance where two processes are needed (hand-off, takeover).
 */
public interface LockContender extends AutoCloseable {

    /**
     * Takes {@code name}, waiting up to {@code wait} the way this implementation waits (wake-up
     * signal, polling or busy retry). Returns null when the wait ran out.
     */
    Held acquire(String name, Duration wait) throws Exception;

    /** What {@link #acquireAttempts()} answers where the bench cannot count them. */
    long NOT_COUNTED = -1;

    /**
     * Attempts to take a lock that this client has sent to its backend so far, the granting one
     * included (what a waiter costs the server), or {@link #NOT_COUNTED} where the library waits
     * inside itself and the bench cannot see its attempts.
     */
    default long acquireAttempts() {
        return NOT_COUNTED;
    }

    /**
     * Nanoseconds the calling thread has spent inside the backend's calls so far (fencelock and the provider
     * alone, through {@link CallTimedBackend}), or {@link #NOT_COUNTED}: the latency workload subtracts it from
     * each cycle to show the time spent around the round trips.
     */
    default long nanosInBackendCalls() {
        return NOT_COUNTED;
    }

    @Override
    void close() throws Exception;

    /** A held lock. */
    interface Held {
        void release() throws Exception;
    }

    /**
     * How to open instances of one implementation on one backend.
     *
     * @param label    what the report calls it, e.g. "fencelock", "raw primitive", "ShedLock (JDBC)"
     * @param kind     fencelock, raw or peer: ratios are taken against fencelock
     * @param waitsBy  how a waiter learns that the lock is free, for the hand-off table
     */
    record Factory(String label, Kind kind, String waitsBy, Opener opener, Opener countingOpener) {
        public Factory(String label, Kind kind, String waitsBy, Opener opener) {
            this(label, kind, waitsBy, opener, opener);
        }

        public LockContender open() throws Exception {
            return opener.open();
        }

        /** An instance that counts its {@link LockContender#acquireAttempts()}, where counting costs something. */
        public LockContender openCounting() throws Exception {
            return countingOpener.open();
        }
    }

    enum Kind {
        FENCELOCK,
        RAW,
        PEER
    }

    @FunctionalInterface
    interface Opener {
        LockContender open() throws Exception;
    }
}
