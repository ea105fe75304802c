package io.fencelock.tck.schedule;

import java.util.List;
import java.util.stream.Collectors;

/**
 * What one process (a thread with its own lock client) of a schedule does.
 *
 * @param process   the process number, 0-based and equal to its index in the schedule
 * @param autoRenew whether the client's watchdog renews its leases
 * @param ttlMillis the lease TTL of the client
 * @param steps     the script, run in order
 */
public record ProcessScript(int process, boolean autoRenew, long ttlMillis, List<Step> steps) {

    public ProcessScript {
        if (process < 0) {
            throw new IllegalArgumentException("process must be >= 0: " + process);
        }
        if (ttlMillis <= 0) {
            throw new IllegalArgumentException("ttlMillis must be > 0: " + ttlMillis);
        }
        steps = List.copyOf(steps);
        // the watchdog would keep renewing a dropped lease: only a process without it can crash
        if (autoRenew && steps.stream().anyMatch(step -> step.action() == Action.ABANDON)) {
            throw new IllegalArgumentException("ABANDON needs autoRenew=false (process " + process + ")");
        }
    }

    /** The time the script spends sleeping or waiting at most: HOLD and PAUSE sleeps plus ACQUIRE waits. */
    public long busyMillis() {
        return steps.stream()
                .filter(step -> step.action().isTimed())
                .mapToLong(Step::millis)
                .sum();
    }

    public ProcessScript withProcess(int newProcess) {
        return new ProcessScript(newProcess, autoRenew, ttlMillis, steps);
    }

    public ProcessScript withSteps(List<Step> newSteps) {
        return new ProcessScript(process, autoRenew, ttlMillis, newSteps);
    }

    /** Like {@code p0 (ttl=300ms, autoRenew): ACQUIRE(L0, wait=300ms), WRITE(L0), RELEASE(L0)}. */
    @Override
    public String toString() {
        return "p" + process + " (ttl=" + ttlMillis + "ms, " + (autoRenew ? "autoRenew" : "manual renew") + "): "
                + steps.stream().map(Step::toString).collect(Collectors.joining(", "));
    }
}
