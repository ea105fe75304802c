package io.fencelock.bench;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes the report directory: report.json (the figures as they are, plus the summary's rankings and
 * the design-target verdicts), and the same content as report.md and index.html, both rendered from
 * one list of {@link Blocks} so that they never disagree. Layout: a one-screen summary (who leads,
 * per workload and backend), the design-target table, then a section per backend with a table and a
 * chart on the backend's own scale per workload.
 */
final class ReportWriter {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final Figures.Run run;

    ReportWriter(Figures.Run run) {
        this.run = run;
    }

    /** Renders a report again from its report.json: {@code ReportWriter <report.json> <directory>}. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException(
                    "usage: ReportWriter <report.json> <output directory>, not " + args.length + " argument(s)");
        }
        new ReportWriter(read(Path.of(args[0]))).writeTo(Path.of(args[1]));
    }

    static Figures.Run read(Path json) throws IOException {
        return JSON.readValue(json.toFile(), Figures.Run.class);
    }

    void writeTo(Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Summary.Ranking> rankings = Summary.rankings(run);
        List<TargetTable.Verdict> verdicts = TargetTable.verdicts(run);
        ObjectNode json = JSON.valueToTree(run);
        json.set("summary", JSON.valueToTree(rankings));
        json.set("targets", JSON.valueToTree(verdicts));
        JSON.writeValue(dir.resolve("report.json").toFile(), json);
        List<Blocks.Block> blocks = blocks(rankings, verdicts);
        Files.writeString(dir.resolve("report.md"), Blocks.markdown(blocks), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("index.html"), Blocks.html(blocks), StandardCharsets.UTF_8);
    }

    private List<Blocks.Block> blocks(List<Summary.Ranking> rankings, List<TargetTable.Verdict> verdicts) {
        List<Blocks.Block> b = new ArrayList<>();
        b.add(new Blocks.Heading(1, "fencelock comparison run"));
        b.add(new Blocks.Text(run.generatedAt() + " on " + run.machine() + "; " + run.java() + "; "
                + (run.quick() ? "quick mode (indicative only)" : "full mode")
                + String.format(
                        Locale.ROOT, "; took %.0f s; settings under \"How to read the rest\".", run.seconds())));
        Summary.blocks(run, rankings, b);
        TargetTable.blocks(run, verdicts, b);
        b.add(new Blocks.Heading(2, "How to read the rest"));
        b.add(new Blocks.Text("Every backend runs fencelock, the provider alone (its SPI, no engine), the backend's"
                + " raw primitive (the physical limit) and the peer libraries on the same server in the same run,"
                + " with the same operations and warm-up. Each section has a table and a chart per workload, each"
                + " chart on that backend's own scale. Ratios: fencelock / raw primitive (overhead over the limit)"
                + " and peer / fencelock. Latency's \"outside the backend's calls\": each cycle less the time it"
                + " spent inside the provider's calls (timed per thread, fencelock and the provider alone alike), so"
                + " fencelock's is the engine's own time on the path. This machine is shared and noisy: read ratios"
                + " within one run, not absolute numbers across runs. Guarantee matrix: " + run.matrixNote() + "."));
        b.add(new Blocks.Text("Settings: " + run.settings() + "."));
        for (Figures.BackendSection s : run.backends()) {
            BackendBlocks.section(b, s);
        }
        return b;
    }
}
