package io.fencelock.tck;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * Knobs of a TCK run, from system properties:
 * <ul>
 *   <li>{@code fencelock.tck.schedules} (default 20): random schedules per backend;</li>
 *   <li>{@code fencelock.tck.maxSchedules} (default three times {@code schedules}): how many schedules a run may
 *   draw in all when the first ones never produced a situation the coverage guard asks for;</li>
 *   <li>{@code fencelock.tck.parallelSchedules} (default 4): how many of them run at once, each on its own lock
 *   names and clients (a schedule mostly sleeps through its holds and pauses; running several at once also
 *   makes them race each other's purges and connections);</li>
 *   <li>{@code fencelock.tck.seed}: replay exactly the schedule with this seed (printed by a failure);</li>
 *   <li>{@code fencelock.tck.baseSeed}: the first seed of a run (default: random, printed);</li>
 *   <li>{@code fencelock.tck.shrinkAttempts} (default 40): re-runs spent shrinking a failure;</li>
 *   <li>{@code fencelock.tck.faultRounds} (default 1): how often each fault scenario runs per backend;</li>
 *   <li>{@code fencelock.tck.parallelFaults} (default 6): how many connection-fault scenarios run at once, each
 *   with its own proxy, clients and names (a scenario mostly sleeps through its fault); 1 runs them in turn;</li>
 *   <li>{@code fencelock.tck.raceSeconds} (default 3): how long a race property runs per backend.</li>
 *   <li>{@code fencelock.tck.sharedProxyFaults} (default 5; the project's own build sets 1, and 5 under -Pthorough): how many
 *   of the proxy's connection faults each round drives shared grants through, taken in turn from an offset the
 *   run's seed picks, so that successive runs cover all of them;</li>
 *   <li>{@code fencelock.tck.interruptRaces} (default 50 per fault round): interrupted acquires raced against a release;</li>
 *   <li>{@code fencelock.tck.hangSeconds} (default 20): the bound on every wait for something that must happen (a
 *   wake-up, a grant, a server's answer), only so that a hang fails instead of blocking the build. A property that
 *   catches a lost wake-up fails when this bound passes, so a backend slower than that to wake a waiter needs more.</li>
 * </ul>
 */
public final class TckSettings {
    private TckSettings() {}

    public static int schedules() {
        return Integer.getInteger("fencelock.tck.schedules", 20);
    }

    public static int maxSchedules() {
        return Math.max(schedules(), Integer.getInteger("fencelock.tck.maxSchedules", 3 * schedules()));
    }

    public static int parallelSchedules() {
        return Math.max(1, Integer.getInteger("fencelock.tck.parallelSchedules", 4));
    }

    public static int parallelFaults() {
        return Math.max(1, Integer.getInteger("fencelock.tck.parallelFaults", 6));
    }

    public static OptionalLong replaySeed() {
        String s = System.getProperty("fencelock.tck.seed");
        return s == null || s.isBlank() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(s.trim()));
    }

    public static long baseSeed() {
        String s = System.getProperty("fencelock.tck.baseSeed");
        return s == null || s.isBlank() ? System.nanoTime() ^ 0x5DEECE66DL : Long.parseLong(s.trim());
    }

    public static int faultRounds() {
        return Math.max(1, Integer.getInteger("fencelock.tck.faultRounds", 1));
    }

    public static int sharedProxyFaults() {
        return Math.max(1, Integer.getInteger("fencelock.tck.sharedProxyFaults", 5));
    }

    public static int interruptRaces() {
        return Math.max(1, Integer.getInteger("fencelock.tck.interruptRaces", 50 * faultRounds()));
    }

    /** Whether this is a CI run ({@code CI=true}), where a fault that cannot be injected fails instead of being skipped. */
    public static boolean ci() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    public static int shrinkAttempts() {
        return Integer.getInteger("fencelock.tck.shrinkAttempts", 40);
    }

    /** The bound on every wait, only so that a hang fails instead of blocking the build. */
    public static Duration hangBound() {
        return Duration.ofSeconds(Math.max(1, Integer.getInteger("fencelock.tck.hangSeconds", 20)));
    }

    /** How long a race property (many threads on one name against a concurrent purger, say) runs. */
    public static Duration raceDuration() {
        return Duration.ofSeconds(Math.max(1, Integer.getInteger("fencelock.tck.raceSeconds", 3)));
    }
}
