package io.fencelock.tck.history;

import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.Event.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A history regrouped for judging: events paired into operations, the grants (ACQUIRE OK and
 * RENEW OK) of each lock name, and what is known of each lease, including its certain hold.
 * Built once per check; pure and tolerant of cut-off or malformed histories.
 */
final class HistoryModel {

    /** A lease is identified by its name and id (ids are fresh per acquisition; the name guards synthetic reuse). */
    record LeaseKey(String name, String leaseId) {}

    /**
     * An invocation and its completion. Either may be missing: a LOST event (and any completion
     * whose INVOKE was not recorded) stands alone; an INVOKE without a completion (history cut
     * off) counts as {@link Type#INFO}.
     */
    record Operation(Event invoke, Event completion) {

        Event first() {
            return invoke != null ? invoke : completion;
        }

        Kind kind() {
            return first().kind();
        }

        int process() {
            return first().process();
        }

        /** OK, FAIL or INFO; an operation that never completed is INFO. */
        Type outcome() {
            return completion == null ? Type.INFO : completion.type();
        }

        boolean isOk() {
            return outcome() == Type.OK;
        }

        /** Completed OK with flag set: a release that freed, a write that was accepted. */
        boolean isOkWithFlag() {
            return isOk() && completion.flag();
        }

        long invokeTime() {
            return first().timeNanos();
        }

        /** When it completed; {@link Long#MAX_VALUE} if it never did (it may still be taking effect). */
        long completionTime() {
            return completion == null ? Long.MAX_VALUE : completion.timeNanos();
        }

        String name() {
            if (invoke != null && invoke.name() != null) {
                return invoke.name();
            }
            return completion == null ? null : completion.name();
        }

        /** The invocation's lease id, or the completion's (an ACQUIRE learns its id only when it succeeds). */
        String leaseId() {
            if (invoke != null && invoke.leaseId() != null) {
                return invoke.leaseId();
            }
            return completion == null ? null : completion.leaseId();
        }

        LeaseKey leaseKey() {
            return new LeaseKey(name(), leaseId());
        }

        List<Event> events() {
            List<Event> events = new ArrayList<>(2);
            if (invoke != null) {
                events.add(invoke);
            }
            if (completion != null) {
                events.add(completion);
            }
            return events;
        }
    }

    /** A successful ACQUIRE or RENEW: a token handed to a lease. */
    record Grant(Operation operation, LeaseKey lease, long token, long deadlineNanos) {

        boolean isAcquire() {
            return operation.kind() == Kind.ACQUIRE;
        }

        long invokeTime() {
            return operation.invokeTime();
        }

        long okTime() {
            return operation.completionTime();
        }

        Event invokeEvent() {
            return operation.first();
        }

        Event okEvent() {
            return operation.completion();
        }
    }

    /**
     * The interval in which a lease certainly held its lock: from its ACQUIRE OK to the first of
     * its first RELEASE invocation, its LOST signal, its local validity deadline and the end of
     * the history. {@code evidence} holds the events that fix both ends.
     */
    record CertainHold(long start, long end, String endedBy, List<Event> evidence) {

        boolean isEmpty() {
            return end <= start;
        }

        /** Strict overlap: touching ends do not count. */
        boolean overlaps(CertainHold other) {
            return start < other.end && other.start < end;
        }

        /** Whether [from, to] lies inside this hold. */
        boolean covers(long from, long to) {
            return start <= from && to <= end;
        }

        @Override
        public String toString() {
            return "[" + HistoryChecker.at(start) + ", " + HistoryChecker.at(end) + "] (ended by " + endedBy + ")";
        }
    }

    /** What the history says about one lease. */
    static final class LeaseRecord {
        final LeaseKey key;
        Operation acquire; // its ACQUIRE OK, if recorded
        final List<Grant> grants = new ArrayList<>(); // acquire and renews, OK time order
        final List<Operation> releases = new ArrayList<>(); // every RELEASE, invoke order
        Event lost; // the first LOST signal
        CertainHold hold; // null without an ACQUIRE OK

        LeaseRecord(LeaseKey key) {
            this.key = key;
        }

        /** The process that acquired it, or that used it if its acquire was not recorded. */
        int process() {
            if (acquire != null) {
                return acquire.process();
            }
            if (!grants.isEmpty()) {
                return grants.get(0).operation().process();
            }
            return releases.isEmpty() ? lost.process() : releases.get(0).process();
        }

        long acquireOkTime() {
            return acquire.completionTime();
        }

        /** The latest grant completed strictly before {@code time}. */
        Optional<Grant> lastGrantBefore(long time) {
            Grant last = null;
            for (Grant grant : grants) {
                if (grant.okTime() < time) {
                    last = grant;
                }
            }
            return Optional.ofNullable(last);
        }

        Optional<Grant> lastGrant() {
            return grants.isEmpty() ? Optional.empty() : Optional.of(grants.get(grants.size() - 1));
        }

        /** The first RELEASE, whatever its outcome: once invoked, the holder no longer counts on the lock. */
        Optional<Operation> firstRelease() {
            return releases.isEmpty() ? Optional.empty() : Optional.of(releases.get(0));
        }

        String describe() {
            return "lease " + HistoryChecker.shortId(key.leaseId()) + " (p" + process() + ")";
        }
    }

    final List<Event> events;
    final long lastEventTime;
    final List<Operation> operations;
    private final Map<String, List<Grant>> grantsByName = new LinkedHashMap<>();
    private final Map<LeaseKey, LeaseRecord> leases = new LinkedHashMap<>();

    private HistoryModel(List<Event> events) {
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(Event::timeNanos)); // stable: keeps the recorder's order on ties
        this.events = List.copyOf(sorted);
        this.lastEventTime =
                sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1).timeNanos();
        this.operations = pair(sorted);
        indexLeases();
        operations.stream()
                .filter(op -> op.kind() == Kind.ACQUIRE || op.kind() == Kind.RENEW)
                .filter(Operation::isOk)
                .forEach(this::addGrant);
        grantsByName.values().forEach(grants -> grants.sort(Comparator.comparingLong(Grant::okTime)));
        leases.values().forEach(lease -> lease.grants.sort(Comparator.comparingLong(Grant::okTime)));
        leases.values().forEach(this::computeHold);
    }

    static HistoryModel of(List<Event> events) {
        return new HistoryModel(events);
    }

    /** Pairs each INVOKE with the next completion of the same opId; leftovers stand alone. */
    private static List<Operation> pair(List<Event> events) {
        List<Operation> operations = new ArrayList<>();
        Map<Long, Event> openInvokes = new HashMap<>();
        for (Event event : events) {
            if (event.kind() == Kind.LOST) {
                operations.add(new Operation(null, event));
            } else if (event.type() == Type.INVOKE) {
                Event unfinished = openInvokes.put(event.opId(), event);
                if (unfinished != null) { // a reused opId: the earlier invocation never completed
                    operations.add(new Operation(unfinished, null));
                }
            } else {
                operations.add(new Operation(openInvokes.remove(event.opId()), event));
            }
        }
        openInvokes.values().forEach(invoke -> operations.add(new Operation(invoke, null)));
        operations.sort(Comparator.comparingLong(Operation::invokeTime));
        return List.copyOf(operations);
    }

    private void indexLeases() {
        for (Operation op : operations) {
            switch (op.kind()) {
                case ACQUIRE -> {
                    if (op.isOk() && op.leaseId() != null) {
                        LeaseRecord lease = lease(op.leaseKey());
                        if (lease.acquire == null) {
                            lease.acquire = op;
                        }
                    }
                }
                case RELEASE -> {
                    if (op.leaseId() != null) {
                        lease(op.leaseKey()).releases.add(op);
                    }
                }
                case LOST -> {
                    if (op.leaseId() != null) {
                        LeaseRecord lease = lease(op.leaseKey());
                        if (lease.lost == null) {
                            lease.lost = op.completion();
                        }
                    }
                }
                default -> {
                    // RENEW grants are added with the acquires; WRITE and PURGE carry no lease state
                }
            }
        }
    }

    private void addGrant(Operation op) {
        if (op.name() == null || op.leaseId() == null) {
            return; // malformed: nothing to attribute it to
        }
        Grant grant = new Grant(
                op, op.leaseKey(), op.completion().token(), op.completion().deadlineNanos());
        grantsByName.computeIfAbsent(op.name(), n -> new ArrayList<>()).add(grant);
        lease(grant.lease()).grants.add(grant);
    }

    private LeaseRecord lease(LeaseKey key) {
        return leases.computeIfAbsent(key, LeaseRecord::new);
    }

    /**
     * The certain hold of a lease. A renew extends the deadline only if it completed while the
     * lease was still valid: one that arrives later cannot make the gap before it a hold.
     * A deadline of 0 means none was recorded and does not bound the hold.
     */
    private void computeHold(LeaseRecord lease) {
        if (lease.acquire == null) {
            return;
        }
        Event acquired = lease.acquire.completion();
        long deadline = deadlineOrUnbounded(acquired.deadlineNanos());
        Event deadlineSetBy = acquired;
        for (Grant grant : lease.grants) {
            if (!grant.isAcquire() && grant.okTime() > acquired.timeNanos() && grant.okTime() < deadline) {
                long extended = deadlineOrUnbounded(grant.deadlineNanos());
                if (extended > deadline) {
                    deadline = extended;
                    deadlineSetBy = grant.okEvent();
                }
            }
        }

        long end = deadline;
        String endedBy = "local deadline";
        Event endEvent = deadlineSetBy == acquired ? null : deadlineSetBy;
        Optional<Operation> release = lease.firstRelease();
        if (release.isPresent() && release.get().invokeTime() <= end) {
            end = release.get().invokeTime();
            endedBy = "release";
            endEvent = release.get().first();
        }
        if (lease.lost != null && lease.lost.timeNanos() < end) {
            end = lease.lost.timeNanos();
            endedBy = "lost signal";
            endEvent = lease.lost;
        }
        if (lastEventTime < end) {
            end = lastEventTime;
            endedBy = "end of history";
            endEvent = null;
        }
        List<Event> evidence = new ArrayList<>();
        evidence.add(acquired);
        if (endEvent != null) {
            evidence.add(endEvent);
        }
        lease.hold = new CertainHold(acquired.timeNanos(), end, endedBy, List.copyOf(evidence));
    }

    private static long deadlineOrUnbounded(long deadlineNanos) {
        return deadlineNanos == 0 ? Long.MAX_VALUE : deadlineNanos;
    }

    /** The lock names that have grants, in order of first grant. */
    List<String> grantedNames() {
        return List.copyOf(grantsByName.keySet());
    }

    /** Grants on {@code name}, in OK time order. */
    List<Grant> grantsOn(String name) {
        return grantsByName.getOrDefault(name, List.of());
    }

    /** Every lease with a recorded ACQUIRE OK, in order of acquisition. */
    List<LeaseRecord> acquiredLeases() {
        return leases.values().stream()
                .filter(lease -> lease.acquire != null)
                .sorted(Comparator.comparingLong(LeaseRecord::acquireOkTime))
                .toList();
    }

    List<LeaseRecord> acquiredLeasesOn(String name) {
        return acquiredLeases().stream()
                .filter(lease -> lease.key.name().equals(name))
                .toList();
    }

    /** Leases known by any event (even without their ACQUIRE OK). */
    List<LeaseRecord> allLeases() {
        return List.copyOf(leases.values());
    }

    Optional<LeaseRecord> leaseOf(Operation op) {
        if (op.name() == null || op.leaseId() == null) {
            return Optional.empty();
        }
        return Optional.ofNullable(leases.get(op.leaseKey()));
    }

    List<Operation> operations(Kind kind) {
        return operations.stream().filter(op -> op.kind() == kind).toList();
    }
}
