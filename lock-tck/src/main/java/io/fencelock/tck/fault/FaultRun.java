package io.fencelock.tck.fault;

import io.fencelock.tck.SharedChecks;
import io.fencelock.tck.history.History;
import io.fencelock.tck.history.HistoryChecker;
import io.fencelock.tck.history.Violation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What one fault scenario left behind: the history of every client involved (judged by the
 * {@link HistoryChecker} like any random schedule's) and the named checks that are about the
 * fault itself (the lost signal, recovery, token order across a restart). A check that did not
 * apply (e.g. no lease was lost) is absent.
 */
public final class FaultRun {
    /** The cut-off or paused holder's lease was declared lost (lost signal) once it could not be valid. */
    public static final String LOST_SIGNALLED = "lost signal";
    /** The task running under the lost lease was interrupted, and runExclusively threw LeaseLostException. */
    public static final String TASK_CANCELLED = "task cancelled";
    /** After the fault ended, the faulted client acquired a fresh lock by itself. */
    public static final String RECOVERED = "recovered";
    /** A lease held across the fault is either renewed (and the backend shows it as the holder) or lost. */
    public static final String LEASE_NOT_ASSUMED = "lease renewed or lost, never assumed";
    /** A holder kept its lease for its whole intended hold (renewed throughout) despite the fault. */
    public static final String HELD_THROUGHOUT = "held throughout";
    /** A lock taken after the fault carries a greater token than one granted before it. */
    public static final String TOKENS_MONOTONE = "tokens monotone";
    /** Every write the faulted holder made after it lost its write grant was turned away by the resource's fence. */
    public static final String LATE_WRITE_FENCED = "late write fenced";
    /** Once the late renewals of lost grants reached the backend, it shows none of those grants as a holder. */
    public static final String LOST_GRANT_NOT_REVIVED = "lost grant not revived";

    /** The grants of a run of shared locks: a semaphore's and a read-write lock's, as certain holds. */
    record SharedHolds(int limit, List<SharedChecks.Hold> permits, List<SharedChecks.Hold> readWrite) {}

    public record Check(boolean passed, String detail) {}

    private final String fault;
    private final History history;
    private final Map<String, Check> checks = new LinkedHashMap<>();
    private final StringBuilder notes = new StringBuilder();
    private volatile SharedHolds shared;

    public FaultRun(String fault, History history) {
        this.fault = fault;
        this.history = history;
    }

    public String fault() {
        return fault;
    }

    public History history() {
        return history;
    }

    void check(String name, boolean passed, String detail) {
        checks.put(name, new Check(passed, detail));
    }

    void note(String note) {
        if (!notes.isEmpty()) {
            notes.append("; ");
        }
        notes.append(note);
    }

    public Optional<Check> check(String name) {
        return Optional.ofNullable(checks.get(name));
    }

    public String notes() {
        return notes.toString();
    }

    void shared(SharedHolds holds) {
        this.shared = holds;
    }

    /**
     * The history properties' violations, restricted to {@code properties} (empty: all of them); for
     * a run of shared locks, those of the shared properties ({@link SharedChecks#PROPERTIES}) judged
     * on its grants.
     */
    public List<Violation> violations(List<String> properties) {
        SharedHolds holds = shared;
        if (holds != null) {
            return SharedChecks.PROPERTIES.stream()
                    .filter(p -> properties.isEmpty() || properties.contains(p))
                    .flatMap(p -> SharedChecks.violations(p, holds.limit(), holds.permits(), holds.readWrite()).stream()
                            .map(message -> new Violation(p, message, List.of())))
                    .toList();
        }
        return HistoryChecker.check(history.events()).stream()
                .filter(v -> properties.isEmpty() || properties.contains(v.property()))
                .toList();
    }

    /** A counter-example for a report: the failed checks, the violations and the whole history. */
    public String counterExample(List<Violation> violations, List<String> failedChecks) {
        StringBuilder sb = new StringBuilder("fault: ").append(fault).append('\n');
        failedChecks.forEach(c -> sb.append("failed check: ")
                .append(c)
                .append(": ")
                .append(checks.get(c).detail())
                .append('\n'));
        violations.forEach(v -> sb.append("violation: ").append(v).append('\n'));
        if (!notes.isEmpty()) {
            sb.append("notes: ").append(notes).append('\n');
        }
        sb.append("history:\n").append(history);
        return sb.toString();
    }
}
