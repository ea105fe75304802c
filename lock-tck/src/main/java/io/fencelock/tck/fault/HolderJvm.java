package io.fencelock.tck.fault;

import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.FencedResource;
import io.fencelock.tck.RecordedClient;
import io.fencelock.tck.TckSettings;
import io.fencelock.tck.history.Event;
import io.fencelock.tck.history.History;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A lock holder in a child JVM that the TCK can freeze with {@code SIGSTOP} and thaw with
 * {@code SIGCONT}: a stop-the-world pause (GC, a frozen VM) that nothing inside the holder can
 * notice or prevent, the scenario of Kleppmann's fencing argument. The child ({@link HolderJvmMain})
 * holds one lock under {@code runExclusively} (or a read-write lock's write grant under {@code runWriting}) and writes to a {@link FencedResource} that lives
 * here; its history events stream into this JVM's {@link History}.
 */
public final class HolderJvm implements AutoCloseable {
    private final Process process;
    private final PrintWriter toChild;
    private final History history;
    private final int processId;
    private final String name;
    private final FencedResource resource;
    private final CompletableFuture<Long> holding = new CompletableFuture<>();
    private final CompletableFuture<String> cancelled = new CompletableFuture<>();
    private final BlockingQueue<Long> clockAnswers = new LinkedBlockingQueue<>();
    private volatile long clockOffset;
    private final CompletableFuture<Boolean> finished = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final List<String> unexpected = Collections.synchronizedList(new ArrayList<>());
    private final List<String> stderr = Collections.synchronizedList(new ArrayList<>());

    private HolderJvm(Process process, History history, int processId, String name, FencedResource resource) {
        this.process = process;
        this.toChild = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        this.history = history;
        this.processId = processId;
        this.name = name;
        this.resource = resource;
    }

    /**
     * What the child does: hold {@code name} with {@code ttl} and auto-renewal, recording as process
     * {@code processId}, until the lease is lost ({@code holdFor} null) or for {@code holdFor} and
     * then release; {@code wallClockOffset} (e.g. {@code "+2h"}, through libfaketime) sets the
     * child's wall clock apart from the real one, leaving its monotonic clock alone.
     */
    public record Spec(
            String name, Duration ttl, int processId, Duration holdFor, String wallClockOffset, boolean writeGrant) {

        public Spec(String name, Duration ttl, int processId, Duration holdFor, String wallClockOffset) {
            this(name, ttl, processId, holdFor, wallClockOffset, false);
        }

        /** Holds until the lease is lost, on the true wall clock. */
        public static Spec untilLost(String name, Duration ttl, int processId) {
            return new Spec(name, ttl, processId, null, null);
        }

        /** Holds the write grant of the read-write lock {@code name} until it is lost (SHARED_LOCKS). */
        public static Spec writingUntilLost(String name, Duration ttl, int processId) {
            return new Spec(name, ttl, processId, null, null, true);
        }
    }

    /** The {@code faketime} command (Debian package faketime), or empty when it is not installed. */
    public static Optional<Path> faketime() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "faketime");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Starts a child JVM on this JVM's class path (so it finds the same providers) that runs {@code spec}. */
    public static HolderJvm start(ClientConnection connection, Spec spec, History history, FencedResource resource) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>();
        ProcessBuilder builder = new ProcessBuilder(command);
        if (spec.wallClockOffset() != null) {
            command.addAll(List.of(
                    faketime()
                            .orElseThrow(() ->
                                    new IllegalStateException("faketime is not installed (Debian package faketime)"))
                            .toString(),
                    "-f",
                    spec.wallClockOffset()));
            // libfaketime moves the monotonic clock too (synchronizeClocks measures by how much);
            // leaving it alone (FAKETIME_DONT_FAKE_MONOTONIC) breaks the JVM's timed waits, and the fix
            // keeps pthread_cond_timedwait on the monotonic clock working
            builder.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "1");
        }
        command.addAll(List.of(
                java,
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                System.getProperty("java.class.path"),
                HolderJvmMain.class.getName()));
        Process child;
        try {
            child = builder.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start a holder JVM: " + e.getMessage(), e);
        }
        HolderJvm holder = new HolderJvm(child, history, spec.processId(), spec.name(), resource);
        holder.startReaders();
        // the connection goes on stdin, never on the command line: it may hold credentials
        holder.toChild.println("connection " + EventLines.encode(connection.uri()));
        for (Map.Entry<String, String> p : connection.properties().entrySet()) {
            holder.toChild.println("property " + EventLines.encode(p.getKey()) + " " + EventLines.encode(p.getValue()));
        }
        holder.toChild.println("hold " + EventLines.encode(spec.name()) + " "
                + spec.ttl().toMillis() + " " + spec.processId() + " "
                + (spec.holdFor() == null ? 0 : Math.max(1, spec.holdFor().toMillis())) + " "
                + (spec.writeGrant() ? "write" : "mutex"));
        holder.synchronizeClocks();
        holder.toChild.println("start");
        return holder;
    }

    /**
     * Measures how far the child's {@link System#nanoTime()} is from ours: the same monotonic clock
     * normally (offset about 0), but libfaketime moves it too. The best of a few round trips on the
     * pipes bounds the error by half its round trip (well under a millisecond), far below the
     * margins the properties judge.
     */
    private void synchronizeClocks() {
        long bestRoundTrip = Long.MAX_VALUE;
        long offset = 0;
        for (int i = 0; i < 5; i++) {
            long sent = System.nanoTime();
            toChild.println("sync");
            long childNanos;
            try {
                Long answer = clockAnswers.poll(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
                if (answer == null) {
                    throw new IllegalStateException("the holder JVM did not answer a clock sync:\n" + diagnostics());
                }
                childNanos = answer;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while syncing with the holder JVM", e);
            }
            long received = System.nanoTime();
            if (received - sent < bestRoundTrip) {
                bestRoundTrip = received - sent;
                offset = childNanos - (sent + (received - sent) / 2);
            }
        }
        clockOffset = offset;
    }

    private void startReaders() {
        Thread out = new Thread(this::readEvents, "tck-holder-jvm-out");
        out.setDaemon(true);
        out.start();
        Thread err = new Thread(
                () -> {
                    try (BufferedReader r = process.errorReader(StandardCharsets.UTF_8)) {
                        for (String line; (line = r.readLine()) != null; ) {
                            if (stderr.size() < 400) {
                                stderr.add(line);
                            }
                        }
                    } catch (IOException ignored) {
                        // the child is gone
                    }
                },
                "tck-holder-jvm-err");
        err.setDaemon(true);
        err.start();
    }

    private void readEvents() {
        java.util.Map<Long, Long> opIds = new java.util.HashMap<>();
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "event" -> {
                        long childOp = Long.parseLong(f[2]);
                        long op = opIds.computeIfAbsent(childOp, k -> history.newOpId());
                        Event e = EventLines.event(f, op);
                        history.add(new Event(
                                e.process(),
                                e.opId(),
                                e.type(),
                                e.kind(),
                                e.name(),
                                e.leaseId(),
                                e.token(),
                                e.flag(),
                                e.deadlineNanos() == 0 ? 0 : e.deadlineNanos() - clockOffset,
                                e.timeNanos() - clockOffset,
                                e.detail()));
                    }
                    case "write" -> {
                        boolean accepted = RecordedClient.recordWrite(
                                history,
                                processId,
                                resource,
                                name,
                                EventLines.decode(f[1]),
                                Long.parseLong(f[2]),
                                Boolean.parseBoolean(f[3]));
                        toChild.println("ack " + accepted);
                    }
                    case "clock" -> clockAnswers.add(Long.parseLong(f[1]));
                    case "holding" -> holding.complete(Long.parseLong(f[2]));
                    case "cancelled" -> cancelled.complete(EventLines.decode(f[1]));
                    case "finished" -> finished.complete(true);
                    case "done" -> done.complete(null);
                    default -> unexpected.add(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            unexpected.add("reader failed: " + e);
        } finally {
            done.complete(null);
            holding.completeExceptionally(
                    new IllegalStateException("the holder JVM ended before it held the lock:\n" + diagnostics()));
            cancelled.complete(null);
            finished.complete(false);
        }
    }

    /** Completes with the fencing token once the child holds the lock. */
    public CompletableFuture<Long> holding() {
        return holding;
    }

    /** Waits until the child holds the lock; an {@link AssertionError} with the child's output if it does not within {@code bound}. */
    public long awaitHolding(Duration bound) throws InterruptedException {
        try {
            return holding.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the holder JVM never held the lock: " + e.getMessage() + "\n" + diagnostics(), e);
        }
    }

    /**
     * Waits until the resource has accepted {@code count} writes (the child's, once it holds); an
     * {@link AssertionError} with the child's output, its task's state and the history if not in time.
     */
    public void awaitWrites(int count) throws InterruptedException {
        try {
            FaultScenarios.await("the holder's first " + count + " writes", () -> resource.acceptedWrites() >= count);
        } catch (AssertionError e) {
            throw new AssertionError(
                    e.getMessage() + " (" + resource.acceptedWrites() + " accepted; task cancelled: "
                            + cancelled.getNow(null) + ", finished: " + finished.getNow(null) + ")\n" + diagnostics()
                            + "history:\n" + history,
                    e);
        }
    }

    /** Completes with the loss message once the child's task was cancelled for a lost lease (null if it never was). */
    public CompletableFuture<String> cancelled() {
        return cancelled;
    }

    /** Completes with true once the child held for its whole {@code holdFor} and released, false if it did not. */
    public CompletableFuture<Boolean> finished() {
        return finished;
    }

    /** Freezes the whole child JVM: every thread, the watchdog's and the timer's too. */
    public void pause() {
        ProcessSignals.send("STOP", process.pid());
    }

    public void resume() {
        ProcessSignals.send("CONT", process.pid());
    }

    /** Waits for the child to finish its run; false if it did not within {@code bound}. */
    public boolean awaitDone(Duration bound) throws InterruptedException {
        try {
            done.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            return process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** The child's stderr and any unexpected output, for a failure report (never the connection). */
    public String diagnostics() {
        String err = String.join("\n", List.copyOf(stderr));
        return "child stderr:\n" + err + "\n" + (unexpected.isEmpty() ? "" : "unexpected output: " + unexpected + "\n");
    }

    @Override
    public void close() {
        process.destroyForcibly(); // SIGKILL ends a frozen process too
        toChild.close();
    }
}
