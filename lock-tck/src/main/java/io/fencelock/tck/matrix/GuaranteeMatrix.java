package io.fencelock.tck.matrix;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What one TCK run established about one backend and topology: for each property and fault,
 * whether the provider claims it, and whether it held, was violated or was not run. Written as
 * JSON ({@code fencelock-tck-matrix/1}) under {@code target/fencelock-tck/} for the comparison
 * report. A violation of something the provider does not claim is recorded too: a backend that
 * loses a lock under a fault it does not claim to survive is a finding to show.
 */
public final class GuaranteeMatrix {
    /** The fault column of a property judged in normal operation. */
    public static final String NO_FAULT = "none";

    public static final String SCHEMA = "fencelock-tck-matrix/1";

    public enum Outcome {
        HELD,
        VIOLATED,
        NOT_RUN;

        String json() {
            return name().toLowerCase().replace('_', '-');
        }
    }

    /**
     * One cell of the matrix.
     *
     * @param detail         one line for the report: what was run, or why it was not
     * @param counterExample the history (or message) that shows a violation; null otherwise
     */
    public record Entry(
            String property, String fault, boolean claimed, Outcome outcome, String detail, String counterExample) {

        /** pass / fail for a claim that was run, not-run for one that could not be, not-claimed otherwise. */
        public String verdict() {
            if (!claimed) {
                return "not-claimed";
            }
            return switch (outcome) {
                case HELD -> "pass";
                case VIOLATED -> "fail";
                case NOT_RUN -> "not-run";
            };
        }
    }

    private final String suite;
    private final String backend;
    private final String backendClass;
    private final Collection<String> capabilities;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();
    private volatile Map<String, Object> settings = Map.of();

    public GuaranteeMatrix(String suite, String backend, String backendClass, Collection<String> capabilities) {
        this.suite = suite;
        this.backend = backend;
        this.backendClass = backendClass;
        this.capabilities = List.copyOf(capabilities);
    }

    public void settings(Map<String, Object> settings) {
        this.settings = Map.copyOf(settings);
    }

    public Entry record(
            String property, String fault, boolean claimed, Outcome outcome, String detail, String counterExample) {
        Entry e = new Entry(property, fault, claimed, outcome, detail, counterExample);
        entries.add(e);
        return e;
    }

    public List<Entry> entries() {
        return List.copyOf(entries);
    }

    public boolean hasEntriesFor(String property) {
        return entries.stream().anyMatch(e -> e.property().equals(property));
    }

    /** Fails with every claimed-and-violated cell of {@code property}, counter-examples included. */
    public void assertClaimsHeld(String property) {
        List<Entry> failed = entries.stream()
                .filter(e -> e.property().equals(property) && e.claimed() && e.outcome() == Outcome.VIOLATED)
                .toList();
        if (!failed.isEmpty()) {
            StringBuilder sb = new StringBuilder();
            sb.append(property)
                    .append(" violated on ")
                    .append(backend)
                    .append(" under ")
                    .append(failed.size())
                    .append(" fault(s):\n");
            for (Entry e : failed) {
                sb.append("--- fault: ")
                        .append(e.fault())
                        .append(": ")
                        .append(e.detail())
                        .append('\n');
                if (e.counterExample() != null) {
                    sb.append(e.counterExample()).append('\n');
                }
            }
            throw new AssertionError(sb.toString());
        }
    }

    /** One line per cell, for the test log. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        for (Entry e : entries) {
            sb.append(String.format(
                    "  %-44s %-46s %-11s %s%n",
                    e.property(),
                    e.fault(),
                    e.verdict(),
                    e.claimed() || e.outcome() == Outcome.NOT_RUN
                            ? e.detail()
                            : "observed " + e.outcome().json() + ": " + e.detail()));
        }
        return sb.toString();
    }

    /** Writes the matrix to {@code dir/<suite>.json} and returns the file. */
    public Path write(Path dir) {
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve(suite + ".json");
            Files.writeString(file, toJson(), StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the guarantee matrix to " + dir, e);
        }
    }

    public String toJson() {
        Json json = new Json();
        json.beginObject();
        json.field("schema", SCHEMA);
        json.field("suite", suite);
        json.field("backend", backend);
        json.field("backendClass", backendClass);
        json.name("capabilities").beginArray();
        capabilities.forEach(json::value);
        json.endArray();
        json.field("generatedAt", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        json.name("settings").beginObject();
        settings.forEach(json::field);
        json.endObject();
        json.name("results").beginArray();
        for (Entry e : new ArrayList<>(entries)) {
            json.beginObject();
            json.field("property", e.property());
            json.field("fault", e.fault());
            json.field("claimed", e.claimed());
            json.field("outcome", e.outcome().json());
            json.field("verdict", e.verdict());
            json.field("detail", e.detail());
            json.field("counterExample", e.counterExample());
            json.endObject();
        }
        json.endArray();
        json.endObject();
        return json.toString();
    }
}
