package io.fencelock.tck.schedule;

import java.time.Duration;
import java.util.List;

/**
 * What one property run executes: processes running their scripts concurrently against
 * {@code lockCount} lock names. Generated from {@code seed} (see {@link ScheduleGenerator}), so a
 * failing schedule can be replayed; a shrunk schedule keeps the seed it came from.
 *
 * @param seed      the seed the schedule was generated from
 * @param lockCount how many lock names the steps' lock indices refer to
 * @param processes the scripts, process {@code i} at index {@code i}
 */
public record Schedule(long seed, int lockCount, List<ProcessScript> processes) {

    public Schedule {
        if (lockCount < 1) {
            throw new IllegalArgumentException("lockCount must be >= 1: " + lockCount);
        }
        processes = List.copyOf(processes);
        if (processes.isEmpty()) {
            throw new IllegalArgumentException("a schedule needs at least one process");
        }
        for (int i = 0; i < processes.size(); i++) {
            ProcessScript script = processes.get(i);
            if (script.process() != i) {
                throw new IllegalArgumentException("process " + script.process() + " is at index " + i);
            }
            for (Step step : script.steps()) {
                if (step.lock() >= lockCount) {
                    throw new IllegalArgumentException(
                            step + " of p" + i + " refers to a lock beyond lockCount " + lockCount);
                }
            }
        }
    }

    /**
     * A rough upper bound of the schedule's run time: the longest process's sleeps and acquire
     * waits (operations themselves are assumed fast).
     */
    public Duration estimatedDuration() {
        return Duration.ofMillis(
                processes.stream().mapToLong(ProcessScript::busyMillis).max().orElse(0));
    }

    /** The number of steps of all processes together. */
    public int stepCount() {
        return processes.stream().mapToInt(script -> script.steps().size()).sum();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder()
                .append("Schedule seed=")
                .append(seed)
                .append(", locks=")
                .append(lockCount)
                .append(", processes=")
                .append(processes.size())
                .append(", estimated ")
                .append(estimatedDuration().toMillis())
                .append("ms");
        processes.forEach(script -> sb.append("\n  ").append(script));
        return sb.toString();
    }
}
