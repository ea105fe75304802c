package io.fencelock.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Writes the report directory: report.json (the figures as they are), and the same content as
 * report.md and index.html, both rendered from one list of blocks so that they never disagree.
 */
final class ReportWriter {
    private final Figures.Run run;

    /** A piece of the report: a heading, a paragraph, a list, a table or a chart (HTML only). */
    private sealed interface Block permits Heading, Text, Bullets, Table, Chart {}

    private record Heading(int level, String text) implements Block {}

    private record Text(String text) implements Block {}

    private record Bullets(List<String> items) implements Block {}

    private record Table(List<String> header, List<List<String>> rows) implements Block {}

    private record Chart(String svg) implements Block {}

    ReportWriter(Figures.Run run) {
        this.run = run;
    }

    void writeTo(Path dir) throws IOException {
        Files.createDirectories(dir);
        new ObjectMapper()
                .enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(dir.resolve("report.json").toFile(), run);
        List<Block> blocks = blocks();
        Files.writeString(dir.resolve("report.md"), markdown(blocks), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("index.html"), html(blocks), StandardCharsets.UTF_8);
    }

    static String number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "–";
        }
        double a = Math.abs(v);
        return a >= 100
                ? String.format(Locale.ROOT, "%,.0f", v)
                : a >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    static String ratio(double num, double den) {
        return den > 0 && !Double.isNaN(num) ? String.format(Locale.ROOT, "%.2fx", num / den) : "–";
    }

    private List<Block> blocks() {
        List<Block> b = new ArrayList<>();
        b.add(new Heading(1, "fencelock comparison run"));
        b.add(new Text(run.generatedAt() + " on " + run.machine() + "; " + run.java() + "; " + run.settings()
                + String.format(Locale.ROOT, "; took %.0f s.", run.seconds())));
        b.add(new Text("Every backend runs fencelock, the backend's raw primitive (the physical limit) and the peer "
                + "libraries on the same server in the same run, with the same operations and warm-up. Ratios: "
                + "fencelock / raw primitive (overhead over the limit; lower is better) and peer / fencelock. "
                + "This machine is shared and noisy: read ratios within one run, not absolute numbers across runs."));
        summary(b);
        for (Figures.BackendSection s : run.backends()) {
            section(b, s);
        }
        return b;
    }

    private void summary(List<Block> b) {
        b.add(new Heading(2, "Summary"));
        List<List<String>> rows = new ArrayList<>();
        for (Figures.BackendSection s : run.backends()) {
            if (!s.available()) {
                rows.add(List.of(s.title(), s.unavailableReason(), "", "", "", "", ""));
                continue;
            }
            Optional<Figures.Latency> fl = latencyOf(s, Kind.FENCELOCK);
            Optional<Figures.Latency> raw = latencyOf(s, Kind.RAW);
            double tpF = throughputOf(s, "fencelock", 8, false);
            double tpR = throughputOf(s, "raw primitive", 8, false);
            String handOff = s.handOff().stream()
                    .filter(h -> h.kind().equals("fencelock"))
                    .findFirst()
                    .map(h -> number(h.p50Ms()) + " ms")
                    .orElse("–");
            rows.add(List.of(
                    s.title(),
                    fl.map(l -> number(l.p50Us()) + " µs").orElse("–"),
                    raw.map(l -> number(l.p50Us()) + " µs").orElse("–"),
                    fl.isPresent() && raw.isPresent()
                            ? ratio(fl.get().p50Us(), raw.get().p50Us())
                            : "–",
                    number(tpF) + " /s (" + ratio(tpF, tpR) + " of raw)",
                    handOff,
                    String.join(" ", s.capabilities())));
        }
        b.add(new Table(
                List.of(
                        "backend",
                        "fencelock acquire+release p50",
                        "raw primitive p50",
                        "overhead",
                        "throughput, 8 clients, own names",
                        "hand-off p50",
                        "capabilities"),
                rows));
        targets(b);
        b.add(new Text("Guarantee matrix: " + run.matrixNote() + "."));
        List<Svg.Bar> bars = new ArrayList<>();
        for (Figures.BackendSection s : run.backends()) {
            s.latency().forEach(l -> bars.add(new Svg.Bar(s.title() + " · " + l.contender(), l.p50Us(), l.kind())));
        }
        if (!bars.isEmpty()) {
            b.add(new Chart(Svg.bars("Uncontended acquire + release, p50", "µs", bars)));
        }
    }

    /** The performance targets of the design (docs/design.md, "Performance"), met or missed in this run. */
    private void targets(List<Block> b) {
        List<List<String>> rows = new ArrayList<>();
        for (Figures.BackendSection s : run.backends()) {
            if (!s.available()) {
                continue;
            }
            Optional<Figures.Latency> fl = latencyOf(s, Kind.FENCELOCK);
            Optional<Figures.Latency> raw = latencyOf(s, Kind.RAW);
            String overhead = fl.isPresent() && raw.isPresent()
                    ? verdict(
                            fl.get().p50Us() / raw.get().p50Us() <= 1.15,
                            ratio(fl.get().p50Us(), raw.get().p50Us()))
                    : "–";
            String handOff = !s.capabilities().contains("WAKE_ON_RELEASE")
                    ? "no signal: polls"
                    : s.handOff().stream()
                            .filter(h -> h.kind().equals("fencelock"))
                            .findFirst()
                            .map(h -> verdict(h.p50Ms() <= 1.5, number(h.p50Ms()) + " ms"))
                            .orElse("–");
            double tpRatio = throughputOf(s, "fencelock", 8, false) / throughputOf(s, "raw primitive", 8, false);
            String throughput =
                    Double.isNaN(tpRatio) ? "–" : verdict(tpRatio >= 0.8, String.format(Locale.ROOT, "%.2fx", tpRatio));
            double worstTrips = s.renewal().stream()
                    .mapToDouble(Figures.Renewal::roundTripsPerInterval)
                    .max()
                    .orElse(Double.NaN);
            int lost =
                    s.renewal().stream().mapToInt(Figures.Renewal::leasesLost).sum();
            int most =
                    s.renewal().stream().mapToInt(Figures.Renewal::leases).max().orElse(0);
            // the tick count is estimated from the renewed leases, so allow for a tick cut in two
            String renewal = Double.isNaN(worstTrips)
                    ? "–"
                    : verdict(
                            worstTrips <= 1.5 && lost == 0,
                            number(worstTrips) + " per interval, up to " + String.format(Locale.ROOT, "%,d", most)
                                    + " leases" + (lost == 0 ? "" : ", " + lost + " lost"));
            String scale = s.scale().size() < 2
                    ? "–"
                    : verdict(
                            s.scale().get(1).p50Us() <= 1.25 * s.scale().get(0).p50Us(),
                            ratio(s.scale().get(1).p50Us(), s.scale().get(0).p50Us()) + " at "
                                    + String.format(
                                            Locale.ROOT, "%,d", s.scale().get(1).existingNames()) + " names");
            rows.add(List.of(s.title(), overhead, handOff, throughput, renewal, scale));
        }
        if (!rows.isEmpty()) {
            b.add(new Text("Design targets (docs/design.md, Performance), as measured in this run:"));
            b.add(new Table(
                    List.of(
                            "backend",
                            "acquire+release ≤ 1.15x raw (p50)",
                            "hand-off p50 ≤ 1.5 ms",
                            "throughput ≥ 0.8x raw (8 clients, own names)",
                            "about 1 renew round trip per interval",
                            "acquire flat from 1k names (p50 within 1.25x)"),
                    rows));
        }
    }

    private static String verdict(boolean met, String value) {
        return (met ? "met: " : "MISSED: ") + value;
    }

    private enum Kind {
        FENCELOCK,
        RAW
    }

    private static Optional<Figures.Latency> latencyOf(Figures.BackendSection s, Kind kind) {
        String k = kind.name().toLowerCase(Locale.ROOT);
        return s.latency().stream().filter(l -> l.kind().equals(k)).findFirst();
    }

    /** The cell's median, with the min-max of its passes and a * when they spread too far. */
    private static String throughputCell(Figures.BackendSection s, String label, int clients, boolean hot) {
        return s.throughput().stream()
                .filter(t -> t.contender().equals(label)
                        && t.clients() == clients
                        && t.names().equals(hot ? "one hot name" : "independent names"))
                .findFirst()
                .map(ReportWriter::withSpread)
                .orElse("–");
    }

    private static String withSpread(Figures.Throughput t) {
        return t.passes() > 1
                ? number(t.cyclesPerSecond()) + " (" + number(t.minPerSecond()) + "–" + number(t.maxPerSecond()) + ")"
                        + (t.unsteady() ? " *" : "")
                : number(t.cyclesPerSecond());
    }

    private static double throughputOf(Figures.BackendSection s, String label, int clients, boolean hot) {
        return s.throughput().stream()
                .filter(t -> t.contender().equals(label)
                        && t.clients() == clients
                        && t.names().equals(hot ? "one hot name" : "independent names"))
                .mapToDouble(Figures.Throughput::cyclesPerSecond)
                .findFirst()
                .orElse(Double.NaN);
    }

    private void section(List<Block> b, Figures.BackendSection s) {
        b.add(new Heading(2, s.title()));
        if (!s.available()) {
            b.add(new Text(s.unavailableReason()));
            return;
        }
        b.add(new Text("Server: " + s.description() + ". Raw primitive: " + s.rawPrimitive() + "."));

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

        b.add(new Heading(3, "Latency: uncontended acquire + release"));
        Optional<Figures.Latency> fl = latencyOf(s, Kind.FENCELOCK);
        Optional<Figures.Latency> raw = latencyOf(s, Kind.RAW);
        List<List<String>> rows = new ArrayList<>();
        for (Figures.Latency l : s.latency()) {
            String vs = switch (l.kind()) {
                case "fencelock" ->
                    raw.map(r -> ratio(l.p50Us(), r.p50Us()) + " of raw").orElse("–");
                case "raw" ->
                    raw.get() == l ? "the limit" : ratio(l.p50Us(), raw.get().p50Us()) + " of raw";
                default ->
                    fl.map(f -> ratio(l.p50Us(), f.p50Us()) + " of fencelock").orElse("–");
            };
            rows.add(List.of(
                    l.contender(),
                    number(l.p50Us()),
                    number(l.p99Us()),
                    number(l.p999Us()),
                    vs,
                    Long.toString(l.cycles())));
        }
        b.add(new Table(List.of("implementation", "p50 µs", "p99 µs", "p99.9 µs", "p50 ratio", "cycles"), rows));

        b.add(new Heading(3, "Throughput: acquire + release cycles per second"));
        Set<String> contenders = new LinkedHashSet<>();
        s.throughput().forEach(t -> contenders.add(t.contender()));
        rows = new ArrayList<>();
        for (String c : contenders) {
            List<String> row = new ArrayList<>(List.of(c));
            for (boolean hot : new boolean[] {false, true}) {
                for (int clients : List.of(1, 8, 64)) {
                    row.add(throughputCell(s, c, clients, hot));
                }
            }
            double own8 = throughputOf(s, c, 8, false);
            String kind = s.throughput().stream()
                    .filter(t -> t.contender().equals(c))
                    .findFirst()
                    .map(Figures.Throughput::kind)
                    .orElse("peer");
            row.add(
                    c.equals("raw primitive")
                            ? "the limit"
                            : kind.equals("peer")
                                    ? ratio(own8, throughputOf(s, "fencelock", 8, false)) + " of fencelock"
                                    : ratio(own8, throughputOf(s, "raw primitive", 8, false)) + " of raw");
            rows.add(row);
        }
        b.add(new Table(
                List.of(
                        "implementation",
                        "own names, 1",
                        "own, 8",
                        "own, 64",
                        "one hot name, 1",
                        "hot, 8",
                        "hot, 64",
                        "own, 8: ratio"),
                rows));
        List<String> unsteady = s.throughput().stream()
                .filter(Figures.Throughput::unsteady)
                .map(t -> t.contender() + ", " + t.names() + ", " + t.clients()
                        + (t.clients() == 1 ? " client: " : " clients: ")
                        + String.format(Locale.ROOT, "%.0f%%", t.spread() * 100))
                .toList();
        b.add(new Text(
                s.throughput().stream()
                                        .mapToInt(Figures.Throughput::passes)
                                        .max()
                                        .orElse(1)
                                > 1
                        ? "Each cell: the median of its passes (min-max). Cells marked * spread more than "
                                + Math.round(Figures.UNSTEADY_SPREAD * 100) + "% of their median: too noisy to rank"
                                + (unsteady.isEmpty()
                                        ? " (none in this run)."
                                        : ": " + String.join("; ", unsteady) + ".")
                        : "One pass per cell (quick mode): no spread to report."));
        List<Svg.Bar> bars = new ArrayList<>();
        for (String c : contenders) {
            String kind = s.throughput().stream()
                    .filter(t -> t.contender().equals(c))
                    .findFirst()
                    .map(Figures.Throughput::kind)
                    .orElse("peer");
            bars.add(new Svg.Bar(c, throughputOf(s, c, 8, false), kind));
        }
        if (!bars.isEmpty()) {
            b.add(new Chart(Svg.bars(s.title() + ": throughput, 8 clients on their own names", "cycles/s", bars)));
        }

        b.add(new Heading(3, "Hand-off: release → the waiting client holds"));
        rows = new ArrayList<>();
        for (Figures.HandOff h : s.handOff()) {
            rows.add(List.of(
                    h.contender(),
                    h.waitsBy(),
                    number(h.p50Ms()),
                    number(h.p99Ms()),
                    number(h.maxMs()),
                    Integer.toString(h.samples())));
        }
        b.add(new Table(
                List.of("implementation", "waiter learns of the release by", "p50 ms", "p99 ms", "max ms", "samples"),
                rows));
        if (!s.handOff().isEmpty()) {
            b.add(new Chart(Svg.bars(
                    s.title() + ": hand-off p50",
                    "ms",
                    s.handOff().stream()
                            .map(h -> new Svg.Bar(h.contender(), h.p50Ms(), h.kind()))
                            .toList())));
        }

        b.add(new Heading(3, "Renewal cost (fencelock)"));
        rows = new ArrayList<>();
        for (Figures.Renewal r : s.renewal()) {
            rows.add(List.of(
                    String.format(Locale.ROOT, "%,d", r.leases()),
                    number(r.roundTripsPerInterval()),
                    number(r.meanBatch()),
                    String.format(Locale.ROOT, "%,d", r.largestBatch()),
                    number(r.renewCallMs()),
                    number(r.acquireAllSeconds()),
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

        b.add(new Heading(3, "Takeover after a holder crash (fencelock)"));
        rows = new ArrayList<>();
        for (Figures.Takeover t : s.takeover()) {
            rows.add(List.of(
                    Long.toString(t.ttlMs()),
                    number(t.medianTakeoverMs()),
                    number(t.medianAfterTtlMs()),
                    number(t.maxAfterTtlMs()),
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

        b.add(new Heading(3, "Leader election and task spreading (fencelock)"));
        rows = new ArrayList<>();
        for (Figures.Coordination c : s.coordination()) {
            rows.add(List.of(
                    Long.toString(c.ttlMs()),
                    Long.toString(c.monitorPeriodMs()),
                    number(c.leaderFailoverMs()),
                    number(c.resignHandOverMs()),
                    number(c.crashedInstanceTasksMovedMs()),
                    number(c.joinRebalanceMs()),
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

        b.add(new Heading(3, "Shared locks: throughput"));
        if (s.shared().isEmpty()) {
            b.add(new Text(
                    s.capabilities().contains("SHARED_LOCKS")
                            ? "Not measured (see the errors below)."
                            : "Not claimed: this provider does not implement semaphores or read-write locks"
                                    + " (SHARED_LOCKS), so there is nothing to measure."));
        } else {
            rows = new ArrayList<>();
            for (Figures.Throughput t : s.shared()) {
                double fencelock = s.shared().stream()
                        .filter(f -> f.names().equals(t.names()) && f.kind().equals("fencelock"))
                        .mapToDouble(Figures.Throughput::cyclesPerSecond)
                        .findFirst()
                        .orElse(0);
                rows.add(List.of(
                        t.names(),
                        t.contender(),
                        withSpread(t),
                        t.kind().equals("fencelock") ? "1" : ratio(fencelock, t.cyclesPerSecond())));
            }
            b.add(new Table(
                    List.of("workload", "implementation", "cycles/s, median (min–max of passes)", "fencelock / this"),
                    rows));
            b.add(new Text(SharedMeasurements.THREADS + " threads in " + SharedMeasurements.INSTANCES
                    + " clients on one name, each cycle an acquire and a release around an empty critical section;"
                    + " a write is one cycle in ten of the read-write workload. 'Provider alone' retries the SPI's"
                    + " tryAcquireShared at once on a refusal (no engine, no writer's intent). None of these"
                    + " backends has a semaphore or read-write lock with expiry as one native command, so the"
                    + " provider alone is the baseline; PostgreSQL's pg_advisory_lock_shared belongs to a session"
                    + " and never expires, so it is not comparable."));
        }

        b.add(new Heading(3, "Scale: acquire + release with many lock names (fencelock)"));
        rows = new ArrayList<>();
        for (Figures.Scale sc : s.scale()) {
            rows.add(List.of(
                    String.format(Locale.ROOT, "%,d", sc.existingNames()),
                    number(sc.p50Us()),
                    number(sc.p99Us()),
                    number(sc.fillSeconds()),
                    Long.toString(sc.cycles())));
        }
        b.add(new Table(List.of("existing names", "p50 µs", "p99 µs", "fill time s", "cycles"), rows));
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
        b.add(new Table(header, rows));
        if (!plain.isEmpty()) {
            b.add(new Bullets(plain));
        }
    }

    private static String markdown(List<Block> blocks) {
        StringBuilder md = new StringBuilder();
        for (Block block : blocks) {
            if (block instanceof Heading h) {
                md.append("#".repeat(h.level())).append(' ').append(h.text()).append("\n\n");
            } else if (block instanceof Text t) {
                md.append(t.text()).append("\n\n");
            } else if (block instanceof Bullets l) {
                l.items().forEach(i -> md.append("- ").append(i).append('\n'));
                md.append('\n');
            } else if (block instanceof Table t) {
                md.append("| ").append(String.join(" | ", cells(t.header()))).append(" |\n|");
                t.header().forEach(x -> md.append("---|"));
                md.append('\n');
                t.rows()
                        .forEach(r -> md.append("| ")
                                .append(String.join(" | ", cells(r)))
                                .append(" |\n"));
                md.append('\n');
            } // a Chart is in index.html only; the tables carry the same numbers
        }
        return md.toString();
    }

    private static List<String> cells(List<String> row) {
        return row.stream().map(c -> c.replace("|", "\\|").replace("\n", " ")).toList();
    }

    private static String html(List<Block> blocks) {
        StringBuilder h = new StringBuilder("""
                <!DOCTYPE html>
                <html lang="en"><head><meta charset="utf-8"><title>fencelock comparison run</title>
                <style>
                body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#1a202c}
                table{border-collapse:collapse;margin:.5em 0 1.2em}th,td{border:1px solid #cbd5e0;padding:3px 8px;text-align:right}
                th{background:#edf2f7}td:first-child,th:first-child{text-align:left}h2{border-bottom:2px solid #2b6cb0;margin-top:2em}
                code{background:#edf2f7;padding:0 3px}svg{display:block;margin:.5em 0 1.5em}
                </style></head><body>
                """);
        for (Block block : blocks) {
            if (block instanceof Heading x) {
                h.append("<h")
                        .append(x.level())
                        .append('>')
                        .append(Html.escape(x.text()))
                        .append("</h")
                        .append(x.level())
                        .append(">\n");
            } else if (block instanceof Text t) {
                h.append("<p>").append(code(Html.escape(t.text()))).append("</p>\n");
            } else if (block instanceof Bullets l) {
                h.append("<ul>");
                l.items()
                        .forEach(i ->
                                h.append("<li>").append(code(Html.escape(i))).append("</li>"));
                h.append("</ul>\n");
            } else if (block instanceof Table t) {
                h.append("<table><tr>");
                t.header().forEach(c -> h.append("<th>").append(Html.escape(c)).append("</th>"));
                h.append("</tr>");
                for (List<String> r : t.rows()) {
                    h.append("<tr>");
                    r.forEach(c -> h.append("<td>").append(Html.escape(c)).append("</td>"));
                    h.append("</tr>");
                }
                h.append("</table>\n");
            } else if (block instanceof Chart c) {
                h.append(c.svg()).append('\n');
            }
        }
        return h.append("</body></html>\n").toString();
    }

    /** `x` → <code>x</code>, after escaping. */
    private static String code(String escaped) {
        return escaped.replaceAll("`([^`]+)`", "<code>$1</code>");
    }
}
