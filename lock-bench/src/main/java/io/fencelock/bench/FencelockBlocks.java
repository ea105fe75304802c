package io.fencelock.bench;

import io.fencelock.bench.Blocks.Block;
import io.fencelock.bench.Blocks.Bullets;
import io.fencelock.bench.Blocks.Chart;
import io.fencelock.bench.Blocks.Heading;
import io.fencelock.bench.Blocks.Table;
import io.fencelock.bench.Blocks.Text;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The parts of a backend's section beyond the exclusive-lock workloads: shared locks, renewal,
 * takeover, coordination, scale, and the guarantees (capabilities and the TCK's matrix).
 */
final class FencelockBlocks {
    private FencelockBlocks() {}

    static void shared(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Shared locks: throughput"));
        if (s.shared().isEmpty()) {
            b.add(new Text(
                    !s.capabilities().contains("SHARED_LOCKS")
                            ? "Not claimed: this provider does not implement semaphores or read-write locks"
                                    + " (SHARED_LOCKS), so there is nothing to measure."
                            : s.errors().stream().anyMatch(e -> e.startsWith("shared locks:"))
                                    ? "Not measured (see the errors below)."
                                    : "Not measured: this run left the workload out."));
            return;
        }
        List<List<String>> rows = new ArrayList<>();
        Set<String> workloads = new LinkedHashSet<>();
        Map<String, String> roles = new LinkedHashMap<>();
        for (Figures.Throughput t : s.shared()) {
            workloads.add(t.names());
            roles.putIfAbsent(t.contender(), Cells.role(t.contender(), t.kind()));
            double fencelock = s.shared().stream()
                    .filter(f -> f.names().equals(t.names()) && f.kind().equals("fencelock"))
                    .mapToDouble(Figures.Throughput::cyclesPerSecond)
                    .findFirst()
                    .orElse(0);
            rows.add(List.of(
                    t.names(),
                    t.contender(),
                    Cells.Value.of(t).text(),
                    t.kind().equals("fencelock") ? "1" : Cells.ratio(fencelock, t.cyclesPerSecond())));
        }
        b.add(new Table(
                List.of("workload", "implementation", "cycles/s, median (min–max of passes)", "fencelock / this"),
                rows));
        List<Svg.Row> bars = new ArrayList<>();
        roles.forEach((contender, role) -> bars.add(new Svg.Row(
                contender,
                role,
                workloads.stream()
                        .map(w -> s.shared().stream()
                                .filter(t -> t.contender().equals(contender)
                                        && t.names().equals(w))
                                .findFirst()
                                .map(Cells.Value::of)
                                .orElse(null))
                        .toList())));
        b.add(new Chart(Svg.panels(s.title() + ": shared locks", "cycles/s", false, List.copyOf(workloads), bars)));
        b.add(new Text(SharedMeasurements.THREADS + " threads in " + SharedMeasurements.INSTANCES
                + " clients on one name, each cycle an acquire and a release around an empty critical section;"
                + " a write is one cycle in ten of the read-write workload. 'Provider alone' retries the SPI's"
                + " tryAcquireShared at once on a refusal (no engine, no writer's intent). None of these"
                + " backends has a semaphore or read-write lock with expiry as one native command, so the"
                + " provider alone is the baseline; PostgreSQL's pg_advisory_lock_shared belongs to a session"
                + " and never expires, so it is not comparable."));
    }

    static void renewal(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Renewal cost (fencelock)"));
        List<List<String>> rows = new ArrayList<>();
        for (Figures.Renewal r : s.renewal()) {
            rows.add(List.of(
                    Cells.count(r.leases()),
                    Cells.number(r.roundTripsPerInterval()),
                    Cells.number(r.meanBatch()),
                    Cells.count(r.largestBatch()),
                    Cells.number(r.renewCallMs()),
                    Cells.number(r.acquireAllSeconds()),
                    Integer.toString(r.leasesLost())));
        }
        b.add(new Table(
                List.of(
                        "held leases",
                        "renew round trips per interval (TTL/3)",
                        "mean batch",
                        "largest batch",
                        "largest batch took, ms (median)",
                        "taking them all, s",
                        "leases lost"),
                rows));
        b.add(new Text("Leases taken one after the other over several seconds fall due at different moments, so"
                + " the watchdog may renew them in more than one batch per interval; every batch is one round trip."));
    }

    static void takeover(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Takeover after a holder crash (fencelock)"));
        List<List<String>> rows = new ArrayList<>();
        for (Figures.Takeover t : s.takeover()) {
            rows.add(List.of(
                    Long.toString(t.ttlMs()),
                    Cells.number(t.medianTakeoverMs()),
                    Cells.number(t.medianAfterTtlMs()),
                    Cells.number(t.maxAfterTtlMs()),
                    Integer.toString(t.samples())));
        }
        b.add(new Table(
                List.of(
                        "TTL ms",
                        "median: acquire → waiter holds, ms",
                        "median after the TTL, ms",
                        "worst after the TTL, ms",
                        "samples"),
                rows));
    }

    static void coordination(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Leader election and task spreading (fencelock)"));
        List<List<String>> rows = new ArrayList<>();
        for (Figures.Coordination c : s.coordination()) {
            rows.add(List.of(
                    Long.toString(c.ttlMs()),
                    Long.toString(c.monitorPeriodMs()),
                    Cells.number(c.leaderFailoverMs()),
                    Cells.number(c.resignHandOverMs()),
                    Cells.number(c.crashedInstanceTasksMovedMs()),
                    Cells.number(c.joinRebalanceMs()),
                    Integer.toString(c.samples())));
        }
        b.add(new Table(
                List.of(
                        "TTL ms",
                        "monitor period ms",
                        "leader crashed → next leads, ms",
                        "leader resigned → next leads, ms",
                        "instance crashed → its tasks run elsewhere, ms",
                        "instance joined → holds its share, ms",
                        "samples"),
                rows));
        b.add(new Text(
                "Medians. A crash is the connections going away under a running client: only the backend's expiry"
                        + " frees its locks. Three instances share six tasks; a fourth joins after the crash."));
    }

    static void scale(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Scale: acquire + release with many lock names (fencelock and the raw primitive)"));
        List<List<String>> rows = new ArrayList<>();
        List<Svg.Row> bars = new ArrayList<>();
        for (Figures.Scale sc : s.scale()) {
            Optional<Figures.Latency> fl = Cells.scale(sc, "fencelock");
            Optional<Figures.Latency> raw = Cells.scale(sc, "raw");
            rows.add(List.of(
                    Cells.count(sc.existingNames()),
                    fl.map(l -> Cells.Value.p50(l).text()).orElse("–"),
                    fl.map(l -> Cells.number(l.p99Us())).orElse("–"),
                    raw.map(l -> Cells.Value.p50(l).text()).orElse("–"),
                    fl.isPresent() && raw.isPresent()
                            ? Cells.ratio(fl.get().p50Us(), raw.get().p50Us())
                            : "–",
                    Cells.number(sc.fillSeconds()),
                    fl.map(l -> Long.toString(l.cycles())).orElse("–")));
            for (Figures.Latency l : sc.latency()) {
                bars.add(new Svg.Row(
                        Cells.count(sc.existingNames()) + " names",
                        l.contender(),
                        List.of(Cells.Value.p50(l), Cells.Value.single(l.p99Us()))));
            }
        }
        b.add(new Table(
                List.of(
                        "existing names",
                        "fencelock p50 µs",
                        "fencelock p99 µs",
                        "raw primitive p50 µs",
                        "fencelock / raw",
                        "fill time s",
                        "cycles each"),
                rows));
        if (!bars.isEmpty()) {
            b.add(new Chart(Svg.panels(
                    s.title() + ": acquire + release by lock names on the backend",
                    "µs",
                    true,
                    List.of("p50", "p99"),
                    bars)));
        }
        b.add(new Text("Measured as the latency workload is: fencelock and the raw primitive in turns, p50 with the"
                + " lowest and highest p50 of the interleaved rounds. Where the raw primitive slows down with the names"
                + " as fencelock does, the server pays for the records, not the provider's statements."));
    }

    static void guarantees(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Guarantees"));
        b.add(new Text("Capabilities declared: "
                + (s.capabilities().isEmpty() ? "none" : String.join(", ", s.capabilities())) + "."));
        if (!s.notClaimed().isEmpty()) {
            b.add(new Bullets(
                    s.notClaimed().stream().map(n -> "Not claimed: " + n).toList()));
        }
        if (s.guarantees().isEmpty()) {
            b.add(new Text("TCK matrix not found for this backend: run `bash scripts/test-all.sh` first."));
        }
        for (TckMatrices.Suite suite : s.guarantees()) {
            matrix(b, suite);
        }
    }

    private static void matrix(List<Block> b, TckMatrices.Suite suite) {
        b.add(new Text("TCK suite " + suite.suite() + " on " + suite.backend() + " (" + suite.generatedAt() + "):"));
        Set<String> faults = new LinkedHashSet<>();
        Map<String, Map<String, String>> byProperty = new LinkedHashMap<>();
        List<String> plain = new ArrayList<>();
        for (TckMatrices.Entry e : suite.results()) {
            faults.add(e.fault());
            byProperty
                    .computeIfAbsent(e.property(), p -> new LinkedHashMap<>())
                    .merge(e.fault(), e.verdict(), (x, y) -> x + ", " + y);
            if (!e.plain().isBlank()) {
                plain.add(e.property() + ": " + e.plain());
            }
        }
        List<String> header = new ArrayList<>(List.of("property"));
        header.addAll(faults);
        List<List<String>> rows = new ArrayList<>();
        byProperty.forEach((property, verdicts) -> {
            List<String> row = new ArrayList<>(List.of(property));
            faults.forEach(f -> row.add(verdicts.getOrDefault(f, "")));
            rows.add(row);
        });
        b.add(new Table(header, rows, "matrix"));
        if (!plain.isEmpty()) {
            b.add(new Bullets(plain));
        }
    }
}
