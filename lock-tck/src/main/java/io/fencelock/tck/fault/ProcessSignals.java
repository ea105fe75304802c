package io.fencelock.tck.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * POSIX signals for fault injection on servers run from local binaries. Java can only send
 * SIGTERM and SIGKILL to its own children, and a server is a tree of processes (PostgreSQL runs
 * one backend per connection), so this goes through {@code kill(1)} and {@code /proc}.
 */
public final class ProcessSignals {
    private static final long COMMAND_TIMEOUT_SECONDS = 10;

    private ProcessSignals() {}

    /** The live descendants of {@code pid} (children first), found through their parent links. */
    public static List<Long> descendants(long pid) {
        return ProcessHandle.of(pid).stream()
                .flatMap(ProcessHandle::descendants)
                .map(ProcessHandle::pid)
                .toList();
    }

    /** Sends {@code signal} (e.g. {@code "STOP"}) to {@code pid}; fails if it cannot be delivered. */
    public static void send(String signal, long pid) {
        if (run(signal, List.of(pid)) != 0) {
            throw new IllegalStateException(
                    "kill -" + signal + " " + pid + " failed: no such process or not permitted");
        }
    }

    /** Sends {@code signal} to each of {@code pids}, ignoring those that have exited meanwhile. */
    public static void sendAll(String signal, List<Long> pids) {
        if (!pids.isEmpty()) {
            run(signal, pids);
        }
    }

    /**
     * Waits until none of {@code pids} can still run (gone, or a zombie: an orphan whose parent was
     * killed may never be reaped, but it holds no resources any more), or the timeout passes.
     */
    public static void awaitDead(List<Long> pids, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<Long> waiting = new ArrayList<>(pids);
        while (!waiting.isEmpty() && System.nanoTime() < deadline) {
            waiting.removeIf(ProcessSignals::isDead);
            if (!waiting.isEmpty()) {
                Thread.sleep(5);
            }
        }
    }

    private static boolean isDead(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // "pid (comm) S ...": the state follows the last ')' since comm may contain one
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state == 'Z' || state == 'X';
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int run(String signal, List<Long> pids) {
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(pid -> command.add(Long.toString(pid)));
        try {
            Process kill = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!kill.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " did not finish");
            }
            return kill.exitValue();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal, e);
        }
    }
}
