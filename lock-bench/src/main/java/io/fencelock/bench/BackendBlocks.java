package io.fencelock.bench;

import io.fencelock.bench.Blocks.Block;
import io.fencelock.bench.Blocks.Bullets;
import io.fencelock.bench.Blocks.Chart;
import io.fencelock.bench.Blocks.Heading;
import io.fencelock.bench.Blocks.Table;
import io.fencelock.bench.Blocks.Text;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * One backend's section of the report: per workload a table and a chart on the backend's own scale
 * (latency, throughput on own names and on one hot name, hand-off, shared locks); the fencelock-only
 * measurements (renewal, takeover, coordination, scale) are in {@link FencelockBlocks}.
 */
final class BackendBlocks {
    private static final List<Integer> CLIENTS = List.of(1, 8, 64);

    private BackendBlocks() {}

    static void section(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(2, s.title()));
        if (!s.available()) {
            b.add(new Text(s.unavailableReason()));
            return;
        }
        b.add(new Text("Server: " + s.description() + ". Raw primitive: " + s.rawPrimitive() + "."));
        latency(b, s);
        throughput(b, s, Cells.OWN, "Throughput, own names: acquire + release cycles per second");
        throughput(b, s, Cells.HOT, "Throughput, one hot name: acquire + release cycles per second");
        handOff(b, s);
        FencelockBlocks.shared(b, s);
        FencelockBlocks.renewal(b, s);
        FencelockBlocks.takeover(b, s);
        FencelockBlocks.coordination(b, s);
        FencelockBlocks.scale(b, s);
        FencelockBlocks.guarantees(b, s);
        if (!s.notes().isEmpty()) {
            b.add(new Heading(3, "Notes"));
            b.add(new Bullets(s.notes()));
        }
        if (!s.peersNotMeasured().isEmpty()) {
            b.add(new Heading(3, "Peers not measured"));
            b.add(new Bullets(s.peersNotMeasured()));
        }
        if (!s.errors().isEmpty()) {
            b.add(new Heading(3, "Errors during the run"));
            b.add(new Bullets(s.errors()));
        }
    }

    private static void latency(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Latency: uncontended acquire + release"));
        Optional<Figures.Latency> fl = Cells.latency(s, Cells.FENCELOCK);
        Optional<Figures.Latency> raw = Cells.rawLatency(s);
        List<List<String>> rows = new ArrayList<>();
        List<Svg.Row> bars = new ArrayList<>();
        for (Figures.Latency l : s.latency()) {
            String vs = switch (Cells.role(l.contender(), l.kind())) {
                case "raw" ->
                    raw.get() == l
                            ? "the limit"
                            : Cells.ratio(l.p50Us(), raw.get().p50Us()) + " of raw";
                case "peer" ->
                    fl.map(f -> Cells.ratio(l.p50Us(), f.p50Us()) + " of fencelock")
                            .orElse("–");
                default ->
                    raw.map(r -> Cells.ratio(l.p50Us(), r.p50Us()) + " of raw").orElse("–");
            };
            rows.add(List.of(
                    l.contender(),
                    Cells.Value.p50(l).text(),
                    Cells.number(l.p99Us()),
                    Cells.number(l.p999Us()),
                    vs,
                    Cells.number(l.outsideCalls()),
                    Long.toString(l.cycles())));
            bars.add(new Svg.Row(
                    l.contender(),
                    Cells.role(l.contender(), l.kind()),
                    List.of(Cells.Value.p50(l), Cells.Value.single(l.p99Us()))));
        }
        b.add(new Table(
                List.of(
                        "implementation",
                        "p50 µs (min–max of the rounds)",
                        "p99 µs",
                        "p99.9 µs",
                        "p50 ratio",
                        "outside the backend's calls, p50 µs",
                        "cycles"),
                rows));
        if (!bars.isEmpty()) {
            b.add(new Chart(Svg.panels(
                    s.title() + ": uncontended acquire + release", "µs", true, List.of("p50", "p99"), bars)));
        }
    }

    private static void throughput(List<Block> b, Figures.BackendSection s, String names, String title) {
        b.add(new Heading(3, title));
        boolean hot = names.equals(Cells.HOT);
        Set<String> contenders = new LinkedHashSet<>();
        s.throughput().stream().filter(t -> t.names().equals(names)).forEach(t -> contenders.add(t.contender()));
        List<List<String>> rows = new ArrayList<>();
        List<Svg.Row> bars = new ArrayList<>();
        for (String c : contenders) {
            List<String> row = new ArrayList<>(List.of(c));
            List<Cells.Value> values = new ArrayList<>();
            String kind = "peer";
            for (int clients : CLIENTS) {
                Optional<Figures.Throughput> t = Cells.throughput(s, c, names, clients);
                row.add(t.map(x -> Cells.Value.of(x).text()).orElse("–"));
                values.add(t.map(Cells.Value::of).orElse(null));
                kind = t.map(Figures.Throughput::kind).orElse(kind);
            }
            double at8 = Cells.perSecond(s, c, names, 8);
            row.add(
                    c.equals(Cells.RAW)
                            ? "the limit"
                            : kind.equals("peer")
                                    ? Cells.ratio(at8, Cells.perSecond(s, Cells.FENCELOCK, names, 8)) + " of fencelock"
                                    : Cells.ratio(at8, Cells.perSecond(s, Cells.RAW, names, 8)) + " of raw");
            if (hot) {
                double longest = s.throughput().stream()
                        .filter(t -> t.contender().equals(c) && t.names().equals(names))
                        .mapToDouble(Figures.Throughput::longestWaitMs)
                        .filter(w -> w > 0)
                        .max()
                        .orElse(Double.NaN);
                row.add(Cells.number(longest));
                row.add(Cells.attemptsPerGrant(s, c, names));
            }
            row.add(Cells.cpuPerCycle(Cells.throughput(s, c, names, 8)));
            rows.add(row);
            bars.add(new Svg.Row(c, Cells.role(c, kind), values));
        }
        List<String> header = new ArrayList<>(List.of("implementation"));
        Cells.clientsText(CLIENTS).forEach(header::add);
        header.add("8 clients: ratio");
        if (hot) {
            header.add("longest wait of one thread, ms");
            header.add("attempts per grant, 8 · 64 clients");
        }
        header.add("8 clients: CPU µs per cycle, client · server");
        b.add(new Table(header, rows));
        List<String> unsteady = s.throughput().stream()
                .filter(t -> t.names().equals(names) && t.unsteady())
                .map(t -> t.contender() + ", " + t.clients() + (t.clients() == 1 ? " client: " : " clients: ")
                        + String.format(Locale.ROOT, "%.0f%%", t.spread() * 100))
                .toList();
        int passes = s.throughput().stream()
                .mapToInt(Figures.Throughput::passes)
                .max()
                .orElse(1);
        String longestWait = hot
                ? " Longest wait: of one thread, from its release to its next grant, within the measured time"
                        + " (a wait still running at the end counts up to the end); the most of any pass."
                        + " Attempts per grant: the lock attempts the client sent its backend (a hand-over counts as"
                        + " one) per cycle completed, the median of the passes; 1.00 is no attempt wasted, and a"
                        + " crowd of waiters that polls the name shows as more; – where the library waits inside itself"
                        + " and the bench cannot count."
                : "";
        b.add(new Text((passes > 1
                        ? "Each cell: the median of its passes (min–max). Cells marked * spread more than "
                                + Math.round(Figures.UNSTEADY_SPREAD * 100)
                                + "% of their median: too noisy to rank"
                                + (unsteady.isEmpty() ? " (none here)." : ": " + String.join("; ", unsteady) + ".")
                        : "One pass per cell (quick mode): no spread to report.")
                + longestWait
                + " CPU per cycle: the bench's process (the client, and "
                + (s.key().equals("mongo") ? "here the in-JVM server too" : "an in-JVM server")
                + ") and the server's processes (where this run started the server) over the measured time,"
                + " divided by the cycles; where client and server keep the machine's shared cores busy, a throughput ratio"
                + " follows the inverse ratio of their sums."));
        if (!bars.isEmpty()) {
            b.add(new Chart(Svg.panels(
                    s.title() + ": " + (hot ? "one hot name" : "own names"),
                    "cycles/s",
                    false,
                    Cells.clientsText(CLIENTS),
                    bars)));
        }
    }

    private static void handOff(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(3, "Hand-off: release → the waiting client holds"));
        List<List<String>> rows = new ArrayList<>();
        for (Figures.HandOff h : s.handOff()) {
            rows.add(List.of(
                    h.contender(),
                    h.waitsBy(),
                    Cells.number(h.p50Ms()),
                    Cells.number(h.p99Ms()),
                    Cells.number(h.maxMs()),
                    h.counted() ? Cells.number(h.attemptsPerSecondWaiting()) : "not counted",
                    h.counted() ? Cells.number(h.attemptsPerHandOff()) : "not counted",
                    Integer.toString(h.samples())));
        }
        b.add(new Table(
                List.of(
                        "implementation",
                        "waiter learns of the release by",
                        "p50 ms",
                        "p99 ms",
                        "max ms",
                        "waiter's attempts per s of waiting",
                        "attempts per hand-off",
                        "samples"),
                rows));
        if (!s.handOff().isEmpty()) {
            b.add(new Chart(Svg.panels(
                    s.title() + ": hand-off",
                    "ms",
                    true,
                    List.of("p50", "p99"),
                    s.handOff().stream()
                            .map(h -> new Svg.Row(
                                    h.contender(),
                                    Cells.role(h.contender(), h.kind()),
                                    List.of(Cells.Value.single(h.p50Ms()), Cells.Value.single(h.p99Ms()))))
                            .toList())));
        }
    }
}
