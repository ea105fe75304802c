package io.fencelock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's comparison command in its quick mode, end to end, against whatever servers this
 * machine has (embedded ones at least): the report directory must hold the three files with a
 * section per backend. Numbers are not asserted: this machine is shared and noisy.
 */
class CompareQuickRunTest {

    @Test
    void quickRunWritesTheReportWithASectionPerBackend(@TempDir Path work) throws Exception {
        // kept in target/ after the test, with its screenshot, for a reviewer to look at
        Path out = Path.of("target", "compare-quick").toAbsolutePath();
        deleteRecursively(out);
        Path sampleMatrix = Path.of(getClass().getResource("/sample-matrix").toURI());
        BenchSettings settings = new BenchSettings(
                true, BenchSettings.parseBackends("all"), BenchSettings.parseWorkloads("all"), out, null, sampleMatrix);

        Path report = CompareRun.run(settings);

        assertThat(report.resolve("index.html")).isRegularFile();
        assertThat(report.resolve("report.md")).isRegularFile();
        JsonNode json =
                new ObjectMapper().readTree(report.resolve("report.json").toFile());
        assertThat(json.path("schema").asText()).isEqualTo(CompareRun.SCHEMA);
        List<String> keys = new ArrayList<>();
        json.path("backends").forEach(b -> keys.add(b.path("key").asText()));
        assertThat(keys).containsExactlyElementsOf(BenchSettings.ALL_BACKENDS);

        String markdown = Files.readString(report.resolve("report.md"));
        String html = Files.readString(report.resolve("index.html"));
        for (JsonNode backend : json.path("backends")) {
            String title = backend.path("title").asText();
            assertThat(markdown).contains("## " + title);
            assertThat(html).contains("<h2>" + Html.escape(title) + "</h2>");
            if (backend.path("available").asBoolean()) {
                assertThat(backend.path("latency").size())
                        .as(title + " latency rows")
                        .isPositive();
                for (JsonNode row : backend.path("latency")) {
                    String contender = row.path("contender").asText();
                    if (contender.equals(Cells.FENCELOCK) || contender.equals(ProviderSpiContender.LABEL)) {
                        assertThat(row.path("outsideCallsP50Us").asDouble())
                                .as(title + ": " + contender + "'s time outside the backend's calls is read")
                                .isPositive();
                    }
                }
                for (JsonNode cell : backend.path("throughput")) {
                    if (cell.path("contender").asText().equals(Cells.FENCELOCK)) {
                        assertThat(cell.path("attemptsPerGrant").asDouble())
                                .as(title + ": fencelock's attempts per grant are counted in every throughput cell")
                                .isPositive();
                    }
                }
            }
        }
        // the embedded defaults are always there, whatever else is installed
        assertThat(json.path("backends").findValuesAsText("key")).contains("postgres", "redis", "mongo");
        assertThat(html).doesNotContain("<script");
        assertThat(markdown).contains("tokensMonotoneAcrossBackendRestart: Not claimed: under kill -9 and restart");
        assertThat(markdown).contains("## Summary: who leads", "## Design targets");
        assertThat(json.path("targets").size()).as("design-target verdicts").isPositive();
        assertThat(json.path("summary").size()).as("summary rankings").isPositive();
        // every table scrolls inside the page's fixed width instead of running off it
        assertThat(html.split("<table", -1).length).isEqualTo(html.split("<div class=\"scroll\"><table", -1).length);

        renderedInABrowser(report.resolve("index.html"), report.resolve("index.png"), work);
    }

    /** The report as a reviewer's browser shows it. */
    private static void renderedInABrowser(Path page, Path png, Path work) throws Exception {
        Optional<Path> chromium = HeadlessChromium.find();
        if (chromium.isEmpty() && Boolean.getBoolean(HeadlessChromium.SKIP_PROPERTY)) {
            System.out.println("report not rendered: -D" + HeadlessChromium.SKIP_PROPERTY + "=true and no chromium");
            return;
        }
        assertThat(chromium)
                .as("headless Chromium renders the report to check it: install the Debian package chromium"
                        + " (`apt-get install chromium`; scripts/test-all.sh installs it), or skip this check by hand"
                        + " with -D" + HeadlessChromium.SKIP_PROPERTY + "=true")
                .isPresent();
        HeadlessChromium.screenshot(chromium.get(), page, png, work);
        HeadlessChromium.assertRendered(png);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @Test
    void aThroughputCellIsTheMedianOfItsPassesAndFlaggedPastTheSpreadLimit() {
        Figures.Throughput steady = Figures.Throughput.of(
                "fencelock", "fencelock", "independent names", 8, List.of(1000.0, 1100.0, 1050.0));
        assertThat(steady.cyclesPerSecond()).isEqualTo(1050.0);
        assertThat(steady.minPerSecond()).isEqualTo(1000.0);
        assertThat(steady.maxPerSecond()).isEqualTo(1100.0);
        assertThat(steady.passes()).isEqualTo(3);
        assertThat(steady.unsteady()).isFalse(); // 100 / 1050: under 15%

        Figures.Throughput noisy = Figures.Throughput.of(
                "fencelock", "fencelock", "independent names", 8, List.of(1000.0, 1200.0, 1050.0));
        assertThat(noisy.unsteady()).isTrue(); // 200 / 1050: over 15%
        assertThat(Figures.Throughput.of("x", "peer", "one hot name", 1, List.of(5.0))
                        .unsteady())
                .as("one pass has no spread")
                .isFalse();
    }

    @Test
    void unknownBackendNamesAreRejectedWithTheRule() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> BenchSettings.parseBackends("postgres,oracle"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'oracle'")
                .hasMessageContaining("postgres, mariadb, redis, etcd, mongo");
    }

    @Test
    void workloadsAreChosenByNameAndUnknownOnesRejectedWithTheRule() {
        assertThat(BenchSettings.parseWorkloads("hand-off, scale")).containsExactly("handoff", "scale");
        assertThat(BenchSettings.parseWorkloads("all")).containsExactlyElementsOf(BenchSettings.ALL_WORKLOADS);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> BenchSettings.parseWorkloads("latency,speed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fencelock.bench.workloads")
                .hasMessageContaining("'speed'")
                .hasMessageContaining("latency, throughput, handoff");
    }
}
