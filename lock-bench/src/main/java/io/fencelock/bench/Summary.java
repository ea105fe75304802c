package io.fencelock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * The report's first screen: per workload and backend, which library leads (fencelock or a peer;
 * the raw primitive and the provider alone are baselines, not libraries) and by how much, with the
 * spread of the passes. A cell whose leader or runner-up spread more than
 * {@link Figures#UNSTEADY_SPREAD} of its median is not ranked, the run could not settle it, unless
 * the leader was ahead in every pass (or latency round) the two ran side by side: the machine's
 * drift then moved both alike, and the order held throughout.
 */
final class Summary {
    /**
     * One library's figure in one workload, and its passes (or latency rounds) in the order run, which pair
     * with the other libraries' of the same workload: empty or null (a report from before) where there is nothing
     * to pair.
     */
    private record Entry(String label, Cells.Value value, List<Double> sideBySide) {
        Entry(String label, Cells.Value value) {
            this(label, value, List.of());
        }
    }

    private record Workload(
            String title, String unit, boolean lowerIsBetter, Function<Figures.BackendSection, List<Entry>> entries) {}

    /** One cell of the summary, as report.json carries it. */
    record Ranking(
            String workload,
            String backend,
            String leader,
            String runnerUp,
            double factor,
            boolean rankable,
            String text) {}

    private Summary() {}

    static List<Ranking> rankings(Figures.Run run) {
        List<Ranking> out = new ArrayList<>();
        for (Workload w : workloads(run)) {
            for (Figures.BackendSection s : run.backends()) {
                if (s.available()) {
                    out.add(rank(w, s));
                }
            }
        }
        return out;
    }

    static void blocks(Figures.Run run, List<Ranking> rankings, List<Blocks.Block> b) {
        List<Figures.BackendSection> available = run.backends().stream()
                .filter(Figures.BackendSection::available)
                .toList();
        b.add(new Blocks.Heading(2, "Summary: who leads, per workload and backend"));
        List<String> header = new ArrayList<>(List.of("workload"));
        available.forEach(s -> header.add(s.title()));
        List<List<String>> rows = new ArrayList<>();
        for (Workload w : workloads(run)) {
            List<String> row = new ArrayList<>(List.of(
                    w.title() + "\n" + w.unit() + (w.lowerIsBetter() ? ", lower is better" : ", higher is better")));
            rankings.stream().filter(r -> r.workload().equals(w.title())).forEach(r -> row.add(r.text()));
            rows.add(row);
        }
        if (!available.isEmpty()) {
            b.add(new Blocks.Table(header, rows, "grid"));
        }
        List<String> absent = run.backends().stream()
                .filter(s -> !s.available())
                .map(Figures.BackendSection::title)
                .toList();
        b.add(new Blocks.Text("Libraries only: fencelock against the peers (the raw primitive and the provider alone"
                + " are in each backend's section). Figures: median (min–max of the passes; for latency, of the"
                + " p50s of its interleaved rounds)"
                + (run.quick()
                        ? "; quick mode runs one pass per throughput cell, so there is no spread: indicative only"
                        : "")
                + ". Not rankable: the leader's or runner-up's passes spread more than "
                + Math.round(Figures.UNSTEADY_SPREAD * 100) + "% of the median, and the leader was not ahead in every"
                + " pass (or round) the two ran side by side."
                + (absent.isEmpty() ? "" : " Not available in this run: " + String.join(", ", absent) + ".")));
    }

    private static List<Workload> workloads(Figures.Run run) {
        List<Workload> w = new ArrayList<>();
        w.add(new Workload(
                "Uncontended acquire + release, p50",
                "µs",
                true,
                s -> s.latency().stream()
                        .filter(l -> Cells.isLibrary(l.contender(), l.kind()))
                        .map(l -> new Entry(l.contender(), Cells.Value.p50(l), l.roundP50sUs()))
                        .toList()));
        for (String names : List.of(Cells.OWN, Cells.HOT)) {
            for (int clients : List.of(8, 64)) {
                w.add(new Workload(
                        "Throughput, " + (names.equals(Cells.OWN) ? "own names" : "one hot name") + ", " + clients
                                + " clients",
                        "cycles/s",
                        false,
                        s -> s.throughput().stream()
                                .filter(t -> t.names().equals(names)
                                        && t.clients() == clients
                                        && Cells.isLibrary(t.contender(), t.kind()))
                                .map(t -> new Entry(t.contender(), Cells.Value.of(t), t.passesPerSecond()))
                                .toList()));
            }
        }
        w.add(new Workload(
                "Hand-off, p50 (release → the waiter holds)",
                "ms",
                true,
                s -> s.handOff().stream()
                        .filter(h -> Cells.isLibrary(h.contender(), h.kind()))
                        .map(h -> new Entry(h.contender(), Cells.Value.single(h.p50Ms())))
                        .toList()));
        Set<String> shared = new LinkedHashSet<>();
        run.backends().forEach(s -> s.shared().forEach(t -> shared.add(t.names())));
        for (String workload : shared) {
            w.add(new Workload(
                    "Shared locks: " + workload,
                    "cycles/s",
                    false,
                    s -> s.shared().stream()
                            .filter(t -> t.names().equals(workload) && Cells.isLibrary(t.contender(), t.kind()))
                            .map(t -> new Entry(t.contender(), Cells.Value.of(t)))
                            .toList()));
        }
        return w;
    }

    private static Ranking rank(Workload w, Figures.BackendSection s) {
        Comparator<Entry> best = Comparator.comparingDouble(e -> e.value().median());
        List<Entry> entries = w.entries().apply(s).stream()
                .filter(e -> !Double.isNaN(e.value().median()))
                .sorted(w.lowerIsBetter() ? best : best.reversed())
                .toList();
        if (entries.isEmpty()) {
            return new Ranking(w.title(), s.key(), "", "", Double.NaN, false, "not measured");
        }
        Entry leader = entries.get(0);
        if (entries.size() == 1) {
            return new Ranking(
                    w.title(),
                    s.key(),
                    leader.label(),
                    "",
                    Double.NaN,
                    false,
                    "no peer here\n" + leader.label() + " " + leader.value().text());
        }
        Entry next = entries.get(1);
        double factor = w.lowerIsBetter()
                ? next.value().median() / leader.value().median()
                : leader.value().median() / next.value().median();
        // in how many of the passes (or rounds) they ran side by side the leader was ahead
        Cells.Pairs ahead = Cells.pairs(
                Arrays.asList(leader.sideBySide(), next.sideBySide()),
                v -> w.lowerIsBetter() ? v[0] < v[1] : v[0] > v[1]);
        boolean steady = !leader.value().noisy() && !next.value().noisy();
        boolean rankable = steady || ahead.any() && ahead.held() == ahead.counted();
        String passes = ahead.any() ? "ahead in " + ahead.text(unitOf(w)) : "";
        String by = Double.isFinite(factor)
                ? String.format(Locale.ROOT, "%.2fx over ", factor) + next.label()
                : "; " + next.label() + " completed none";
        String text = rankable
                ? leader.label() + " leads" + (by.startsWith(";") ? by : ", " + by)
                        + (passes.isEmpty() ? "" : " (" + passes + ")") + "\n"
                        + leader.value().text() + " vs " + next.value().text()
                : "not rankable: passes spread over " + Math.round(Figures.UNSTEADY_SPREAD * 100) + "%"
                        + (passes.isEmpty() ? "" : ", " + leader.label() + " " + passes) + "\n"
                        + leader.label() + " " + leader.value().text() + "\n" + next.label() + " "
                        + next.value().text();
        return new Ranking(w.title(), s.key(), leader.label(), next.label(), factor, rankable, text);
    }

    private static String unitOf(Workload w) {
        return w.unit().equals("cycles/s") ? "passes" : "rounds";
    }
}
