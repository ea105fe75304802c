package io.fencelock.tck.schedule;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Generates schedules from a seed, deterministically: the same config and seed always give the
 * same schedule, so {@code -Dfencelock.tck.seed=...} replays a failure.
 *
 * <p>Scripts are plausible lock use, built from <em>episodes</em>: acquire (waiting or one try),
 * write, hold, write, then release or crash (ABANDON). Holds of processes without a watchdog often
 * outlast the TTL so leases expire and others take over; holds of processes with one outlast it
 * too, to exercise renewal. After a release may come a purge of the freed record (the next
 * holder's token must still be higher); between and after episodes come stale actions
 * (RELEASE_STALE, ZOMBIE_WRITE), purges and pauses. Processes alternate autoRenew on and off and
 * start together on mostly the same lock, so contention and hand-offs are common. A process's
 * sleeps and waits stay within {@link Config#timeBudgetMillis()}.
 */
public final class ScheduleGenerator {

    /**
     * Bounds of generated schedules; each range is inclusive.
     *
     * @param purge whether scripts may contain {@link Action#PURGE}
     */
    public record Config(
            int minProcesses,
            int maxProcesses,
            int maxLocks,
            int minSteps,
            int maxSteps,
            long minTtlMillis,
            long maxTtlMillis,
            boolean purge) {

        public Config {
            requireRange("processes", minProcesses, maxProcesses, 1);
            requireRange("locks", 1, maxLocks, 1);
            requireRange("steps", minSteps, maxSteps, 1);
            requireRange("ttlMillis", minTtlMillis, maxTtlMillis, 1);
        }

        /** 2..4 processes, up to 2 locks, 4..10 steps, TTL 200..500 ms, with purges. */
        public static Config defaults() {
            return new Config(2, 4, 2, 4, 10, 200, 500, true);
        }

        /**
         * How long one process may sleep and wait in total: five of the longest TTL, room for a
         * couple of episodes whose holds outlast a TTL (2.5 s with the defaults).
         */
        public long timeBudgetMillis() {
            return 5 * maxTtlMillis;
        }

        private static void requireRange(String what, long min, long max, long lowest) {
            if (min < lowest || max < min) {
                throw new IllegalArgumentException(
                        what + " range must satisfy " + lowest + " <= min <= max: " + min + ".." + max);
            }
        }
    }

    private final Config config;

    /** Steps of a staged takeover's opening (see {@link #generate}). */
    static final int STAGED_STEPS = 5;

    public ScheduleGenerator(Config config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public ScheduleGenerator() {
        this(Config.defaults());
    }

    public Config config() {
        return config;
    }

    public Schedule generate(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int processCount = between(random, config.minProcesses(), config.maxProcesses());
        int lockCount = between(random, 1, config.maxLocks());
        boolean firstAutoRenews = random.nextBoolean();
        // About a third of the schedules open with a staged takeover (a holder stalls past its TTL,
        // another takes over and writes, the stalled one writes late), so that every run of a
        // dozen schedules or more sees stale writers rejected; the rest of their scripts is random.
        boolean stagedTakeover = processCount >= 2 && config.maxSteps() >= STAGED_STEPS && random.nextDouble() < 0.3;
        if (stagedTakeover) {
            firstAutoRenews = false;
        }
        List<ProcessScript> scripts = new ArrayList<>();
        for (int process = 0; process < processCount; process++) {
            // alternate, so every schedule with two processes or more has a holder that can expire
            boolean autoRenew = (process % 2 == 0) == firstAutoRenews;
            long ttlMillis = between(random, config.minTtlMillis(), config.maxTtlMillis());
            int stepCount = between(random, config.minSteps(), config.maxSteps());
            ScriptWriter writer = new ScriptWriter(random.split(), lockCount, autoRenew, ttlMillis);
            if (stagedTakeover && process < 2) {
                stepCount = Math.max(stepCount, STAGED_STEPS);
                writer.stageTakeover(process == 0);
            }
            List<Step> steps = writer.write(stepCount);
            scripts.add(new ProcessScript(process, autoRenew, ttlMillis, steps));
        }
        return new Schedule(seed, lockCount, scripts);
    }

    /** Writes one process's script, keeping its sleeps and waits within the time budget. */
    private final class ScriptWriter {
        private final SplittableRandom random;
        private final int lockCount;
        private final boolean autoRenew;
        private final long ttl;
        private final List<Step> steps = new ArrayList<>();
        private final List<Integer> usedLocks = new ArrayList<>();
        private long timeLeft = config.timeBudgetMillis();

        ScriptWriter(SplittableRandom random, int lockCount, boolean autoRenew, long ttl) {
            this.random = random;
            this.lockCount = lockCount;
            this.autoRenew = autoRenew;
            this.ttl = ttl;
        }

        /** The staged takeover's opening on lock 0: the stalled holder's, or its successor's. */
        void stageTakeover(boolean stalledHolder) {
            usedLocks.add(0);
            if (stalledHolder) {
                steps.add(Step.acquire(0, spend(ttl)));
                steps.add(Step.of(Action.WRITE, 0));
                steps.add(Step.hold(0, spend(ttl * 13 / 10)));
                steps.add(Step.pause(spend(ttl)));
                steps.add(Step.of(Action.ZOMBIE_WRITE, 0));
            } else {
                steps.add(Step.pause(spend(ttl / 4)));
                steps.add(Step.acquire(0, spend(3 * ttl)));
                steps.add(Step.of(Action.WRITE, 0));
                steps.add(Step.hold(0, spend(ttl / 4)));
                steps.add(Step.of(Action.RELEASE, 0));
            }
        }

        List<Step> write(int stepCount) {
            while (steps.size() < stepCount) {
                int room = stepCount - steps.size();
                if (room >= Episode.MANDATORY_STEPS && (steps.isEmpty() || chance(0.75))) {
                    episode(room);
                } else {
                    filler();
                }
            }
            return steps;
        }

        /** Acquire, hold, release or abandon, with optional writes, a renew and stale actions as room allows. */
        private void episode(int room) {
            Episode episode = new Episode(room);
            int lock = pickLock();
            usedLocks.add(lock);
            steps.add(chance(0.7) ? Step.acquire(lock, spend(acquireWait())) : Step.of(Action.TRY_ACQUIRE, lock));
            if (episode.optional(0.85)) {
                steps.add(Step.of(Action.WRITE, lock));
            }
            long hold = spend(holdTime());
            steps.add(Step.hold(lock, hold));
            if (!autoRenew && hold > ttl && episode.optionalPair(0.5)) {
                // the lease expired during the hold, unnoticed: stall a while longer, so that a newer
                // holder has likely written, then write with the stale token
                steps.add(Step.pause(spend(between(random, ttl, 2 * ttl))));
                steps.add(Step.of(Action.ZOMBIE_WRITE, lock));
            }
            if (episode.optionalPair(0.2)) {
                // manual renew mid-hold: after an expiry (no watchdog, long hold) it must be rejected
                steps.add(Step.of(Action.RENEW, lock));
                steps.add(Step.hold(lock, spend(holdTime())));
            }
            if (episode.optional(0.7)) {
                steps.add(Step.of(Action.WRITE, lock));
            }
            boolean crash = !autoRenew && chance(0.5);
            steps.add(Step.of(crash ? Action.ABANDON : Action.RELEASE, lock));
            if (!crash && config.purge() && episode.optional(0.25)) {
                // delete the freed record at once: the next holder's token must still be higher
                steps.add(Step.purge());
            }
            if (crash && episode.optionalPair(0.9)) {
                // outlive the crashed lease, so a newer holder has likely written before the zombie does
                steps.add(Step.pause(spend(between(random, ttl * 3 / 2, 2 * ttl))));
                steps.add(Step.of(Action.ZOMBIE_WRITE, lock));
            } else if (episode.optional(0.3)) {
                steps.add(Step.of(Action.ZOMBIE_WRITE, lock));
            }
            if (episode.optional(0.3)) {
                steps.add(Step.of(Action.RELEASE_STALE, lock));
            }
        }

        /**
         * A single step between episodes: a stale action on a lock used before, a purge or a
         * pause, never the same action as the step before it (a second one would test nothing new).
         */
        private void filler() {
            List<Action> choices = new ArrayList<>(List.of(Action.PAUSE));
            if (config.purge()) {
                choices.add(Action.PURGE);
            }
            if (!usedLocks.isEmpty()) {
                choices.addAll(List.of(Action.RELEASE_STALE, Action.ZOMBIE_WRITE));
            }
            if (!steps.isEmpty() && choices.size() > 1) {
                choices.remove(steps.get(steps.size() - 1).action());
            }
            Action action = choices.get(random.nextInt(choices.size()));
            steps.add(
                    switch (action) {
                        case PAUSE -> Step.pause(spend(between(random, ttl / 10, ttl / 2)));
                        case PURGE -> Step.purge();
                        default -> Step.of(action, usedLocks.get(random.nextInt(usedLocks.size())));
                    });
        }

        /** Mostly lock 0, so processes contend; the others sometimes, so locks are seen to be independent. */
        private int pickLock() {
            return lockCount == 1 || chance(0.65) ? 0 : between(random, 1, lockCount - 1);
        }

        /** Short waits that often time out, or long ones that outwait an expiring holder. */
        private long acquireWait() {
            return chance(0.5) ? between(random, ttl / 4, ttl) : between(random, ttl, 2 * ttl);
        }

        private long holdTime() {
            if (autoRenew) {
                return between(random, ttl / 4, ttl * 3 / 2); // beyond the TTL only if the watchdog works
            }
            return chance(0.6)
                    ? between(random, ttl * 11 / 10, ttl * 3 / 2) // expires: the lease is lost, others take over
                    : between(random, ttl / 5, ttl * 3 / 5);
        }

        /** Takes {@code desired} ms from the time budget, or what is left of it (at least 1 ms). */
        private long spend(long desired) {
            long granted = Math.max(1, Math.min(desired, timeLeft));
            timeLeft = Math.max(0, timeLeft - granted);
            return granted;
        }

        private boolean chance(double probability) {
            return random.nextDouble() < probability;
        }

        /** Counts the optional steps an episode may still add within the script's step count. */
        private final class Episode {
            static final int MANDATORY_STEPS = 3; // acquire, hold, release or abandon
            private int optionalLeft;

            Episode(int room) {
                optionalLeft = room - MANDATORY_STEPS;
            }

            boolean optional(double probability) {
                return take(1, probability);
            }

            boolean optionalPair(double probability) {
                return take(2, probability);
            }

            private boolean take(int count, double probability) {
                if (optionalLeft < count || !chance(probability)) {
                    return false;
                }
                optionalLeft -= count;
                return true;
            }
        }
    }

    private static int between(SplittableRandom random, int min, int max) {
        return random.nextInt(min, max + 1);
    }

    private static long between(SplittableRandom random, long min, long max) {
        return random.nextLong(min, max + 1);
    }
}
