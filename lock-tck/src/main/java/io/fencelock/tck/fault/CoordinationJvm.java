package io.fencelock.tck.fault;

import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.FencedResource;
import io.fencelock.tck.TckSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A leader-election candidate or task-spreading instance in a child JVM ({@link CoordinationJvmMain})
 * that the TCK can kill ({@code SIGKILL}) or freeze ({@code SIGSTOP}). Its writes are applied to
 * fenced resources in this JVM, in the order they arrive; what it says comes in as lines.
 */
public final class CoordinationJvm implements AutoCloseable {
    private final Process process;
    private final PrintWriter toChild;
    private final Function<String, FencedResource> resources;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> stderr = Collections.synchronizedList(new ArrayList<>());
    private final List<Long> rejectedTokens = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Long> running = new java.util.concurrent.ConcurrentHashMap<>();

    private CoordinationJvm(Process process, Function<String, FencedResource> resources) {
        this.process = process;
        this.toChild = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        this.resources = resources;
    }

    /** A candidate {@code candidate} in the election of {@code group}; its leader work writes to resource "leader". */
    public static CoordinationJvm candidate(
            ClientConnection connection,
            String group,
            String candidate,
            Duration ttl,
            Function<String, FencedResource> resources) {
        return start(
                connection, "elect " + EventLines.encode(group) + " " + candidate + " " + ttl.toMillis(), resources);
    }

    /** An instance {@code instance} spreading tasks t0..t(n-1) of {@code group}; task ti writes to resource "ti". */
    public static CoordinationJvm instance(
            ClientConnection connection,
            String group,
            String instance,
            Duration ttl,
            Duration monitorPeriod,
            int tasks,
            Function<String, FencedResource> resources) {
        return start(
                connection,
                "spread " + EventLines.encode(group) + " " + instance + " " + ttl.toMillis() + " "
                        + monitorPeriod.toMillis() + " " + tasks,
                resources);
    }

    private static CoordinationJvm start(
            ClientConnection connection, String role, Function<String, FencedResource> resources) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(
                java,
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                System.getProperty("java.class.path"),
                CoordinationJvmMain.class.getName());
        Process child;
        try {
            child = builder.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start a coordination JVM: " + e.getMessage(), e);
        }
        CoordinationJvm jvm = new CoordinationJvm(child, resources);
        jvm.startReaders();
        // the connection goes on stdin, never on the command line: it may hold credentials
        jvm.toChild.println("connection " + EventLines.encode(connection.uri()));
        for (Map.Entry<String, String> p : connection.properties().entrySet()) {
            jvm.toChild.println("property " + EventLines.encode(p.getKey()) + " " + EventLines.encode(p.getValue()));
        }
        jvm.toChild.println(role);
        jvm.toChild.println("start");
        return jvm;
    }

    private void startReaders() {
        Thread out = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            if (line.startsWith("write ")) {
                                String[] f = line.split(" ");
                                long token = Long.parseLong(f[2]);
                                if (!resources.apply(f[1]).write(token)) {
                                    rejectedTokens.add(token);
                                }
                            } else {
                                String[] f = line.split(" ");
                                if (f[0].equals("running") && f.length == 3) {
                                    running.put(f[1], Long.parseLong(f[2]));
                                } else if (f[0].equals("interrupted") && f.length == 3) {
                                    running.remove(f[1], Long.parseLong(f[2]));
                                }
                                lines.add(line);
                            }
                        }
                    } catch (IOException | RuntimeException e) {
                        lines.add("reader failed: " + e);
                    }
                    lines.add("exited");
                },
                "tck-coordination-jvm-out");
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
                "tck-coordination-jvm-err");
        err.setDaemon(true);
        err.start();
    }

    /** Waits for the next line starting with {@code prefix} (skipping others); an AssertionError with the child's output if none comes. */
    public String await(String prefix, Duration bound) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError(
                        "the coordination JVM never said '" + prefix + "' within " + bound + "\n" + diagnostics());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** What the child runs now (the leader's work or its tasks), with the token each runs under. */
    public Map<String, Long> running() {
        return Map.copyOf(running);
    }

    /** Tokens of writes the fenced resources turned away. */
    public List<Long> rejectedTokens() {
        return List.copyOf(rejectedTokens);
    }

    public void pause() {
        ProcessSignals.send("STOP", process.pid());
    }

    public void resume() {
        ProcessSignals.send("CONT", process.pid());
    }

    /** A crash: SIGKILL, nothing released. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
    }

    public String diagnostics() {
        return "child stderr:\n" + String.join("\n", List.copyOf(stderr));
    }

    @Override
    public void close() {
        process.destroyForcibly();
        toChild.close();
    }
}
