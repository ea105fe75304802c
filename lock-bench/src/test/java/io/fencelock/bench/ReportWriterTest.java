package io.fencelock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report's summary and design-target table from figures made up here (no servers, no timing). */
class ReportWriterTest {

    @Test
    void theSummaryRanksLibrariesAndRefusesToRankNoisyCells() {
        List<Summary.Ranking> rankings = Summary.rankings(run(1200, 1000, 1000, 1000));
        Summary.Ranking own8 = ranking(rankings, "Throughput, own names, 8 clients");
        assertThat(own8.leader()).isEqualTo("fencelock");
        assertThat(own8.runnerUp()).isEqualTo("ShedLock (JDBC)");
        assertThat(own8.factor()).isEqualTo(1.2);
        assertThat(own8.rankable()).isTrue();
        assertThat(own8.text()).startsWith("fencelock leads, 1.20x over ShedLock (JDBC)");

        Summary.Ranking latency = ranking(rankings, "Uncontended acquire + release, p50");
        assertThat(latency.leader()).as("lower is better").isEqualTo("fencelock");

        // the peer's passes spread 1000-1300 around 1000: 30%
        Summary.Ranking noisy =
                ranking(Summary.rankings(run(1200, 1000, 1300, 1000)), "Throughput, own names, 8 clients");
        assertThat(noisy.rankable()).isFalse();
        assertThat(noisy.text()).startsWith("not rankable: passes spread over 15%, fencelock ahead in 2 of 3 passes");

        // as noisy, but fencelock's 1400 was ahead of the peer in each of the three passes they ran side by side
        Summary.Ranking aheadThroughout =
                ranking(Summary.rankings(run(1400, 1000, 1300, 1000)), "Throughput, own names, 8 clients");
        assertThat(aheadThroughout.rankable()).isTrue();
        assertThat(aheadThroughout.text())
                .startsWith("fencelock leads, 1.40x over ShedLock (JDBC) (ahead in 3 of 3 passes)");
        assertThat(latency.text())
                .as("rounds 105, 110, 115 against 140, 150, 155 µs")
                .contains("ahead in 3 of 3 rounds");
    }

    @Test
    void eachDesignTargetIsMetMissedOrNotMeasuredWithItsFigure() {
        List<TargetTable.Verdict> verdicts = TargetTable.verdicts(run(1200, 1000, 1000, 990));
        assertThat(verdict(verdicts, "Uncontended p50").status()).isEqualTo("met"); // 110 vs 100 µs
        assertThat(verdict(verdicts, "Engine: throughput").status()).isEqualTo("met"); // 1200 vs 1000
        assertThat(verdict(verdicts, "Throughput, own names").status()).isEqualTo("met");
        assertThat(verdict(verdicts, "Hot name").status()).isEqualTo("MISSED"); // 990 vs the peer's 1000
        assertThat(verdict(verdicts, "Hot name").figure()).contains("0.99x at 8", "longest wait 40.0 ms");
        assertThat(verdict(verdicts, "Hand-off").status()).isEqualTo("MISSED"); // 2 ms on PostgreSQL
        assertThat(verdict(verdicts, "Acquire p50 with 1M").status()).isEqualTo("not measured");
        assertThat(verdict(verdicts, "Takeover").status()).isEqualTo("met"); // 2,400 for 2,000 ms
        assertThat(verdict(verdicts, "Takeover").figure()).contains("1.20x");
    }

    @Test
    void theEngineVerdictGivesEachSidesCpuPerCycleWhereTheRunReadIt() {
        String spi = ProviderSpiContender.LABEL;
        Figures.Throughput fencelock8 = Figures.Throughput.of(
                "fencelock",
                "fencelock",
                "independent names",
                8,
                List.of(900.0, 950.0, 930.0),
                Double.NaN,
                List.of(52.0, 50.0, 51.0),
                List.of(31.0, 30.0, 32.0),
                List.of(1.0, 1.0, 1.0));
        Figures.Throughput alone8 = Figures.Throughput.of(
                spi,
                "fencelock",
                "independent names",
                8,
                List.of(1000.0, 1000.0, 1000.0),
                Double.NaN,
                List.of(46.0, 45.0, Double.NaN), // a pass whose reading failed is left out of the median
                List.of(Double.NaN, Double.NaN, Double.NaN), // no server process of this run's
                List.of(1.0, 1.0, 1.0));
        assertThat(fencelock8.clientCpuMicros()).isEqualTo(51.0);
        assertThat(fencelock8.serverCpuMicros()).isEqualTo(31.0);
        assertThat(alone8.clientCpuMicros()).isEqualTo(45.5);
        assertThat(alone8.hasServerCpu()).isFalse();
        List<Figures.Throughput> cells = new java.util.ArrayList<>(List.of(
                fencelock8,
                alone8,
                cell("fencelock", "fencelock", "independent names", 64, 930, 950, 5),
                cell(spi, "fencelock", "independent names", 64, 1000, 1000, 5)));
        Figures.Run run = run(1200, 1000, 1000, 1000);
        Figures.BackendSection s = run.backends().get(0);
        cells.addAll(s.throughput().stream()
                .filter(t -> !t.names().equals("independent names")
                        || !(t.contender().equals("fencelock") || t.contender().equals(spi)))
                .toList());
        Figures.BackendSection withCpu = withThroughput(s, cells);
        TargetTable.Verdict engine = verdict(TargetTable.verdicts(withRun(run, withCpu)), "Engine: throughput");
        assertThat(engine.status()).isEqualTo("MISSED"); // 0.93x at 8
        assertThat(engine.spread())
                .contains("8: ")
                .contains("CPU µs per cycle (client · server) 51.0 · 31.0 vs 45.5 · –");
        assertThat(engine.spread())
                .as("cells without readings (a report of before) show none")
                .doesNotContain("64: 930 (930–950) vs 1,000, CPU");
        assertThat(Cells.cpuPerCycle(java.util.Optional.of(cell("x", "peer", "independent names", 8, 1, 1, 1))))
                .isEqualTo("–");
    }

    @Test
    void aVerdictSaysInHowManyPassesRunSideBySideItHolds() {
        // fencelock's own-name passes 1200, 1200, 1200 against the peer's 1000, 1000, 1300: the medians meet the
        // target, the third pass alone does not
        List<TargetTable.Verdict> verdicts = TargetTable.verdicts(run(1200, 1000, 1300, 990));
        TargetTable.Verdict own = verdict(verdicts, "Throughput, own names");
        assertThat(own.status()).isEqualTo("met");
        assertThat(own.pairs()).isEqualTo("2 of 3 passes");
        assertThat(own.text()).startsWith("met * (2 of 3 passes): 1.20x at 8");
        assertThat(verdict(verdicts, "Engine: throughput").pairs()).isEqualTo("3 of 3 passes");
        assertThat(verdict(verdicts, "Hot name").pairs()).isEqualTo("0 of 3 passes");
        // rounds: 105 vs 98, 110 vs 104, 115 vs 94 µs
        assertThat(verdict(verdicts, "Engine: p50").pairs()).isEqualTo("2 of 3 rounds");
        assertThat(verdict(verdicts, "Engine: p50").spread())
                .as("beside the difference of p50s, the time each spent outside the backend's calls")
                .endsWith(" · outside the backend's calls, p50: 4.20 vs 0.60 µs");
        assertThat(verdict(verdicts, "Uncontended p50").pairs()).isEqualTo("3 of 3 rounds");
        assertThat(verdict(verdicts, "Takeover").pairs())
                .as("one series, nothing to pair")
                .isEmpty();
    }

    @Test
    void reportJsonCarriesTheVerdictsAndRendersAgainFromItself(@TempDir Path dir) throws Exception {
        new ReportWriter(run(1200, 1000, 1000, 990)).writeTo(dir);
        Path again = dir.resolve("again");
        ReportWriter.main(new String[] {dir.resolve("report.json").toString(), again.toString()});
        String md = Files.readString(dir.resolve("report.md"));
        assertThat(Files.readString(again.resolve("report.md"))).isEqualTo(md);
        assertThat(md).contains("## Summary: who leads", "## Design targets", "MISSED (0 of 3 passes): 0.99x at 8");
        assertThat(md)
                .as("what the waiter cost its backend")
                .contains("| waiter's attempts per s of waiting | attempts per hand-off |", "| 44")
                .contains("the waiter's attempts 44");
        assertThat(Files.readString(dir.resolve("report.json"))).contains("\"targets\"", "\"summary\"");
        String html = Files.readString(dir.resolve("index.html"));
        assertThat(html).contains("<td class=\"good\">met").doesNotContain("<script");
    }

    @Test
    void theHotNameSaysHowManyAttemptsAGrantCostWhereTheBenchCountedThem(@TempDir Path dir) throws Exception {
        Figures.Run run = run(1200, 1000, 1000, 990);
        Figures.BackendSection s = run.backends().get(0);
        List<Figures.Throughput> cells = new java.util.ArrayList<>(s.throughput().stream()
                .filter(t -> !t.names().equals("one hot name") || !t.contender().equals("fencelock"))
                .toList());
        List<Double> nan = List.of(Double.NaN, Double.NaN, Double.NaN);
        cells.add(Figures.Throughput.of(
                "fencelock",
                "fencelock",
                "one hot name",
                8,
                List.of(990.0, 990.0, 990.0),
                40,
                nan,
                nan,
                List.of(1.0, 1.02, 1.01)));
        cells.add(Figures.Throughput.of(
                "fencelock",
                "fencelock",
                "one hot name",
                64,
                List.of(990.0, 990.0, 990.0),
                30,
                nan,
                nan,
                List.of(1.0, Double.NaN, 1.0))); // a pass not counted is left out of the median
        Figures.Run counted = withRun(run, withThroughput(s, cells));
        assertThat(verdict(TargetTable.verdicts(counted), "Hot name").figure())
                .contains("longest wait 40.0 ms, attempts per grant 1.01 · 1.00");
        new ReportWriter(counted).writeTo(dir);
        assertThat(Files.readString(dir.resolve("report.md")))
                .contains("attempts per grant, 8 · 64 clients |")
                .as("the peer, which this run did not count")
                .contains("| 900 | – |");
        assertThat(verdict(TargetTable.verdicts(run), "Hot name").figure())
                .as("a report of before, without the counts")
                .doesNotContain("attempts");
    }

    private static Summary.Ranking ranking(List<Summary.Ranking> rankings, String workload) {
        return rankings.stream()
                .filter(r -> r.workload().equals(workload))
                .findFirst()
                .orElseThrow();
    }

    private static TargetTable.Verdict verdict(List<TargetTable.Verdict> verdicts, String target) {
        return verdicts.stream()
                .filter(v -> v.target().startsWith(target))
                .findFirst()
                .orElseThrow();
    }

    /** PostgreSQL with fencelock, the provider alone, the raw primitive and one peer. */
    private static Figures.Run run(double fencelockOwn, double peerOwn, double peerOwnMax, double fencelockHot) {
        String spi = ProviderSpiContender.LABEL;
        List<Figures.Latency> latency = List.of(
                new Figures.Latency(
                        "fencelock",
                        "fencelock",
                        1000,
                        110,
                        300,
                        500,
                        120,
                        105,
                        115,
                        List.of(105.0, 110.0, 115.0),
                        4.2),
                // the engine's third round is 21 µs over the provider alone's, the others within 20
                new Figures.Latency(
                        spi, "fencelock", 1000, 100, 280, 450, 110, 94, 104, List.of(98.0, 104.0, 94.0), 0.6),
                new Figures.Latency(
                        "raw primitive",
                        "raw",
                        1000,
                        100,
                        250,
                        400,
                        105,
                        97,
                        103,
                        List.of(97.0, 100.0, 103.0),
                        Double.NaN),
                new Figures.Latency(
                        "ShedLock (JDBC)",
                        "peer",
                        1000,
                        150,
                        400,
                        600,
                        160,
                        140,
                        155,
                        List.of(140.0, 150.0, 155.0),
                        Double.NaN));
        List<Figures.Throughput> throughput = List.of(
                cell("fencelock", "fencelock", "independent names", 8, fencelockOwn, fencelockOwn, 5),
                cell("fencelock", "fencelock", "independent names", 64, fencelockOwn, fencelockOwn, 5),
                cell(spi, "fencelock", "independent names", 8, 1000, 1000, 5),
                cell(spi, "fencelock", "independent names", 64, 1000, 1000, 5),
                cell("ShedLock (JDBC)", "peer", "independent names", 8, peerOwn, peerOwnMax, 5),
                cell("ShedLock (JDBC)", "peer", "independent names", 64, peerOwn, peerOwnMax, 5),
                cell("fencelock", "fencelock", "one hot name", 8, fencelockHot, fencelockHot, 40),
                cell("fencelock", "fencelock", "one hot name", 64, fencelockHot, fencelockHot, 30),
                cell("ShedLock (JDBC)", "peer", "one hot name", 8, 1000, 1000, 900),
                cell("ShedLock (JDBC)", "peer", "one hot name", 64, 1000, 1000, 900));
        Figures.BackendSection postgres = new Figures.BackendSection(
                "postgres",
                "PostgreSQL",
                true,
                "made up",
                "",
                List.of("FENCING", "WAKE_ON_RELEASE"),
                List.of(),
                "INSERT ... ON CONFLICT",
                latency,
                throughput,
                List.of(new Figures.HandOff("fencelock", "fencelock", "LISTEN/NOTIFY", 20, 2.0, 3.0, 4.0, 1.5, 44.0)),
                List.of(),
                List.of(new Figures.Takeover(2000, 3, 2400, 400, 450)),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                1);
        return new Figures.Run(
                CompareRun.SCHEMA,
                "2026-01-01T00:00:00Z",
                "test",
                "java",
                false,
                "full mode",
                "none",
                List.of(postgres),
                1);
    }

    private static Figures.BackendSection withThroughput(Figures.BackendSection s, List<Figures.Throughput> cells) {
        return new Figures.BackendSection(
                s.key(),
                s.title(),
                s.available(),
                s.description(),
                s.unavailableReason(),
                s.capabilities(),
                s.notClaimed(),
                s.rawPrimitive(),
                s.latency(),
                cells,
                s.handOff(),
                s.renewal(),
                s.takeover(),
                s.coordination(),
                s.scale(),
                s.shared(),
                s.notes(),
                s.peersNotMeasured(),
                s.guarantees(),
                s.errors(),
                s.seconds());
    }

    private static Figures.Run withRun(Figures.Run r, Figures.BackendSection only) {
        return new Figures.Run(
                r.schema(),
                r.generatedAt(),
                r.machine(),
                r.java(),
                r.quick(),
                r.settings(),
                r.matrixNote(),
                List.of(only),
                r.seconds());
    }

    /** Three passes: the median, the max, and the median again as the min. */
    private static Figures.Throughput cell(
            String label, String kind, String names, int clients, double median, double max, double longestWaitMs) {
        return Figures.Throughput.of(label, kind, names, clients, List.of(median, median, max), longestWaitMs);
    }
}
