package io.fencelock.tck.history;

import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.Event.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Synthetic histories for checker tests. Times are given in milliseconds (stored as nanos), each
 * operation with its invoke and completion time; deadlines likewise.
 */
final class HistoryBuilder {
    private final List<Event> events = new ArrayList<>();
    private long nextOpId = 1;

    HistoryBuilder acquire(
            int process, String name, double invokeAt, double okAt, String leaseId, long token, double deadlineAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.ACQUIRE, name, null, 0, false, 0, invokeAt);
        add(process, op, Type.OK, Kind.ACQUIRE, name, leaseId, token, false, nanos(deadlineAt), okAt);
        return this;
    }

    HistoryBuilder acquireFails(int process, String name, double invokeAt, double failAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.ACQUIRE, name, null, 0, false, 0, invokeAt);
        add(process, op, Type.FAIL, Kind.ACQUIRE, name, null, 0, false, 0, failAt);
        return this;
    }

    /** An acquire of unknown outcome (say a timeout): it may hold, with a lease id nobody knows. */
    HistoryBuilder acquireUnknown(int process, String name, double invokeAt, double infoAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.ACQUIRE, name, null, 0, false, 0, invokeAt);
        add(process, op, Type.INFO, Kind.ACQUIRE, name, null, 0, false, 0, infoAt);
        return this;
    }

    HistoryBuilder renew(
            int process, String name, String leaseId, double invokeAt, double okAt, long token, double deadlineAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.RENEW, name, leaseId, 0, false, 0, invokeAt);
        add(process, op, Type.OK, Kind.RENEW, name, leaseId, token, false, nanos(deadlineAt), okAt);
        return this;
    }

    HistoryBuilder renewRejected(int process, String name, String leaseId, double invokeAt, double failAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.RENEW, name, leaseId, 0, false, 0, invokeAt);
        add(process, op, Type.FAIL, Kind.RENEW, name, leaseId, 0, false, 0, failAt);
        return this;
    }

    HistoryBuilder release(int process, String name, String leaseId, double invokeAt, double okAt, boolean freed) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.RELEASE, name, leaseId, 0, false, 0, invokeAt);
        add(process, op, Type.OK, Kind.RELEASE, name, leaseId, 0, freed, 0, okAt);
        return this;
    }

    HistoryBuilder releaseUnknown(int process, String name, String leaseId, double invokeAt, double infoAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.RELEASE, name, leaseId, 0, false, 0, invokeAt);
        add(process, op, Type.INFO, Kind.RELEASE, name, leaseId, 0, false, 0, infoAt);
        return this;
    }

    HistoryBuilder write(
            int process,
            String name,
            String leaseId,
            long token,
            boolean believedValid,
            double invokeAt,
            double okAt,
            boolean accepted) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.WRITE, name, leaseId, token, believedValid, 0, invokeAt);
        add(process, op, Type.OK, Kind.WRITE, name, leaseId, token, accepted, 0, okAt);
        return this;
    }

    HistoryBuilder lost(int process, String name, String leaseId, double at) {
        add(process, nextOpId++, Type.OK, Kind.LOST, name, leaseId, 0, false, 0, at);
        return this;
    }

    HistoryBuilder purge(int process, double invokeAt, double okAt) {
        long op = nextOpId++;
        add(process, op, Type.INVOKE, Kind.PURGE, null, null, 0, false, 0, invokeAt);
        add(process, op, Type.OK, Kind.PURGE, null, null, 0, false, 0, okAt);
        return this;
    }

    /** An invocation that never completed: the history was cut off. */
    HistoryBuilder invokeOnly(
            int process, Kind kind, String name, String leaseId, long token, boolean flag, double invokeAt) {
        add(process, nextOpId++, Type.INVOKE, kind, name, leaseId, token, flag, 0, invokeAt);
        return this;
    }

    /** The events in time order, as {@link History#events()} gives them. */
    List<Event> events() {
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(Event::timeNanos));
        return sorted;
    }

    private void add(
            int process,
            long op,
            Type type,
            Kind kind,
            String name,
            String leaseId,
            long token,
            boolean flag,
            long deadlineNanos,
            double atMillis) {
        events.add(
                new Event(process, op, type, kind, name, leaseId, token, flag, deadlineNanos, nanos(atMillis), null));
    }

    private static long nanos(double millis) {
        return Math.round(millis * 1_000_000);
    }
}
