package io.fencelock.testservers.common;

import io.fencelock.tck.fault.ProcessSignals;
import io.fencelock.tck.fixture.ServerControl;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A server the fixtures run from local binaries as a direct child process (PID 1 here does not reap
 * orphans), in a throwaway directory of its own that holds its data and its log. This class does
 * the lifecycle every such server shares, the {@link ServerControl} the fault properties use: start
 * on the same data and port and wait until it serves (failing with the log's tail when it exits or
 * does not get ready in time), a clean shutdown by signal, a crash ({@code SIGKILL} to the server and
 * everything it forked), a freeze ({@code SIGSTOP}) of the whole process tree and its thaw, and
 * {@link #destroy()}, the end of the server and its directory. A subclass says only how to launch the
 * server and how to tell that it serves.
 */
public abstract class ServerProcess implements ServerControl {
    private final String name;
    private final Path dir;
    private final Path log;
    private final Duration startTimeout;
    private final Duration stopTimeout;
    private final ReentrantLock lock = new ReentrantLock();
    private Process server; // guarded by lock; null when stopped

    /**
     * @param name    the server in messages, e.g. {@code "redis-server"} or {@code "etcd n1"}
     * @param dir     its own directory (see {@link #newDirectory(String)}), deleted by {@link #destroy()}
     * @param logFile the name of its log in {@code dir}
     */
    protected ServerProcess(String name, Path dir, String logFile, Duration startTimeout, Duration stopTimeout) {
        this.name = name;
        this.dir = dir;
        this.log = dir.resolve(logFile);
        this.startTimeout = startTimeout;
        this.stopTimeout = stopTimeout;
    }

    /** The server's command line; it runs in {@link #dir()}, its output and errors appended to its log. */
    protected abstract List<String> command();

    /** One readiness probe of the freshly started {@code process}: whether it serves yet. */
    protected abstract boolean serves(Process process) throws IOException;

    /** What the last failed probe saw, for the message when the server does not get ready. */
    protected String notReadyDetail() {
        return "";
    }

    /** The signal of a clean shutdown: {@code TERM} unless the server wants another. */
    protected String shutdownSignal() {
        return "TERM";
    }

    /**
     * How {@link #destroy()} ends the server: {@code KILL} (its data is thrown away, so there is
     * nothing to flush) unless the server wants a signal it handles.
     */
    protected String destroySignal() {
        return "KILL";
    }

    /** {@code binary} followed by {@code arguments}. */
    protected static List<String> commandLine(Path binary, List<String> arguments) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(arguments);
        return command;
    }

    /** A new temp directory {@code fencelock-<kind>-*} for one server. */
    public static Path newDirectory(String kind) throws IOException {
        return Files.createTempDirectory("fencelock-" + kind + "-");
    }

    /** Sets a server up in its directory; may fail with an {@code IOException} or {@code E}. */
    @FunctionalInterface
    public interface SetUp<T, E extends Exception> {
        T in(Path dir) throws IOException, E;
    }

    /**
     * What {@code setUp} makes in a {@link #newDirectory(String) new directory}; when it fails, the
     * directory and whatever it left there are deleted before the failure goes on.
     */
    public static <T, E extends Exception> T inNewDirectory(String kind, SetUp<T, E> setUp) throws IOException, E {
        Path dir = newDirectory(kind);
        try {
            return setUp.in(dir);
        } catch (Throwable e) {
            ThrowawayServers.deleteRecursively(dir);
            throw e;
        }
    }

    /** {@code program} at the first of {@code wellKnown} paths, else the first on the {@code PATH}. */
    public static Path findExecutable(String program, List<Path> wellKnown) throws ServerLocator.Unavailable {
        List<Path> candidates = new ArrayList<>(wellKnown);
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                if (!entry.isBlank()) {
                    candidates.add(Path.of(entry, program));
                }
            }
        }
        return candidates.stream()
                .filter(Files::isExecutable)
                .findFirst()
                .orElseThrow(
                        () -> new ServerLocator.Unavailable("no " + program + " in " + wellKnown + " or on the PATH"));
    }

    /** Runs a one-off {@code command} in {@link #dir()} (e.g. {@code initdb}) to its end; fails with its output's tail. */
    protected final void runToCompletion(String what, List<String> command) throws IOException {
        Path output = dir.resolve(what + ".log");
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        try {
            if (!process.waitFor(startTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException(what + " did not finish in " + startTimeout.toMillis() + " ms");
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted during " + what, e);
        }
        if (process.exitValue() != 0) {
            throw new IOException(
                    what + " failed with exit code " + process.exitValue() + ":\n" + ThrowawayServers.tail(output));
        }
    }

    /** The server's directory: its data, its log. */
    public final Path dir() {
        return dir;
    }

    /** The last lines of the server's log. */
    public final String logTail() {
        return ThrowawayServers.tail(log);
    }

    @Override
    public void start() {
        startWith(command());
    }

    /** Starts the server with {@code command} (e.g. with a first-start option) unless it runs already. */
    protected final void startWith(List<String> command) {
        lock.lock();
        try {
            if (server != null && server.isAlive()) {
                return;
            }
            Process process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            awaitReady(process);
            server = process;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + this, e);
        } finally {
            lock.unlock();
        }
    }

    /** Probes until {@code process} serves; an {@link IOException} with the log's tail when it exits or does not get ready in time (then it is ended). */
    private void awaitReady(Process process) throws IOException {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        try {
            while (System.nanoTime() - deadline < 0) {
                if (!process.isAlive()) {
                    throw new IOException(name + " exited with code " + process.exitValue() + ":\n" + logTail());
                }
                if (serves(process)) {
                    return;
                }
                Thread.sleep(10);
            }
            process.destroyForcibly();
            throw new IOException(name + " not ready after " + startTimeout.toMillis() + " ms" + notReadyDetail()
                    + ":\n" + logTail());
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting " + name, e);
        }
    }

    @Override
    public void stop() {
        shutDown(shutdownSignal());
    }

    /** Ends the server (by {@link #destroySignal()}) and deletes its directory: the end of this server. */
    public void destroy() {
        try {
            keepTheLogOfAnExitOfItsOwn();
            if ("KILL".equals(destroySignal())) {
                kill();
            } else {
                shutDown(destroySignal());
            }
        } finally {
            ThrowawayServers.deleteRecursively(dir);
        }
    }

    /**
     * A server that ended by itself (its own crash: every stop, kill or crash we cause forgets the
     * process) keeps its log outside the directory about to be deleted, so the cause can be found.
     */
    private void keepTheLogOfAnExitOfItsOwn() {
        lock.lock();
        try {
            OptionalInt exit = exitedByItself();
            if (exit.isEmpty()) {
                return;
            }
            Path kept = Files.createTempFile("fencelock-" + name.replace(' ', '-') + "-", ".log");
            Files.copy(log, kept, StandardCopyOption.REPLACE_EXISTING);
            System.err.println("fencelock: " + this + " exited by itself (code " + exit.getAsInt()
                    + ") before it was stopped; its log is kept in " + kept + "; its last lines:\n" + logTail());
        } catch (IOException e) {
            System.err.println("fencelock: " + this + " exited by itself; its log could not be kept: " + e);
        } finally {
            lock.unlock();
        }
    }

    /** Sends {@code signal} and waits for the server to exit; kills it if it does not in time. */
    private void shutDown(String signal) {
        lock.lock();
        try {
            if (server == null || !server.isAlive()) {
                server = null;
                return;
            }
            resumeTree(); // a frozen server cannot shut down
            ProcessSignals.send(signal, server.pid());
            if (!server.waitFor(stopTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                killTree();
                throw new IllegalStateException(
                        this + " did not shut down in " + stopTimeout.toMillis() + " ms; killed it");
            }
            server = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping " + this, e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void kill() {
        lock.lock();
        try {
            if (server != null && server.isAlive()) {
                killTree();
            }
            server = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing " + this, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * SIGKILL to the server and every process it forked (PostgreSQL's backends, a Redis AOF rewrite),
     * as a crash of the machine would: an orphan left behind could keep shared memory or a port.
     */
    private void killTree() throws InterruptedException {
        long pid = server.pid();
        ProcessSignals.send("STOP", pid); // it forks nothing while we list its children
        List<Long> children = ProcessSignals.descendants(pid);
        ProcessSignals.send("KILL", pid);
        ProcessSignals.sendAll("KILL", children);
        server.waitFor();
        ProcessSignals.awaitDead(children, stopTimeout.toMillis());
    }

    @Override
    public void pause() {
        lock.lock();
        try {
            long pid = requireRunning();
            ProcessSignals.send("STOP", pid); // the parent first, so it forks nothing we would miss
            ProcessSignals.sendAll("STOP", ProcessSignals.descendants(pid));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void resume() {
        lock.lock();
        try {
            requireRunning();
            resumeTree();
        } finally {
            lock.unlock();
        }
    }

    private void resumeTree() {
        long pid = server.pid();
        ProcessSignals.sendAll("CONT", ProcessSignals.descendants(pid));
        ProcessSignals.send("CONT", pid);
    }

    /**
     * The exit code when the server ended by itself (every stop, kill or crash we cause forgets the
     * process): a member of a cluster that cannot bind a port of its own, say, exits after it served.
     */
    public OptionalInt exitedByItself() {
        lock.lock();
        try {
            return server == null || server.isAlive() ? OptionalInt.empty() : OptionalInt.of(server.exitValue());
        } finally {
            lock.unlock();
        }
    }

    /** The running server's process id (its children, e.g. PostgreSQL's backends, are its descendants); empty when stopped. */
    public java.util.OptionalLong pid() {
        lock.lock();
        try {
            return server != null && server.isAlive()
                    ? java.util.OptionalLong.of(server.pid())
                    : java.util.OptionalLong.empty();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean isRunning() {
        lock.lock();
        try {
            return server != null && server.isAlive();
        } finally {
            lock.unlock();
        }
    }

    private long requireRunning() {
        if (server == null || !server.isAlive()) {
            throw new IllegalStateException(this + " is not running");
        }
        return server.pid();
    }
}
