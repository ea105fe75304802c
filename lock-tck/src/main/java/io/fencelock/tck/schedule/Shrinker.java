package io.fencelock.tck.schedule;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Shrinks a failing schedule to a smaller one that still fails, so a failure report shows the few
 * steps that matter. Greedy: each pass tries, in order, removing a whole process, merging a lock
 * into another, removing a step and halving a sleep or wait, keeping every candidate that still
 * fails; it stops after a pass that keeps nothing, or when the predicate has been asked
 * {@code maxAttempts} times (each ask usually runs the schedule against a real backend).
 */
public final class Shrinker {

    private Shrinker() {}

    /**
     * @param failing    a schedule for which {@code stillFails} is true
     * @param stillFails runs a candidate and tells whether the failure remains
     * @param maxAttempts the most times {@code stillFails} is called
     * @return the smallest failing schedule found ({@code failing} itself if nothing smaller fails)
     */
    public static Schedule shrink(Schedule failing, Predicate<Schedule> stillFails, int maxAttempts) {
        Search search = new Search(failing, stillFails, maxAttempts);
        boolean shrunk = true;
        while (shrunk && !search.exhausted()) {
            shrunk = removeProcesses(search) | mergeLocks(search) | removeSteps(search) | halveMillis(search);
        }
        return search.smallest;
    }

    /** The smallest failing schedule so far and the predicate calls left. */
    private static final class Search {
        Schedule smallest;
        private final Predicate<Schedule> stillFails;
        private int attemptsLeft;

        Search(Schedule failing, Predicate<Schedule> stillFails, int maxAttempts) {
            this.smallest = failing;
            this.stillFails = stillFails;
            this.attemptsLeft = maxAttempts;
        }

        boolean exhausted() {
            return attemptsLeft <= 0;
        }

        /** Keeps {@code candidate} if it still fails; false once the attempts are used up. */
        boolean accept(Schedule candidate) {
            if (exhausted()) {
                return false;
            }
            attemptsLeft--;
            if (stillFails.test(candidate)) {
                smallest = candidate;
                return true;
            }
            return false;
        }
    }

    // Each step below walks indices from the end, so a removal never shifts the ones still to try.

    private static boolean removeProcesses(Search search) {
        boolean shrunk = false;
        for (int p = search.smallest.processes().size() - 1; p >= 0 && !search.exhausted(); p--) {
            if (search.smallest.processes().size() > 1) {
                shrunk |= search.accept(withoutProcess(search.smallest, p));
            }
        }
        return shrunk;
    }

    private static boolean mergeLocks(Search search) {
        boolean shrunk = false;
        for (int lock = search.smallest.lockCount() - 1; lock >= 0 && !search.exhausted(); lock--) {
            if (search.smallest.lockCount() > 1) {
                shrunk |= search.accept(withLockMerged(search.smallest, lock));
            }
        }
        return shrunk;
    }

    private static boolean removeSteps(Search search) {
        boolean shrunk = false;
        for (int p = 0; p < search.smallest.processes().size() && !search.exhausted(); p++) {
            for (int s = search.smallest.processes().get(p).steps().size() - 1; s >= 0 && !search.exhausted(); s--) {
                // a process's last step goes with the whole process, never alone
                if (search.smallest.processes().get(p).steps().size() > 1) {
                    shrunk |= search.accept(withoutStep(search.smallest, p, s));
                }
            }
        }
        return shrunk;
    }

    private static boolean halveMillis(Search search) {
        boolean shrunk = false;
        for (int p = 0; p < search.smallest.processes().size() && !search.exhausted(); p++) {
            for (int s = 0; s < search.smallest.processes().get(p).steps().size() && !search.exhausted(); s++) {
                Step step = search.smallest.processes().get(p).steps().get(s);
                // keep halving while it still fails: a 2 s sleep needs ten halvings to reach 1 ms
                while (step.action().isTimed()
                        && step.millis() > 1
                        && search.accept(
                                withStep(search.smallest, p, s, step.withMillis(Math.max(1, step.millis() / 2))))) {
                    shrunk = true;
                    step = search.smallest.processes().get(p).steps().get(s);
                }
            }
        }
        return shrunk;
    }

    /** Without process {@code removed}; the processes after it are renumbered to stay 0-based. */
    static Schedule withoutProcess(Schedule schedule, int removed) {
        List<ProcessScript> kept = new ArrayList<>();
        for (ProcessScript script : schedule.processes()) {
            if (script.process() != removed) {
                kept.add(script.withProcess(kept.size()));
            }
        }
        return new Schedule(schedule.seed(), schedule.lockCount(), kept);
    }

    /** One lock fewer: lock {@code merged} becomes its lower neighbour (lock 0 its upper), indices above shift down. */
    static Schedule withLockMerged(Schedule schedule, int merged) {
        List<ProcessScript> scripts = schedule.processes().stream()
                .map(script -> script.withSteps(script.steps().stream()
                        .map(step -> step.withLock(remap(step.lock(), merged)))
                        .toList()))
                .toList();
        return new Schedule(schedule.seed(), schedule.lockCount() - 1, scripts);
    }

    private static int remap(int lock, int merged) {
        if (lock < merged) {
            return lock;
        }
        return lock == merged ? Math.max(0, merged - 1) : lock - 1;
    }

    static Schedule withoutStep(Schedule schedule, int process, int removed) {
        List<Step> steps = new ArrayList<>(schedule.processes().get(process).steps());
        steps.remove(removed);
        return withSteps(schedule, process, steps);
    }

    static Schedule withStep(Schedule schedule, int process, int index, Step replacement) {
        List<Step> steps = new ArrayList<>(schedule.processes().get(process).steps());
        steps.set(index, replacement);
        return withSteps(schedule, process, steps);
    }

    private static Schedule withSteps(Schedule schedule, int process, List<Step> steps) {
        List<ProcessScript> scripts = new ArrayList<>(schedule.processes());
        scripts.set(process, scripts.get(process).withSteps(steps));
        return new Schedule(schedule.seed(), schedule.lockCount(), scripts);
    }
}
