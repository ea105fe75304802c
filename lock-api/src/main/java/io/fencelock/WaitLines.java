package io.fencelock;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One client's local queues of waiting acquires, one per lock name, first come first served.
 *
 * <p>Only the waiter at the head of a name's line talks to the backend: it subscribes to the
 * release signal, makes the attempts and sleeps between them. The others sleep until they reach
 * the head or their wait runs out, so however many threads wait for one name, the client has at
 * most one attempt in flight for it and holds at most one pooled connection for it. A release by a
 * holder in the same client wakes the head at once; the head still needs its own grant and token
 * from the backend.
 */
final class WaitLines {
    private final ConcurrentHashMap<String, ArrayDeque<Waiter>> lines = new ConcurrentHashMap<>();

    /** A waiting acquire: woken when it reaches the head of its line, and, as head, on a release. */
    static final class Waiter {
        private final String name;
        private final Semaphore signal = new Semaphore(0);
        private volatile boolean head;

        private Waiter(String name) {
            this.name = name;
        }

        boolean isHead() {
            return head;
        }

        /** Wakes this waiter (it is at the head, or a release happened while it is). */
        void signal() {
            signal.release();
        }

        /** Forgets signals that came before an attempt: the attempt sees their effect. */
        void forgetSignals() {
            signal.drainPermits();
        }

        /**
         * Sleeps up to {@code nanos} or until signalled.
         *
         * @return whether it was signalled
         */
        boolean await(long nanos) throws InterruptedException {
            return nanos > 0 && signal.tryAcquire(nanos, TimeUnit.NANOSECONDS);
        }
    }

    /** Puts a new waiter at the end of {@code name}'s line (at its head when the line was empty). */
    Waiter join(String name) {
        Waiter waiter = new Waiter(name);
        lines.compute(name, (n, line) -> {
            ArrayDeque<Waiter> l = line == null ? new ArrayDeque<>() : line;
            l.addLast(waiter);
            if (l.size() == 1) {
                waiter.head = true;
            }
            return l;
        });
        return waiter;
    }

    /** Takes {@code waiter} out of its line; when it was the head, the next in line becomes head and is woken. */
    void leave(Waiter waiter) {
        lines.computeIfPresent(waiter.name, (n, line) -> {
            boolean wasHead = line.peekFirst() == waiter;
            line.remove(waiter);
            Waiter next = line.peekFirst();
            if (wasHead && next != null) {
                next.head = true;
                next.signal();
            }
            return line.isEmpty() ? null : line;
        });
    }

    /** Wakes the head of {@code name}'s line, if anyone waits: a holder of this client released it. */
    void released(String name) {
        if (lines.isEmpty()) {
            return; // the usual case: nobody waits anywhere, no map lookup beyond this
        }
        lines.computeIfPresent(name, (n, line) -> {
            Waiter head = line.peekFirst();
            if (head != null) {
                head.signal();
            }
            return line;
        });
    }

    /** How many acquires of this client wait for {@code name} (the head included). */
    int waiting(String name) {
        int[] size = new int[1];
        lines.computeIfPresent(name, (n, line) -> {
            size[0] = line.size();
            return line;
        });
        return size[0];
    }
}
