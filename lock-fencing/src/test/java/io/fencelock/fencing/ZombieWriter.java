package io.fencelock.fencing;

import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.fault.ProcessSignals;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A lock holder in a child JVM ({@link ZombieWriterMain}) that writes through the kit and can be
 * frozen with {@code SIGSTOP} and thawed with {@code SIGCONT}, as the TCK's {@code HolderJvm}
 * does for its own resource.
 */
final class ZombieWriter implements AutoCloseable {
    /** One reported write. */
    record Write(int seq, FencedTarget.Outcome outcome) {}

    private final Process process;
    private final PrintWriter toChild;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Write> writes = new ArrayList<>();
    private final List<String> output = Collections.synchronizedList(new ArrayList<>());
    private long token;
    private boolean ended;

    private ZombieWriter(Process process) {
        this.process = process;
        this.toChild = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
    }

    static ZombieWriter start(ClientConnection lock, FencedTarget.Spec target, String name, Duration ttl)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(
                        java,
                        "-Xmx256m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ZombieWriterMain.class.getName())
                .redirectErrorStream(true)
                .start();
        ZombieWriter writer = new ZombieWriter(child);
        Thread reader = new Thread(writer::read, "zombie-writer-out");
        reader.setDaemon(true);
        reader.start();
        // connections and credentials go on stdin, never on the command line
        writer.toChild.println("lock " + ZombieWriterMain.encode(lock.uri()));
        for (Map.Entry<String, String> p : lock.properties().entrySet()) {
            writer.toChild.println(
                    "lockprop " + ZombieWriterMain.encode(p.getKey()) + " " + ZombieWriterMain.encode(p.getValue()));
        }
        writer.toChild.println("target " + target.encode());
        writer.toChild.println("hold " + ZombieWriterMain.encode(name) + " " + ttl.toMillis());
        writer.toChild.println("go");
        return writer;
    }

    private void read() {
        try (BufferedReader r = process.inputReader(StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.split(" ");
                lock.lock();
                try {
                    if (f[0].equals("holding")) {
                        token = Long.parseLong(f[1]);
                    } else if (f[0].equals("write")) {
                        String detail = f.length > 4 ? ZombieWriterMain.decode(f[4]) : "";
                        writes.add(new Write(
                                Integer.parseInt(f[1]),
                                new FencedTarget.Outcome(
                                        FencedTarget.Outcome.Kind.valueOf(f[2]), Long.parseLong(f[3]), detail)));
                    } else if (output.size() < 200) {
                        output.add(line);
                    }
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        } catch (IOException | RuntimeException e) {
            output.add("reader failed: " + e);
        } finally {
            lock.lock();
            try {
                ended = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Waits until {@code condition} holds on the reported writes; the child's output in the failure otherwise. */
    void await(String what, Predicate<List<Write>> condition, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        lock.lock();
        try {
            while (!condition.test(writes)) {
                long left = deadline - System.nanoTime();
                if (ended || left <= 0) {
                    throw new AssertionError("the zombie writer never reached: " + what + " (last writes "
                            + writes.subList(Math.max(0, writes.size() - 20), writes.size()) + ", output " + output
                            + ")");
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The token the child holds, once it reported one. */
    long awaitHolding(Duration bound) throws InterruptedException {
        await("holding the lock", w -> token > 0, bound);
        lock.lock();
        try {
            return token;
        } finally {
            lock.unlock();
        }
    }

    List<Write> writes() {
        lock.lock();
        try {
            return List.copyOf(writes);
        } finally {
            lock.unlock();
        }
    }

    void freeze() {
        ProcessSignals.send("STOP", process.pid());
    }

    void thaw() {
        ProcessSignals.send("CONT", process.pid());
    }

    /** Tells the child to stop and waits for it to end. */
    void stop(Duration bound) throws InterruptedException {
        toChild.println("stop");
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the zombie writer did not stop; output " + output);
        }
    }

    @Override
    public void close() {
        process.destroyForcibly(); // SIGKILL ends a frozen process too
        toChild.close();
    }
}
