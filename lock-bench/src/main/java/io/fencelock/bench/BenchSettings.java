package io.fencelock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The options of a comparison run, from system properties:
 * <ul>
 *   <li>{@code fencelock.bench.quick} (false): the quick mode, well under two minutes;</li>
 *   <li>{@code fencelock.bench.backends} (all): a comma-separated subset of
 *       postgres, mariadb, redis, etcd, mongo, zookeeper;</li>
 *   <li>{@code fencelock.bench.workloads} (all): a comma-separated subset of
 *       latency, throughput, handoff, renewal, takeover, coordination, shared, scale;</li>
 *   <li>{@code fencelock.bench.out} (target/fencelock-compare): the report directory;</li>
 *   <li>{@code fencelock.bench.matrix}: a directory of TCK matrix JSON files, in addition to
 *       {@code <module>/target/fencelock-tck} under {@code fencelock.bench.projectRoot}.</li>
 * </ul>
 * Servers the user names come through the fixtures' environment variables (FENCELOCK_POSTGRES_URL,
 * FENCELOCK_MYSQL_URL, FENCELOCK_REDIS_URL, FENCELOCK_ETCD_ENDPOINTS, FENCELOCK_MONGO_URI, FENCELOCK_ZOOKEEPER_URL).
 */
record BenchSettings(
        boolean quick, Set<String> backends, Set<String> workloads, Path out, Path projectRoot, Path matrixDir) {
    static final List<String> ALL_BACKENDS = List.of("postgres", "mariadb", "redis", "etcd", "mongo", "zookeeper");
    /** The workloads of a backend's section, in the order they run. */
    static final List<String> ALL_WORKLOADS =
            List.of("latency", "throughput", "handoff", "renewal", "takeover", "coordination", "shared", "scale");
    /** What the report calls each backend. */
    static final Map<String, String> TITLES = Map.of(
            "postgres",
            "PostgreSQL",
            "mariadb",
            "MySQL / MariaDB",
            "redis",
            "Redis",
            "etcd",
            "etcd",
            "mongo",
            "MongoDB",
            "zookeeper",
            "ZooKeeper");

    static BenchSettings fromSystemProperties() {
        boolean quick = Boolean.parseBoolean(System.getProperty("fencelock.bench.quick", "false"));
        Set<String> backends = parseBackends(System.getProperty("fencelock.bench.backends", "all"));
        Set<String> workloads = parseWorkloads(System.getProperty("fencelock.bench.workloads", "all"));
        Path root = Path.of(System.getProperty("fencelock.bench.projectRoot", "."))
                .toAbsolutePath()
                .normalize();
        String out = System.getProperty("fencelock.bench.out", "");
        Path outDir = out.isBlank() ? root.resolve("lock-bench/target/fencelock-compare") : Path.of(out);
        String matrix = System.getProperty("fencelock.bench.matrix", "");
        return new BenchSettings(
                quick,
                backends,
                workloads,
                outDir.toAbsolutePath().normalize(),
                root,
                matrix.isBlank() ? null : Path.of(matrix));
    }

    static Set<String> parseBackends(String list) {
        return parseSubset("fencelock.bench.backends", list, ALL_BACKENDS, Map.of("mysql", "mariadb"));
    }

    static Set<String> parseWorkloads(String list) {
        return parseSubset("fencelock.bench.workloads", list, ALL_WORKLOADS, Map.of("hand-off", "handoff"));
    }

    /** Whether this run measures {@code workload} (one of {@link #ALL_WORKLOADS}). */
    boolean runs(String workload) {
        return workloads.contains(workload);
    }

    /** A comma-separated subset of {@code all}, "all" for every one of them, {@code aliases} for other spellings. */
    private static Set<String> parseSubset(
            String property, String list, List<String> all, Map<String, String> aliases) {
        Set<String> chosen = new LinkedHashSet<>();
        for (String part : list.split(",")) {
            String name = part.trim().toLowerCase(Locale.ROOT);
            name = aliases.getOrDefault(name, name);
            if (name.equals("all")) {
                chosen.addAll(all);
            } else if (all.contains(name)) {
                chosen.add(name);
            } else if (!name.isEmpty()) {
                throw new IllegalArgumentException(
                        property + " names '" + name + "', which is not one of all, " + String.join(", ", all));
            }
        }
        if (chosen.isEmpty()) {
            throw new IllegalArgumentException(property + " '" + list + "' names nothing to run");
        }
        return chosen;
    }

    /**
     * Cycles before each contender's measured latency (and the scale workload's): enough, in full mode, for
     * the JIT's optimising compiler to have compiled the whole path (with 1,000, fencelock's longer call path
     * was still partly compiled during its first measured cycles, which its p50 over the provider alone showed).
     */
    int latencyWarmup() {
        return quick ? 50 : 5000;
    }

    /** Cycles of a fresh client before its throughput cells, which have a warm-up of their own. */
    int clientWarmup() {
        return quick ? 50 : 1000;
    }

    /** At least 10,000 in full mode, so that the p99 rests on a hundred cycles and the p99.9 on ten. */
    int latencyCycles() {
        return quick ? 250 : 10_000;
    }

    List<Integer> clientCounts() {
        return List.of(1, 8, 64);
    }

    /** Before each throughput cell: the threads start, connections fill, the JIT settles. */
    Duration throughputWarmup() {
        return Duration.ofMillis(quick ? 30 : 2000);
    }

    /**
     * The measured time of a throughput cell. Half-second cells on this shared machine disagreed
     * between runs about who leads; five seconds average over a scheduler's and a GC's hiccups.
     */
    Duration throughputTime() {
        return Duration.ofMillis(quick ? 120 : 5000);
    }

    /**
     * Throughput passes over all contenders, in alternating order; a cell reports the median of its
     * passes with their min-max, and is flagged when they spread more than
     * {@link Figures#UNSTEADY_SPREAD} of the median. One pass would favour whoever runs last (the
     * first runs while the JIT still compiles the JDBC driver or Netty paths that every contender
     * shares), and the best of two would reward a lucky moment. Where there are several, an unmeasured
     * round of every contender's cells runs first (CompareRun), so that pass 1 is not run cold.
     */
    int throughputRounds() {
        return quick ? 1 : 3;
    }

    /**
     * 200 in full mode: with 20, PostgreSQL's p50 moved from 1.6 to 2.4 ms between runs with nothing in
     * its path changed, and the p99 was the largest sample but one.
     */
    int handOffSamples() {
        return quick ? 5 : 200;
    }

    /**
     * Unmeasured hand-offs before the measured ones. In quick mode three: a client opens some connections or
     * sessions on its first acquire (ZooKeeper's TTL-class session, for one), a start-up cost, not a hand-off. In
     * full mode 300: a waiter's path (a watch event, a subscriber's message, the wake of a parked thread) is
     * not the latency or throughput workloads' path, and the JIT compiles it only after some hundreds of
     * hand-offs. From a fresh JVM on an etcd already warm, fencelock's p50 per block of 100 hand-offs read
     * 8.1, 4.6, 3.8, 3.0 ms and 6.3, 3.8, 2.8, 2.5 ms (two JVMs one after the other), and 2.3-2.7 ms in every
     * block of a second pass in one JVM with new clients: the cost was the JVM's, not the server's. On ZooKeeper,
     * runs of the workload alone with three, 300 and three unmeasured: 3.97, 2.71, 4.50 ms. It adds some 300
     * hand-offs of 30 to 130 ms per contender, about five to eight minutes to a full run.
     */
    int handOffWarmUps() {
        return quick ? 3 : 300;
    }

    /** How long the waiter is left to start waiting before the holder releases (not measured). */
    Duration handOffSettle() {
        return Duration.ofMillis(30);
    }

    List<Integer> renewalLeaseCounts() {
        return quick ? List.of(1, 1000) : List.of(1, 100, 10_000);
    }

    /** The watchdog renews at a third of it: a tick every 0.4 s (quick) or 1 s. */
    Duration renewalTtl() {
        return Duration.ofMillis(quick ? 1200 : 3000);
    }

    /** etcd leases are whole seconds: 1 s is the shortest TTL every backend honours as given. */
    Duration takeoverTtl() {
        return Duration.ofSeconds(quick ? 1 : 2);
    }

    int takeoverSamples() {
        return quick ? 1 : 3;
    }

    long scaleSmall() {
        return 1_000;
    }

    long scaleLarge(BackendUnderTest backend) {
        return quick ? Math.min(20_000, backend.maxScaleNames()) : backend.maxScaleNames();
    }

    /** Cycles of fencelock and as many of the raw primitive, interleaved, at each population of the scale workload. */
    int scaleCycles() {
        return quick ? 200 : 2000;
    }

    String describe() {
        return (quick ? "quick mode" : "full mode") + ": latency " + latencyCycles() + " cycles after "
                + latencyWarmup()
                + " warm-up, interleaved in runs of " + Measurements.LATENCY_RUN
                + " cycles, 5 rounds of alternating order; throughput "
                + throughputTime().toMillis() + " ms per cell after "
                + throughputWarmup().toMillis() + " ms warm-up at " + clientCounts() + " clients, median (min-max) of "
                + throughputRounds() + " pass(es) in alternating order"
                + (throughputRounds() > 1 ? " after one unmeasured round of every cell" : "")
                + ", flagged when they spread more than "
                + Math.round(Figures.UNSTEADY_SPREAD * 100) + "%; hand-off "
                + handOffSamples() + " samples after " + handOffWarmUps() + " unmeasured; renewal "
                + renewalLeaseCounts() + " leases, TTL "
                + renewalTtl().toMillis() + " ms; takeover TTL " + takeoverTtl().toSeconds() + " s x "
                + takeoverSamples()
                + "; scale " + scaleSmall() + " vs " + (quick ? "20000" : "up to 1000000") + " names, " + scaleCycles()
                + " cycles of fencelock and of the raw primitive, interleaved as latency's"
                + (workloads.containsAll(ALL_WORKLOADS) ? "" : "; only the workloads " + String.join(", ", workloads));
    }
}
