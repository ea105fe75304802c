package io.fencelock.bench.jmh;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's own cost per acquire + release, with no I/O: on the in-memory backend and on
 * {@link GrantingBackend} (grants at once, no store), through {@code tryAcquire} and through
 * {@code acquire} (the waiting path: the local line, the release-signal subscription), next to the
 * backend's SPI alone ({@code spiAlone}: the same grant and release without the engine). One thread,
 * and 8 threads on distinct names (throughput: on this machine's 2 cores, 8 threads measure how the
 * engine's shared state scales, not 8x the work).
 * {@code ./mvnw -q -Pjmh -DskipTests verify -pl lock-bench -am -Dfencelock.jmh.args=EngineCostBenchmarks}.
 */
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
public class EngineCostBenchmarks {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final AtomicInteger NAMES = new AtomicInteger();

    @Param({"granting", "inmemory"})
    public String backend;

    private LockBackend lockBackend;
    private LockClient client;

    /** Each benchmark thread's own name (and, for {@code spiAlone}, its own lease id). */
    @State(Scope.Thread)
    public static class Own {
        final String name = "jmh-engine-" + NAMES.incrementAndGet();
        final String leaseId = UUID.randomUUID().toString();
    }

    @Setup(Level.Trial)
    public void start() {
        lockBackend = backend.equals("inmemory") ? InMemoryLockBackend.builder().build() : new GrantingBackend();
        client = LockClient.create(lockBackend, LockOptions.defaults());
    }

    @TearDown(Level.Trial)
    public void stop() {
        client.close();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public boolean tryAcquireRelease(Own own) {
        return client.tryAcquire(own.name).orElseThrow().release();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public boolean acquireRelease(Own own) throws InterruptedException {
        return client.acquire(own.name, WAIT).orElseThrow().release();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public boolean spiAlone(Own own) {
        return lockBackend.tryAcquire(own.name, own.leaseId, TTL).acquired()
                && lockBackend.release(own.name, own.leaseId);
    }

    @Benchmark
    @Threads(8)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public boolean tryAcquireRelease8Threads(Own own) {
        return client.tryAcquire(own.name).orElseThrow().release();
    }

    @Benchmark
    @Threads(8)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public boolean acquireRelease8Threads(Own own) throws InterruptedException {
        return client.acquire(own.name, WAIT).orElseThrow().release();
    }

    @Benchmark
    @Threads(8)
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public boolean spiAlone8Threads(Own own) {
        return lockBackend.tryAcquire(own.name, own.leaseId, TTL).acquired()
                && lockBackend.release(own.name, own.leaseId);
    }
}
