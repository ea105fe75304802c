package io.fencelock.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Reads the guarantee matrices the TCK writes ({@code io.fencelock.tck.matrix.GuaranteeMatrix}:
 * {@code <module>/target/fencelock-tck/<Suite>.json}, schema {@code fencelock-tck-matrix/1}): which
 * property held under which fault, per backend and topology.
 * Unknown fields are ignored; unreadable files are reported, not fatal.
 */
public final class TckMatrices {
    static final String SCHEMA = "fencelock-tck-matrix/1";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a property means for a user when it does not hold: the plain-language line of the report. */
    private static final Map<String, String> IF_IT_FAILS = Map.ofEntries(
            Map.entry("certainHoldsNeverOverlap", "two clients may both believe they hold the lock at once"),
            Map.entry(
                    "tokensRespectRealTimeOrder",
                    "a later holder may get a token that is not greater than an earlier holder's"),
            Map.entry(
                    "newHolderExceedsAllPriorTokens",
                    "a new holder may get a token at or below one already issued, so fencing cannot reject the old holder"),
            Map.entry(
                    "fencedResourceRejectsStaleWriters",
                    "a protected resource may accept a write from a holder that lost the lock"),
            Map.entry("releaseIsOwnerChecked", "a client may free a lock that someone else holds"),
            Map.entry("releaseIsIdempotent", "releasing twice may disturb the next holder"),
            Map.entry(
                    "releaseWorksOnAnInterruptedThread",
                    "a release in a finally after a cancelled task may fail and leave the lock held for its whole TTL"),
            Map.entry(
                    "interruptedAcquireLeavesNoGrantBehind",
                    "an acquire interrupted at the wrong moment may leave the lock held by a lease nobody knows of"),
            Map.entry(
                    "renewAfterExpiryIsRejected",
                    "a lease that already expired may be renewed back to life after someone else took the lock"),
            Map.entry("renewExtendsExclusivity", "renewing may not keep others out"),
            Map.entry(
                    "renewalKeepsEveryKindOfGrant",
                    "renewing may lose a reader's, a writer's, a semaphore holder's or a fair mutex's grant"),
            Map.entry(
                    "acquirableAfterHolderCrash",
                    "the lock of a crashed holder may be free too early or stay taken too long"),
            Map.entry("releaseFreesPromptly", "a released lock may not be free for the next client at once"),
            Map.entry(
                    "releaseWakesTheNextWaiterWhenOneLeft",
                    "a waiter that stopped waiting may keep a release's wake-up from the next client"),
            Map.entry(
                    "aReleaseAfterAWaiterGaveUpLeavesTheNameFree",
                    "a waiter that gave up may keep the name held past the next release"),
            Map.entry(
                    "releaseGrantsTheQueuedWaiter",
                    "a release that grants the queued waiter may leave the name free for another, or the waiter unaware"),
            Map.entry("tryAcquireHonoursTimeout", "a waiting acquire may not return when its wait runs out"),
            Map.entry("locksAreIndependent", "holding one lock may block another name"),
            Map.entry(
                    "indeterminateOutcomesNeverYieldTwoHolders",
                    "a request whose answer was lost may leave two holders"),
            Map.entry("exclusionUnderHolderPauses", "a paused (GC, SIGSTOP) holder may overlap with the next holder"),
            Map.entry(
                    "tokensMonotoneAcrossBackendRestart",
                    "after a restart of the server, tokens may start lower than before, so fencing breaks"),
            Map.entry("badInputIsRejectedCleanly", "bad input may reach the server or leave it changed"),
            Map.entry("renewalIsBatched", "renewing many leases may cost one round trip each"),
            Map.entry("tokenPeriodRaisesTokenOnRenew", "the token does not rise on renew within a long lease"),
            Map.entry("lostLeaseIsSignalledAndItsTaskCancelled", "a task may keep running after its lease was lost"),
            Map.entry(
                    "faultedHolderLearnsLossAndIsFenced",
                    "a paused or cut-off holder may not learn that it lost the lock, or its late writes may get through"),
            Map.entry(
                    "clientRecoversAfterFaults",
                    "after a network fault or a server restart the client may not recover by itself, or may go on believing in a lease the server no longer has"),
            Map.entry(
                    "exclusionAcrossBackendRestart",
                    "after a restart of the server, another client may get a lock its holder still believes it holds"),
            Map.entry(
                    "wallClockPlaysNoPart",
                    "a client whose wall clock is off may lose its locks or take others' early"),
            Map.entry("coverageGuard", "the random schedules may not have exercised what they should"));

    /** One entry of the matrix, with its plain-language line when it is not a pass. */
    public record Entry(
            String property,
            String fault,
            boolean claimed,
            String outcome,
            String verdict,
            String detail,
            String plain) {}

    /** One test class's matrix: one backend in one topology. */
    public record Suite(
            String suite,
            String backend,
            String backendClass,
            List<String> capabilities,
            String generatedAt,
            String file,
            List<Entry> results) {}

    /** The matrices found, and what to tell the reader when there are none or some were unreadable. */
    public record Found(List<Suite> suites, String note) {
        public List<Suite> forPackage(String providerPackage) {
            return suites.stream()
                    .filter(s -> s.backendClass().startsWith(providerPackage + "."))
                    .toList();
        }
    }

    private TckMatrices() {}

    /** Scans {@code <module>/target/fencelock-tck/<Suite>.json} under {@code projectRoot}, plus every JSON file in {@code extraDir}. */
    public static Found find(Path projectRoot, Path extraDir) {
        List<Path> files = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        if (projectRoot != null && Files.isDirectory(projectRoot)) {
            try (Stream<Path> modules = Files.list(projectRoot)) {
                modules.map(m -> m.resolve("target").resolve("fencelock-tck"))
                        .filter(Files::isDirectory)
                        .forEach(d -> files.addAll(jsonFiles(d)));
            } catch (IOException e) {
                problems.add("cannot list " + projectRoot + ": " + e.getMessage());
            }
        }
        if (extraDir != null) {
            files.addAll(jsonFiles(extraDir));
        }
        List<Suite> suites = new ArrayList<>();
        for (Path file : files) {
            try {
                suites.add(read(file));
            } catch (IOException | RuntimeException e) {
                problems.add(file.getFileName() + " unreadable: " + e.getMessage());
            }
        }
        suites.sort(Comparator.comparing(Suite::suite));
        String note = suites.isEmpty()
                ? "TCK matrix not found: run `bash scripts/test-all.sh` first (or point -Dfencelock.bench.matrix=<dir> at the JSON files)"
                : suites.size() + " TCK matrix file(s) read";
        if (!problems.isEmpty()) {
            note += "; " + String.join("; ", problems);
        }
        return new Found(List.copyOf(suites), note);
    }

    private static List<Path> jsonFiles(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    static Suite read(Path file) throws IOException {
        JsonNode root = JSON.readTree(file.toFile());
        String schema = root.path("schema").asText("");
        if (!SCHEMA.equals(schema)) {
            throw new IllegalArgumentException("schema '" + schema + "' is not " + SCHEMA);
        }
        List<String> capabilities = new ArrayList<>();
        root.path("capabilities").forEach(c -> capabilities.add(c.asText()));
        List<Entry> entries = new ArrayList<>();
        for (JsonNode r : root.path("results")) {
            String property = r.path("property").asText();
            String fault = r.path("fault").asText("none");
            String verdict = r.path("verdict").asText();
            String outcome = r.path("outcome").asText();
            String detail = r.path("detail").isNull() ? "" : r.path("detail").asText("");
            entries.add(new Entry(
                    property,
                    fault,
                    r.path("claimed").asBoolean(),
                    outcome,
                    verdict,
                    detail,
                    "pass".equals(verdict) ? "" : plain(property, fault, verdict, outcome, detail)));
        }
        return new Suite(
                root.path("suite").asText(file.getFileName().toString()),
                root.path("backend").asText(""),
                root.path("backendClass").asText(""),
                List.copyOf(capabilities),
                root.path("generatedAt").asText(""),
                file.toString(),
                List.copyOf(entries));
    }

    /** E.g. "Not claimed: under kill -9 and restart, tokens may start lower than before (seen: token 7 after ...)". */
    static String plain(String property, String fault, String verdict, String outcome, String detail) {
        String meaning = IF_IT_FAILS.getOrDefault(property, property + " may not hold");
        String under = "none".equals(fault) ? "" : "under " + fault + ", ";
        String lead = switch (verdict) {
            case "not-claimed" ->
                "Not claimed: " + under + meaning
                        + ("violated".equals(outcome)
                                ? " (and the TCK saw it happen)"
                                : "not-run".equals(outcome) ? " (not run)" : "");
            case "fail" -> "FAILED although claimed: " + under + meaning;
            default -> verdict + ": " + under + meaning;
        };
        return detail.isBlank() ? lead + "." : lead + ". Seen: " + detail + ".";
    }
}
