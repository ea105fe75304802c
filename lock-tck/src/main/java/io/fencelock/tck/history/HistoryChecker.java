package io.fencelock.tck.history;

import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.HistoryModel.CertainHold;
import io.fencelock.tck.history.HistoryModel.Grant;
import io.fencelock.tck.history.HistoryModel.LeaseRecord;
import io.fencelock.tck.history.HistoryModel.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * Judges a recorded history against the safety properties of the lock contract (docs/design.md,
 * "Semantics"). Pure: no I/O, no clock; the same events always give the same verdict.
 *
 * <p>Only what certainly happened is judged. An operation that ended {@link Event.Type#INFO}, or
 * never completed because the history was cut off, may or may not have taken effect: an ACQUIRE
 * of unknown outcome gives no hold (its lease id is unknown), a RELEASE of unknown outcome ends
 * its lease's hold at its invocation, and unknown WRITEs, RENEWs and RELEASEs are never blamed.
 *
 * <p>Each property has its own method so a test can ask for just one; {@link #check} runs all.
 * The property names are a contract: they appear as {@link Violation#property()}.
 */
public final class HistoryChecker {

    public static final String CERTAIN_HOLDS_NEVER_OVERLAP = "certainHoldsNeverOverlap";
    public static final String TOKENS_RESPECT_REAL_TIME_ORDER = "tokensRespectRealTimeOrder";
    public static final String NEW_HOLDER_EXCEEDS_ALL_PRIOR_TOKENS = "newHolderExceedsAllPriorTokens";
    public static final String FENCED_RESOURCE_REJECTS_STALE_WRITERS = "fencedResourceRejectsStaleWriters";
    public static final String RELEASE_IS_OWNER_CHECKED = "releaseIsOwnerChecked";
    public static final String RELEASE_IS_IDEMPOTENT = "releaseIsIdempotent";
    public static final String RENEW_AFTER_EXPIRY_IS_REJECTED = "renewAfterExpiryIsRejected";

    /** The properties {@link #check} judges, in the order it reports them. */
    public static final List<String> PROPERTIES = List.of(
            CERTAIN_HOLDS_NEVER_OVERLAP,
            TOKENS_RESPECT_REAL_TIME_ORDER,
            NEW_HOLDER_EXCEEDS_ALL_PRIOR_TOKENS,
            FENCED_RESOURCE_REJECTS_STALE_WRITERS,
            RELEASE_IS_OWNER_CHECKED,
            RELEASE_IS_IDEMPOTENT,
            RENEW_AFTER_EXPIRY_IS_REJECTED);

    private static final List<Function<HistoryModel, List<Violation>>> CHECKS = List.of(
            HistoryChecker::certainHoldsNeverOverlap,
            HistoryChecker::tokensRespectRealTimeOrder,
            HistoryChecker::newHolderExceedsAllPriorTokens,
            HistoryChecker::fencedResourceRejectsStaleWriters,
            HistoryChecker::releaseIsOwnerChecked,
            HistoryChecker::releaseIsIdempotent,
            HistoryChecker::renewAfterExpiryIsRejected);

    private HistoryChecker() {}

    /** Every violation of every property, grouped by property in the order of {@link #PROPERTIES}. */
    public static List<Violation> check(List<Event> events) {
        HistoryModel history = HistoryModel.of(events);
        List<Violation> violations = new ArrayList<>();
        CHECKS.forEach(check -> violations.addAll(check.apply(history)));
        return List.copyOf(violations);
    }

    /**
     * Two different leases on one name never both certainly hold it. A lease's certain hold runs
     * from its ACQUIRE OK to the earliest of: its first RELEASE invocation, its LOST signal, its
     * local validity deadline (extended by each RENEW OK that arrived before the current deadline)
     * and the end of the history.
     */
    public static List<Violation> certainHoldsNeverOverlap(List<Event> events) {
        return certainHoldsNeverOverlap(HistoryModel.of(events));
    }

    /**
     * For one name, a grant (ACQUIRE OK or RENEW OK) invoked after a grant of a different lease
     * completed carries a greater token; grants of one lease, each invoked after the previous
     * completed, never carry a smaller token.
     */
    public static List<Violation> tokensRespectRealTimeOrder(List<Event> events) {
        return tokensRespectRealTimeOrder(HistoryModel.of(events));
    }

    /** Each new holder's token exceeds every token granted on its name before it asked. */
    public static List<Violation> newHolderExceedsAllPriorTokens(List<Event> events) {
        return newHolderExceedsAllPriorTokens(HistoryModel.of(events));
    }

    /**
     * A fenced resource (accepting a token iff it is at least the highest accepted) never rejects a
     * write made wholly inside its lease's certain hold by a writer that believed its lease valid,
     * and never accepts a write of a lease after a newer lease's write, when the newer lease was
     * acquired after the older one's last grant.
     */
    public static List<Violation> fencedResourceRejectsStaleWriters(List<Event> events) {
        return fencedResourceRejectsStaleWriters(HistoryModel.of(events));
    }

    /** A release that reports it freed the lock was made by the lease that still held it. */
    public static List<Violation> releaseIsOwnerChecked(List<Event> events) {
        return releaseIsOwnerChecked(HistoryModel.of(events));
    }

    /** A lease frees its lock at most once: a release after a successful release reports nothing freed. */
    public static List<Violation> releaseIsIdempotent(List<Event> events) {
        return releaseIsIdempotent(HistoryModel.of(events));
    }

    /**
     * A renew succeeds only for a lease still holding: not after another lease acquired the name
     * since the renewing lease's previous grant, and not after the lease was lost or released.
     */
    public static List<Violation> renewAfterExpiryIsRejected(List<Event> events) {
        return renewAfterExpiryIsRejected(HistoryModel.of(events));
    }

    private static List<Violation> certainHoldsNeverOverlap(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        List<LeaseRecord> leases = history.acquiredLeases().stream()
                .filter(lease -> !lease.hold.isEmpty())
                .toList();
        for (int i = 0; i < leases.size(); i++) {
            for (int j = i + 1; j < leases.size(); j++) {
                LeaseRecord first = leases.get(i);
                LeaseRecord second = leases.get(j);
                if (first.key.name().equals(second.key.name()) && first.hold.overlaps(second.hold)) {
                    List<Event> evidence = new ArrayList<>(first.hold.evidence());
                    evidence.addAll(second.hold.evidence());
                    violations.add(new Violation(
                            CERTAIN_HOLDS_NEVER_OVERLAP,
                            String.format(
                                    Locale.ROOT,
                                    "%s and %s both certainly held '%s': %s overlaps %s",
                                    first.describe(),
                                    second.describe(),
                                    first.key.name(),
                                    first.hold,
                                    second.hold),
                            evidence));
                }
            }
        }
        return violations;
    }

    private static List<Violation> tokensRespectRealTimeOrder(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        for (String name : history.grantedNames()) {
            List<Grant> grants = history.grantsOn(name);
            for (Grant later : grants) {
                // the worst earlier grant of each kind, so one bad grant is reported once per kind
                Grant otherLeaseNotBelow = null;
                Grant sameLeaseAbove = null;
                for (Grant earlier : grants) {
                    if (earlier.okTime() >= later.invokeTime()) {
                        continue; // concurrent or later: real-time order says nothing
                    }
                    boolean sameLease = earlier.lease().equals(later.lease());
                    if (!sameLease
                            && later.token() <= earlier.token()
                            && (otherLeaseNotBelow == null || earlier.token() > otherLeaseNotBelow.token())) {
                        otherLeaseNotBelow = earlier;
                    }
                    if (sameLease
                            && later.token() < earlier.token()
                            && (sameLeaseAbove == null || earlier.token() > sameLeaseAbove.token())) {
                        sameLeaseAbove = earlier;
                    }
                }
                if (otherLeaseNotBelow != null) {
                    violations.add(tokenOrderViolation(name, later, otherLeaseNotBelow, "is not greater than"));
                }
                if (sameLeaseAbove != null) {
                    violations.add(tokenOrderViolation(
                            name, later, sameLeaseAbove, "is smaller than its own lease's earlier"));
                }
            }
        }
        return violations;
    }

    private static Violation tokenOrderViolation(String name, Grant later, Grant earlier, String relation) {
        return new Violation(
                TOKENS_RESPECT_REAL_TIME_ORDER,
                String.format(
                        Locale.ROOT,
                        "on '%s', token %d of the %s of %s (invoked at %s) %s token %d of the %s of %s (completed at %s)",
                        name,
                        later.token(),
                        grantKind(later),
                        describe(later),
                        at(later.invokeTime()),
                        relation,
                        earlier.token(),
                        grantKind(earlier),
                        describe(earlier),
                        at(earlier.okTime())),
                List.of(earlier.okEvent(), later.invokeEvent(), later.okEvent()));
    }

    private static List<Violation> newHolderExceedsAllPriorTokens(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        for (String name : history.grantedNames()) {
            List<Grant> grants = history.grantsOn(name);
            for (Grant acquire : grants) {
                if (!acquire.isAcquire()) {
                    continue;
                }
                Grant highestPrior = null;
                for (Grant prior : grants) {
                    if (prior.okTime() < acquire.invokeTime()
                            && (highestPrior == null || prior.token() > highestPrior.token())) {
                        highestPrior = prior;
                    }
                }
                if (highestPrior != null && acquire.token() <= highestPrior.token()) {
                    violations.add(new Violation(
                            NEW_HOLDER_EXCEEDS_ALL_PRIOR_TOKENS,
                            String.format(
                                    Locale.ROOT,
                                    "new holder %s of '%s' got token %d, but the highest token granted on '%s' before it "
                                            + "asked (at %s) was %d, by the %s of %s at %s",
                                    describe(acquire),
                                    name,
                                    acquire.token(),
                                    name,
                                    at(acquire.invokeTime()),
                                    highestPrior.token(),
                                    grantKind(highestPrior),
                                    describe(highestPrior),
                                    at(highestPrior.okTime())),
                            List.of(highestPrior.okEvent(), acquire.invokeEvent(), acquire.okEvent())));
                }
            }
        }
        return violations;
    }

    private static List<Violation> fencedResourceRejectsStaleWriters(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        List<Operation> writes = history.operations(Kind.WRITE).stream()
                .filter(write -> write.invoke() != null && write.isOk())
                .toList();
        for (Operation write : writes) {
            Optional<LeaseRecord> writer = history.leaseOf(write).filter(lease -> lease.acquire != null);
            if (writer.isEmpty()) {
                continue;
            }
            boolean believedValid = write.invoke().flag();
            boolean accepted = write.completion().flag();
            CertainHold hold = writer.get().hold;
            // the whole write inside the hold: a write still in flight when the hold ended may
            // legitimately lose to a newer holder
            if (believedValid && !accepted && hold.covers(write.invokeTime(), write.completionTime())) {
                List<Event> evidence = new ArrayList<>(hold.evidence());
                evidence.addAll(write.events());
                violations.add(new Violation(
                        FENCED_RESOURCE_REJECTS_STALE_WRITERS,
                        String.format(
                                Locale.ROOT,
                                "write with token %d by %s on '%s' was rejected although made inside its certain hold %s: "
                                        + "the resource had accepted a higher token from someone else",
                                write.invoke().token(),
                                writer.get().describe(),
                                write.name(),
                                hold),
                        evidence));
            }
            if (accepted) {
                staleWriteAccepted(history, write, writer.get(), writes).ifPresent(violations::add);
            }
        }
        return violations;
    }

    /**
     * An accepted write of lease L is stale if, before it was invoked, the resource accepted a write
     * of a lease M acquired after L's last grant: M's token exceeds all of L's, so L's write must fail.
     */
    private static Optional<Violation> staleWriteAccepted(
            HistoryModel history, Operation write, LeaseRecord writer, List<Operation> writes) {
        Optional<Grant> writersLastGrant = writer.lastGrant();
        if (writersLastGrant.isEmpty()) {
            return Optional.empty();
        }
        for (Operation newer : writes) {
            if (!newer.completion().flag()
                    || newer.completionTime() >= write.invokeTime()
                    || !write.name().equals(newer.name())) {
                continue;
            }
            Optional<LeaseRecord> newerLease =
                    history.leaseOf(newer).filter(lease -> lease != writer && lease.acquire != null);
            if (newerLease.isPresent()
                    && newerLease.get().acquire.invokeTime()
                            > writersLastGrant.get().okTime()) {
                List<Event> evidence = new ArrayList<>(List.of(
                        writersLastGrant.get().okEvent(),
                        newerLease.get().acquire.first(),
                        newerLease.get().acquire.completion()));
                evidence.addAll(newer.events());
                evidence.addAll(write.events());
                return Optional.of(new Violation(
                        FENCED_RESOURCE_REJECTS_STALE_WRITERS,
                        String.format(
                                Locale.ROOT,
                                "%s write with token %d by %s on '%s' was accepted after a write with token %d by %s, "
                                        + "which acquired at %s, after the stale lease's last grant at %s",
                                write.invoke().flag() ? "a" : "zombie",
                                write.invoke().token(),
                                writer.describe(),
                                write.name(),
                                newer.invoke().token(),
                                newerLease.get().describe(),
                                at(newerLease.get().acquire.invokeTime()),
                                at(writersLastGrant.get().okTime())),
                        evidence));
            }
        }
        return Optional.empty();
    }

    private static List<Violation> releaseIsOwnerChecked(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        for (Operation release : history.operations(Kind.RELEASE)) {
            if (!release.isOkWithFlag()) {
                continue;
            }
            Optional<LeaseRecord> releaser = history.leaseOf(release);
            Optional<Grant> lastGrant = releaser.flatMap(lease -> lease.lastGrantBefore(release.invokeTime()));
            if (lastGrant.isEmpty()) {
                continue;
            }
            Optional<LeaseRecord> newHolder =
                    acquiredBetween(history, releaser.get(), lastGrant.get().okTime(), release.invokeTime());
            if (newHolder.isPresent()) {
                List<Event> evidence = new ArrayList<>(List.of(
                        lastGrant.get().okEvent(), newHolder.get().acquire.completion()));
                evidence.addAll(release.events());
                violations.add(new Violation(
                        RELEASE_IS_OWNER_CHECKED,
                        String.format(
                                Locale.ROOT,
                                "release by %s of '%s' reported it freed the lock, but %s had acquired it at %s, after "
                                        + "the releasing lease's last grant at %s",
                                releaser.get().describe(),
                                release.name(),
                                newHolder.get().describe(),
                                at(newHolder.get().acquireOkTime()),
                                at(lastGrant.get().okTime())),
                        evidence));
            }
        }
        return violations;
    }

    private static List<Violation> releaseIsIdempotent(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        for (LeaseRecord lease : history.allLeases()) {
            List<Operation> freeing =
                    lease.releases.stream().filter(Operation::isOkWithFlag).toList();
            for (Operation release : freeing) {
                freeing.stream()
                        .filter(earlier -> earlier.completionTime() < release.invokeTime())
                        .findFirst()
                        .ifPresent(earlier -> {
                            List<Event> evidence = new ArrayList<>(earlier.events());
                            evidence.addAll(release.events());
                            violations.add(new Violation(
                                    RELEASE_IS_IDEMPOTENT,
                                    String.format(
                                            Locale.ROOT,
                                            "%s freed '%s' twice: the release invoked at %s reported freed although the "
                                                    + "release completed at %s already had",
                                            lease.describe(),
                                            lease.key.name(),
                                            at(release.invokeTime()),
                                            at(earlier.completionTime())),
                                    evidence));
                        });
            }
        }
        return violations;
    }

    private static List<Violation> renewAfterExpiryIsRejected(HistoryModel history) {
        List<Violation> violations = new ArrayList<>();
        for (Operation renew : history.operations(Kind.RENEW)) {
            Optional<LeaseRecord> renewer = history.leaseOf(renew);
            if (!renew.isOk() || renewer.isEmpty()) {
                continue;
            }
            LeaseRecord lease = renewer.get();
            long invoked = renew.invokeTime();
            List<Event> evidence = new ArrayList<>(renew.events());
            String reason = null;
            Optional<Grant> previousGrant = lease.lastGrantBefore(invoked);
            Optional<LeaseRecord> newHolder =
                    previousGrant.flatMap(grant -> acquiredBetween(history, lease, grant.okTime(), invoked));
            Optional<Operation> release = lease.firstRelease();
            if (newHolder.isPresent()) {
                reason = String.format(
                        Locale.ROOT,
                        "%s acquired it at %s, after the renewing lease's previous grant at %s",
                        newHolder.get().describe(),
                        at(newHolder.get().acquireOkTime()),
                        at(previousGrant.get().okTime()));
                evidence.add(previousGrant.get().okEvent());
                evidence.add(newHolder.get().acquire.completion());
            } else if (lease.lost != null && lease.lost.timeNanos() < invoked) {
                reason = "the lease was declared lost at " + at(lease.lost.timeNanos());
                evidence.add(lease.lost);
            } else if (release.isPresent() && release.get().invokeTime() < invoked) {
                reason =
                        "the lease's release was invoked at " + at(release.get().invokeTime());
                evidence.add(release.get().first());
            }
            if (reason != null) {
                violations.add(new Violation(
                        RENEW_AFTER_EXPIRY_IS_REJECTED,
                        String.format(
                                Locale.ROOT,
                                "renew of %s on '%s' invoked at %s succeeded (token %d), but %s",
                                lease.describe(),
                                renew.name(),
                                at(invoked),
                                renew.completion().token(),
                                reason),
                        evidence));
            }
        }
        return violations;
    }

    /** A lease other than {@code lease} on its name whose ACQUIRE OK lies strictly between the two times. */
    private static Optional<LeaseRecord> acquiredBetween(
            HistoryModel history, LeaseRecord lease, long after, long before) {
        return history.acquiredLeasesOn(lease.key.name()).stream()
                .filter(other -> other != lease)
                .filter(other -> after < other.acquireOkTime() && other.acquireOkTime() < before)
                .findFirst();
    }

    private static String grantKind(Grant grant) {
        return grant.isAcquire() ? "acquire" : "renew";
    }

    private static String describe(Grant grant) {
        return "lease " + shortId(grant.lease().leaseId()) + " (p"
                + grant.operation().process() + ")";
    }

    /**
     * A lease's certain hold as {@link #certainHoldsNeverOverlap} reckons it, for judges of other
     * kinds of lock (the shared-lock properties under faults): the ACQUIRE's invocation and OK, the
     * hold's end, and the ACQUIRE OK event (its token and detail).
     */
    public record CertainHeld(String name, String leaseId, long invoked, long granted, long end, Event acquired) {}

    /** Every lease with a recorded ACQUIRE OK and its certain hold, in order of acquisition. */
    public static List<CertainHeld> certainHolds(List<Event> events) {
        return HistoryModel.of(events).acquiredLeases().stream()
                .map(lease -> new CertainHeld(
                        lease.key.name(),
                        lease.key.leaseId(),
                        lease.acquire.invokeTime(),
                        lease.hold.start(),
                        lease.hold.end(),
                        lease.acquire.completion()))
                .toList();
    }

    /** A time as {@link Event#toString()} prints it, so messages and evidence line up. */
    static String at(long nanos) {
        return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
    }

    /** A lease id as {@link Event#toString()} prints it. */
    static String shortId(String leaseId) {
        return leaseId == null ? "?" : leaseId.substring(0, Math.min(8, leaseId.length()));
    }
}
