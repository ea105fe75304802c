package io.fencelock.tck.history;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A thread-safe, append-only recording of events. Each event is stamped inside the recorder's
 * lock, so the list order is the time order.
 */
public final class History {
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Event> events = new ArrayList<>();
    private final AtomicLong nextOpId = new AtomicLong(1);
    private final Consumer<Event> sink;

    public History() {
        this(event -> {});
    }

    /** A history that also hands every recorded event to {@code sink}, in order (e.g. to stream it to another process). */
    public History(Consumer<Event> sink) {
        this.sink = sink;
    }

    /** A new operation id. */
    public long newOpId() {
        return nextOpId.getAndIncrement();
    }

    /** Records an event stamped now, and returns it. */
    public Event record(
            int process,
            long opId,
            Event.Type type,
            Event.Kind kind,
            String name,
            String leaseId,
            long token,
            boolean flag,
            long deadlineNanos,
            String detail) {
        lock.lock();
        try {
            Event e = new Event(
                    process, opId, type, kind, name, leaseId, token, flag, deadlineNanos, System.nanoTime(), detail);
            events.add(e);
            sink.accept(e);
            return e;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Records an event that happened at {@code atNanos} (in the past, e.g. when a watchdog renewal
     * was sent), placed in time order among the events recorded so far.
     */
    public Event recordAt(
            long atNanos,
            int process,
            long opId,
            Event.Type type,
            Event.Kind kind,
            String name,
            String leaseId,
            long token,
            boolean flag,
            long deadlineNanos,
            String detail) {
        lock.lock();
        try {
            Event e = new Event(process, opId, type, kind, name, leaseId, token, flag, deadlineNanos, atNanos, detail);
            int at = events.size();
            while (at > 0 && events.get(at - 1).timeNanos() - atNanos > 0) {
                at--;
            }
            events.add(at, e);
            sink.accept(e);
            return e;
        } finally {
            lock.unlock();
        }
    }

    /** Adds a ready-made event (for synthetic histories in tests); keeps the list sorted by time. */
    public void add(Event e) {
        lock.lock();
        try {
            events.add(e);
            events.sort(Comparator.comparingLong(Event::timeNanos));
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot of the events in time order. */
    public List<Event> events() {
        lock.lock();
        try {
            return Collections.unmodifiableList(new ArrayList<>(events));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        long t0 = events().isEmpty() ? 0 : events().get(0).timeNanos();
        for (Event e : events()) {
            sb.append(new Event(
                            e.process(),
                            e.opId(),
                            e.type(),
                            e.kind(),
                            e.name(),
                            e.leaseId(),
                            e.token(),
                            e.flag(),
                            e.deadlineNanos() == 0 ? 0 : e.deadlineNanos() - t0,
                            e.timeNanos() - t0,
                            e.detail()))
                    .append('\n');
        }
        return sb.toString();
    }
}
