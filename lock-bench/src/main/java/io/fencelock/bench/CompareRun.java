package io.fencelock.bench;

import io.fencelock.Capability;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The comparison run: every backend found here (embedded or local servers, or ones named by
 * environment variable), fencelock next to the backend's raw primitive and the peer libraries on the
 * same server, written as a report directory (index.html, report.md, report.json).
 * {@code ./mvnw -q -Pcompare -DskipTests verify}; options in {@link BenchSettings}.
 */
public final class CompareRun {
    static final String SCHEMA = "fencelock-compare/1";

    /** What a reviewer should know of a backend that does not claim a capability: one line each. */
    static final Map<Capability, String> WITHOUT = Map.ofEntries(
            Map.entry(
                    Capability.FENCING,
                    "no fencing tokens: a resource cannot tell a stale holder from the current one"),
            Map.entry(
                    Capability.DURABLE_TOKENS,
                    "tokens are not persisted before a grant returns: after a server restart a new holder may get a lower token"),
            Map.entry(Capability.SERVER_TIME, "expiry depends on a client's clock"),
            Map.entry(
                    Capability.WAKE_ON_RELEASE,
                    "no release signal: waiters poll (with backoff, never past the holder's expiry), so a hand-off costs up to a poll interval"),
            Map.entry(Capability.BATCH_RENEW, "each lease is renewed in its own round trip"),
            Map.entry(
                    Capability.TOKEN_PERIOD,
                    "the token stays the same for the whole lease, however long it is renewed"),
            Map.entry(
                    Capability.LINEARIZABLE, "grants are not linearizable across replicas: a failover can lose a lock"),
            Map.entry(Capability.PURGE_FREE, "free lock records cannot be purged: one record per name ever used stays"),
            Map.entry(
                    Capability.METADATA,
                    "no owner, type or data is stored with a grant: inspect and list show only lease ids"),
            Map.entry(Capability.EXTENDABLE_TTL, "a lease cannot be renewed to a longer TTL than it was granted with"),
            Map.entry(
                    Capability.SHARED_LOCKS,
                    "no semaphores or read-write locks: their handles throw UnsupportedOperationException"),
            Map.entry(Capability.FAIR_ORDER, "no fair waiting: waiters are granted in no particular order"),
            Map.entry(
                    Capability.HAND_OVER,
                    "a release to a waiter of the same client is a release and then that waiter's acquire (two round trips)"),
            Map.entry(
                    Capability.GRANT_ON_RELEASE,
                    "a release frees the name and a waiting client then asks for it: a hand-off across clients costs a round trip more, and a waiter may lose the name to a caller that asks first"));

    private final BenchSettings settings;
    private final Progress progress;
    private final Measurements measurements;

    CompareRun(BenchSettings settings, Progress progress) {
        this.settings = settings;
        this.progress = progress;
        this.measurements = new Measurements(settings);
    }

    public static void main(String[] args) throws Exception {
        BenchSettings settings = BenchSettings.fromSystemProperties();
        Path report = run(settings);
        System.out.println("Report: " + report.resolve("index.html"));
        // fixtures stop their servers in shutdown hooks; peer clients leave non-daemon threads behind
        System.exit(0);
    }

    /** Runs the comparison and writes the report; returns the report directory. */
    public static Path run(BenchSettings settings) throws IOException, InterruptedException {
        Progress progress = new Progress(System.out);
        progress.line("bench", "comparison run, " + settings.describe());
        TckMatrices.Found matrix = TckMatrices.find(settings.projectRoot(), settings.matrixDir());
        progress.line("bench", matrix.note());
        CompareRun run = new CompareRun(settings, progress);
        List<Figures.BackendSection> sections = new ArrayList<>();
        for (String key : settings.backends()) {
            sections.add(run.backend(key, matrix));
        }
        Figures.Run figures = new Figures.Run(
                SCHEMA,
                Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
                Machine.describe(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                settings.quick(),
                settings.describe(),
                matrix.note(),
                sections,
                progress.elapsedSeconds());
        new ReportWriter(figures).writeTo(settings.out());
        progress.line(
                "bench", String.format(Locale.ROOT, "done in %.0f s: %s", progress.elapsedSeconds(), settings.out()));
        return settings.out();
    }

    private Figures.BackendSection backend(String key, TckMatrices.Found matrix) throws InterruptedException {
        double started = progress.elapsedSeconds();
        progress.line(key, "looking for a server");
        BackendUnderTest backend;
        try {
            backend = open(key);
        } catch (RuntimeException | AssertionError | LinkageError e) {
            // a fixture aborts (TestAbortedException) where no server is found, and fails (CI=true) likewise
            boolean missing = e.getClass().getName().startsWith("org.opentest4j.");
            String reason = missing
                    ? "not available here: " + Redaction.message(e.getMessage())
                    : "could not be started: " + Measurements.describe(e);
            progress.line(key, reason);
            return new Figures.BackendSection(
                    key,
                    BenchSettings.TITLES.get(key),
                    false,
                    "",
                    reason,
                    List.of(),
                    List.of(),
                    "",
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    progress.elapsedSeconds() - started);
        }
        try (backend) {
            return measure(backend, matrix, started);
        }
    }

    private static BackendUnderTest open(String key) {
        Supplier<BackendUnderTest> how = switch (key) {
            case "postgres" -> PostgresUnderTest::new;
            case "mariadb" -> MariaDbUnderTest::new;
            case "redis" -> RedisUnderTest::new;
            case "etcd" -> EtcdUnderTest::new;
            case "mongo" -> MongoUnderTest::new;
            case "zookeeper" -> ZooKeeperUnderTest::new;
            default -> throw new IllegalArgumentException("unknown backend '" + key + "'");
        };
        return how.get();
    }

    private Figures.BackendSection measure(BackendUnderTest backend, TckMatrices.Found matrix, double started)
            throws InterruptedException {
        String key = backend.key();
        progress.line(key, backend.description());
        List<String> errors = new ArrayList<>();
        Set<Capability> capabilities = EnumSet.noneOf(Capability.class);
        try (LockBackend probe = backend.openBackend()) {
            capabilities.addAll(probe.capabilities());
        } catch (RuntimeException e) {
            errors.add("capabilities: " + Measurements.describe(e));
        }
        List<String> notClaimed = new ArrayList<>();
        for (Capability c : Capability.values()) {
            if (!capabilities.contains(c)) {
                notClaimed.add(c + ": " + WITHOUT.get(c));
            }
        }
        List<LockContender.Factory> contenders = backend.contenders();

        List<Figures.Latency> latency = new ArrayList<>();
        if (settings.runs("latency")) {
            progress.line(
                    key,
                    "latency: "
                            + contenders.stream()
                                    .map(LockContender.Factory::label)
                                    .toList());
            latency.addAll(measurements.latency(contenders, errors));
        }

        // cell key (contender, names, clients) -> its passes, in the order first measured
        Map<String, List<Double>> passes = new LinkedHashMap<>();
        Map<String, List<Double>> clientCpu = new HashMap<>();
        Map<String, List<Double>> serverCpu = new HashMap<>();
        Map<String, List<Double>> attempts = new HashMap<>();
        CpuMeter cpu = new CpuMeter(backend.serverPid());
        Map<String, Double> longestWaits = new HashMap<>();
        Map<String, Figures.Throughput> cells = new LinkedHashMap<>();
        Set<String> failed = new HashSet<>();
        int throughputRounds = settings.runs("throughput") ? settings.throughputRounds() : 0;
        // Round -1, in full mode: every contender's cells once, unmeasured. Without it pass 1 runs its first
        // contender (fencelock) on a cold JVM and server, while the provider alone after it finds the provider's
        // and the client library's code compiled: a bias of every pass 1 against whoever runs first.
        for (int round = throughputRounds > 1 ? -1 : 0; round < throughputRounds; round++) {
            boolean counted = round >= 0;
            List<LockContender.Factory> order = new ArrayList<>(contenders);
            if (round % 2 == 1) {
                Collections.reverse(order);
            }
            for (LockContender.Factory f : order) {
                if (failed.contains(f.label())) {
                    continue;
                }
                progress.line(
                        key,
                        "throughput: " + f.label()
                                + (!counted
                                        ? " (warm-up round, not counted)"
                                        : throughputRounds > 1
                                                ? " (pass " + (round + 1) + " of " + throughputRounds + ")"
                                                : ""));
                // counting: how many attempts a grant costs is what tells a local queue from a stampede
                try (LockContender c = f.openCounting()) {
                    measurements.warm(c, f.label());
                    for (boolean hot : new boolean[] {false, true}) {
                        for (int clients : settings.clientCounts()) {
                            String names = hot ? "one hot name" : "independent names";
                            if (!counted) {
                                measurements.warmCell(c, f.label(), clients, hot);
                                continue;
                            }
                            String cell = f.label() + '|' + names + '|' + clients;
                            List<Double> cellPasses = passes.computeIfAbsent(cell, k -> new ArrayList<>());
                            Measurements.Pass pass = measurements.throughput(c, f.label(), clients, hot, cpu);
                            cellPasses.add(pass.perSecond());
                            List<Double> cellClientCpu = clientCpu.computeIfAbsent(cell, k -> new ArrayList<>());
                            cellClientCpu.add(pass.clientCpuMicros());
                            List<Double> cellServerCpu = serverCpu.computeIfAbsent(cell, k -> new ArrayList<>());
                            cellServerCpu.add(pass.serverCpuMicros());
                            List<Double> cellAttempts = attempts.computeIfAbsent(cell, k -> new ArrayList<>());
                            cellAttempts.add(pass.attemptsPerGrant());
                            double longestWait = longestWaits.merge(cell, pass.longestWaitMs(), Math::max);
                            cells.put(
                                    cell,
                                    Figures.Throughput.of(
                                            f.label(),
                                            f.kind().name().toLowerCase(Locale.ROOT),
                                            names,
                                            clients,
                                            cellPasses,
                                            longestWait,
                                            cellClientCpu,
                                            cellServerCpu,
                                            cellAttempts));
                        }
                    }
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    failed.add(f.label());
                    errors.add(f.label() + " throughput: " + Measurements.describe(e));
                }
            }
        }
        List<Figures.Throughput> throughput = new ArrayList<>(cells.values());

        List<Figures.HandOff> handOff = new ArrayList<>();
        for (LockContender.Factory f : settings.runs("handoff") ? contenders : List.<LockContender.Factory>of()) {
            progress.line(key, "hand-off: " + f.label());
            measured(errors, f.label() + " hand-off", () -> measurements.handOff(f))
                    .ifPresent(handOff::add);
        }

        List<String> notes = new ArrayList<>();
        notes.add(whatPeersLeaveToYou(key));
        for (LockContender.Factory f : contenders) {
            String setup = PeerSetups.of(f.label());
            if (setup != null) {
                notes.add("how " + f.label() + " is set up: " + setup);
            }
        }
        List<Figures.Renewal> renewal = new ArrayList<>();
        if (settings.runs("renewal")) {
            Set<Integer> leaseCounts = new java.util.LinkedHashSet<>();
            for (int asked : settings.renewalLeaseCounts()) {
                leaseCounts.add(Math.min(asked, backend.maxRenewedLeases()));
            }
            if (!leaseCounts.containsAll(settings.renewalLeaseCounts())) {
                notes.add("renewal held at most " + backend.maxRenewedLeases() + " leases here, not "
                        + settings.renewalLeaseCounts()
                                .get(settings.renewalLeaseCounts().size() - 1) + ": "
                        + backend.limitReason());
            }
            for (int leases : leaseCounts) {
                progress.line(key, "renewal: " + leases + " held leases");
                measured(errors, "renewal of " + leases + " leases", () -> measurements.renewal(backend, leases))
                        .ifPresent(renewal::add);
            }
        }

        List<Figures.Takeover> takeover = new ArrayList<>();
        if (settings.runs("takeover")) {
            progress.line(
                    key,
                    "takeover after a holder crash, TTL "
                            + settings.takeoverTtl().toSeconds() + " s");
            measured(
                            errors,
                            "takeover",
                            () -> measurements.takeover(backend, settings.takeoverTtl(), settings.takeoverSamples()))
                    .ifPresent(takeover::add);
        }

        List<Figures.Coordination> coordination = new ArrayList<>();
        if (settings.runs("coordination")) {
            progress.line(
                    key,
                    "leader failover and task rebalance, TTL "
                            + settings.takeoverTtl().toSeconds() + " s");
            measured(
                            errors,
                            "leader failover and task rebalance",
                            () -> CoordinationMeasurements.measure(
                                    backend, settings.takeoverTtl(), settings.takeoverSamples()))
                    .ifPresent(coordination::add);
        }

        List<Figures.Throughput> shared = new ArrayList<>();
        if (settings.runs("shared")) {
            if (capabilities.contains(Capability.SHARED_LOCKS)) {
                progress.line(key, "shared locks: read-write lock and semaphore throughput");
                measured(errors, "shared locks", () -> SharedMeasurements.measure(backend, settings))
                        .ifPresent(shared::addAll);
            } else {
                notes.add(
                        "shared locks: SHARED_LOCKS not claimed by this provider: no semaphore or read-write figures");
            }
        }

        List<Figures.Scale> scale = new ArrayList<>();
        if (settings.runs("scale")) {
            long large = settings.scaleLarge(backend);
            if (large < 1_000_000) {
                notes.add(
                        settings.quick()
                                ? "scale: quick mode fills " + large + " names, not 1M"
                                : "scale: filled " + large + " names, not 1M: " + backend.limitReason());
            }
            try {
                long filled = 0;
                for (long target : List.of(settings.scaleSmall(), large)) {
                    progress.line(key, "scale: filling to " + target + " lock names");
                    long fillStart = System.nanoTime();
                    backend.fill(filled, target);
                    double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
                    filled = target;
                    scale.add(measurements.scale(backend, target, fillSeconds, errors));
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                errors.add("scale: " + Measurements.describe(e));
            }
        }

        double seconds = progress.elapsedSeconds() - started;
        progress.line(
                key,
                String.format(
                        Locale.ROOT,
                        "done in %.0f s%s",
                        seconds,
                        errors.isEmpty() ? "" : " (" + errors.size() + " error(s), see the report)"));
        List<String> capabilityNames = capabilities.stream().map(Enum::name).toList();
        return new Figures.BackendSection(
                key,
                backend.title(),
                true,
                backend.description(),
                "",
                capabilityNames,
                notClaimed,
                backend.rawPrimitiveDescription(),
                latency,
                throughput,
                handOff,
                renewal,
                takeover,
                coordination,
                scale,
                shared,
                notes,
                backend.peersNotMeasured(),
                matrix.forPackage(backend.providerPackage()),
                errors,
                seconds);
    }

    /** One measurement of a workload, which may fail. */
    @FunctionalInterface
    private interface Measurement<T> {
        T take() throws Exception;
    }

    /**
     * Takes {@code measurement}; a failure becomes one of the backend's errors ("{@code what}: why") and
     * the run goes on, an interrupt ends it.
     */
    private static <T> Optional<T> measured(List<String> errors, String what, Measurement<T> measurement)
            throws InterruptedException {
        try {
            return Optional.of(measurement.take());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            errors.add(what + ": " + Measurements.describe(e));
            return Optional.empty();
        }
    }

    /** The check at the resource, which no peer library does: what lock-fencing offers for this backend's data. */
    static String whatPeersLeaveToYou(String key) {
        String guard = switch (key) {
            case "postgres", "mariadb" ->
                "JdbcFence (one conditional upsert per write) and TableFence (a trigger on"
                        + " every write path) refuse stale tokens in the database itself";
            case "redis" ->
                "RedisFence (SET/HSET/DEL in one Lua script that compares the key's token) refuses them in Redis";
            default ->
                "TokenGuard (the Fencing-Token header) refuses them in the service that owns the data,"
                        + " or JdbcFence / RedisFence where it lives in SQL or Redis";
        };
        return "what peers leave to you: checking the fencing token where the data lives. ShedLock and Spring"
                + " Integration hand out no token, Redisson's RFencedLock and jetcd a token nothing checks;"
                + " lock-fencing's " + guard + ".";
    }
}
