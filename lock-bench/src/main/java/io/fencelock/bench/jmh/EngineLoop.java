package io.fencelock.bench.jmh;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

/**
 * One pass of acquire + release cycles through the engine, for {@link EngineCostAB}: loaded once per
 * engine build under comparison, each in a class loader of its own, and called through a JDK interface
 * so that the two builds never meet. The argument is {@code backend:path:threads:millis}
 * (granting|inmemory, try|acquire); the answer is nanoseconds of wall time per completed cycle.
 */
public final class EngineLoop implements ToDoubleFunction<String> {
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** One client per backend, kept across passes so that a pass measures a warm engine. */
    private final Map<String, LockClient> clients = new HashMap<>();

    @Override
    public double applyAsDouble(String spec) {
        String[] part = spec.split(":");
        String backend = part[0];
        boolean waiting = part[1].equals("acquire");
        int threads = Integer.parseInt(part[2]);
        long millis = Long.parseLong(part[3]);
        LockClient client = clients.computeIfAbsent(
                backend,
                b -> LockClient.create(
                        b.equals("inmemory") ? InMemoryLockBackend.builder().build() : new GrantingBackend(),
                        LockOptions.defaults()));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong cycles = new AtomicLong();
        CountDownLatch done = new CountDownLatch(threads);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            String name = "ab-" + backend + "-" + t;
            workers[t] = new Thread(() -> {
                long mine = 0;
                try {
                    while (!stop.get()) {
                        var lease = waiting ? client.acquire(name, WAIT) : client.tryAcquire(name);
                        lease.orElseThrow().release();
                        mine++;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    cycles.addAndGet(mine);
                    done.countDown();
                }
            });
        }
        long start = System.nanoTime();
        for (Thread w : workers) {
            w.start();
        }
        try {
            Thread.sleep(millis);
            stop.set(true);
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        long elapsed = System.nanoTime() - start;
        return elapsed / (double) Math.max(1, cycles.get());
    }
}
