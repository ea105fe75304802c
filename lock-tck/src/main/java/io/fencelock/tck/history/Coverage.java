package io.fencelock.tck.history;

import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.Event.Type;
import io.fencelock.tck.history.HistoryModel.LeaseRecord;
import io.fencelock.tck.history.HistoryModel.Operation;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * How much of the interesting behaviour a history exercised, so a run that never produced
 * contention or a takeover fails instead of passing vacuously.
 *
 * @param acquisitions         ACQUIRE OK
 * @param contendedAttempts    ACQUIRE FAIL: the lock was held for the whole attempt
 * @param takeovers            ACQUIRE OK whose previous holder had not released (it expired or was abandoned)
 * @param handOffs             ACQUIRE OK that got the lock from a release made while it was waiting
 * @param releases             RELEASE OK that freed the lock
 * @param staleReleases        RELEASE OK that freed nothing (the lease no longer held)
 * @param renewals             RENEW OK (manual and watchdog)
 * @param purges               PURGE OK
 * @param zombieWritesRejected WRITE by a writer that knew its lease invalid, rejected by the fenced resource
 * @param lost                 LOST signals
 */
public record Coverage(
        int acquisitions,
        int contendedAttempts,
        int takeovers,
        int handOffs,
        int releases,
        int staleReleases,
        int renewals,
        int purges,
        int zombieWritesRejected,
        int lost) {

    public static final Coverage NONE = new Coverage(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    public static Coverage of(List<Event> events) {
        HistoryModel history = HistoryModel.of(events);
        List<Operation> acquires = history.operations(Kind.ACQUIRE);
        List<Operation> releaseOks = history.operations(Kind.RELEASE).stream()
                .filter(Operation::isOk)
                .toList();
        int takeovers = 0;
        int handOffs = 0;
        for (String name : history.grantedNames()) {
            List<LeaseRecord> holders = history.acquiredLeasesOn(name);
            for (int i = 1; i < holders.size(); i++) {
                switch (succession(holders.get(i - 1), holders.get(i).acquire)) {
                    case TAKEOVER -> takeovers++;
                    case HAND_OFF -> handOffs++;
                    case FREE -> {
                        // the previous holder had released before this acquire asked: nothing to count
                    }
                }
            }
        }
        return new Coverage(
                count(acquires, op -> op.outcome() == Type.OK),
                count(acquires, op -> op.outcome() == Type.FAIL),
                takeovers,
                handOffs,
                count(releaseOks, op -> op.completion().flag()),
                count(releaseOks, op -> !op.completion().flag()),
                count(history.operations(Kind.RENEW), Operation::isOk),
                count(history.operations(Kind.PURGE), Operation::isOk),
                count(
                        history.operations(Kind.WRITE),
                        op -> op.isOk()
                                && op.invoke() != null
                                && !op.invoke().flag()
                                && !op.completion().flag()),
                history.operations(Kind.LOST).size());
    }

    private enum Succession {
        TAKEOVER,
        HAND_OFF,
        FREE
    }

    /** How {@code acquire} followed {@code previous}, the lease that acquired the name just before it. */
    private static Succession succession(LeaseRecord previous, Operation acquire) {
        // a release of unknown outcome may have freed the lock: not a certain takeover
        Optional<Operation> mayHaveFreed = previous.releases.stream()
                .filter(release -> release.isOkWithFlag() || !release.isOk())
                .filter(release -> release.invokeTime() < acquire.completionTime())
                .findFirst();
        if (mayHaveFreed.isEmpty()) {
            return Succession.TAKEOVER;
        }
        Operation release = mayHaveFreed.get();
        return release.isOkWithFlag() && release.completionTime() > acquire.invokeTime()
                ? Succession.HAND_OFF
                : Succession.FREE;
    }

    private static int count(List<Operation> operations, Predicate<Operation> which) {
        return (int) operations.stream().filter(which).count();
    }

    /** The sum of two coverages, to total a run of many schedules. */
    public Coverage plus(Coverage other) {
        return new Coverage(
                acquisitions + other.acquisitions,
                contendedAttempts + other.contendedAttempts,
                takeovers + other.takeovers,
                handOffs + other.handOffs,
                releases + other.releases,
                staleReleases + other.staleReleases,
                renewals + other.renewals,
                purges + other.purges,
                zombieWritesRejected + other.zombieWritesRejected,
                lost + other.lost);
    }

    /** One line for logs and failure reports. */
    public String describe() {
        return "acquisitions=" + acquisitions + ", contended=" + contendedAttempts + ", takeovers=" + takeovers
                + ", hand-offs=" + handOffs + ", releases=" + releases + ", stale releases=" + staleReleases
                + ", renewals=" + renewals + ", purges=" + purges + ", zombie writes rejected=" + zombieWritesRejected
                + ", lost=" + lost;
    }
}
