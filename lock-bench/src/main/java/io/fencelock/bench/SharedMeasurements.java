package io.fencelock.bench;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.LockOptions;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Throughput of shared locks on one backend: a read-heavy read-write lock (9 reads to 1 write) and a
 * semaphore of {@link #PERMITS} permits taken one at a time, by {@link #THREADS} threads in
 * {@link #INSTANCES} instances (clients), each cycle an acquire and a release around an empty
 * critical section. Contenders: fencelock, the provider alone through the SPI (no engine), and the
 * backend's peers (Redisson's {@code RReadWriteLock}, {@code RPermitExpirableSemaphore} and
 * {@code RSemaphore} on Redis). Passes alternate the contenders' order, as the mutex cells do.
 */
final class SharedMeasurements {
    static final int PERMITS = 4;
    static final int THREADS = 8;
    static final int INSTANCES = 2;
    static final String READ_WRITE = "read-write lock, 9 reads : 1 write";
    static final String SEMAPHORE = "semaphore, 1 of " + PERMITS + " permits";
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** One instance of a shared-lock implementation (a client and its connections). */
    interface SharedContender extends AutoCloseable {
        LockContender.Held read(String name, Duration wait) throws Exception;

        LockContender.Held write(String name, Duration wait) throws Exception;

        LockContender.Held permit(String name, Duration wait) throws Exception;

        @Override
        void close() throws Exception;
    }

    /** How to open instances of one implementation; {@code readWrite} false: it offers no read-write lock. */
    record Factory(String label, String kind, boolean readWrite, Opener opener) {}

    @FunctionalInterface
    interface Opener {
        SharedContender open() throws Exception;
    }

    private SharedMeasurements() {}

    /** fencelock and the provider alone on this backend, then its peers. */
    static List<Factory> contenders(BackendUnderTest backend) {
        List<Factory> all = new ArrayList<>();
        all.add(new Factory("fencelock", "fencelock", true, () -> new Fencelock(backend.openBackend())));
        all.add(new Factory(ProviderSpiContender.LABEL, "raw", true, () -> new ProviderAlone(backend.openBackend())));
        all.addAll(backend.sharedPeers());
        return all;
    }

    static List<Figures.Throughput> measure(BackendUnderTest backend, BenchSettings settings) throws Exception {
        List<Factory> contenders = contenders(backend);
        List<Figures.Throughput> out = new ArrayList<>();
        for (String workload : List.of(READ_WRITE, SEMAPHORE)) {
            List<List<Double>> passes = new ArrayList<>();
            contenders.forEach(c -> passes.add(new ArrayList<>()));
            for (int pass = 0; pass < settings.throughputRounds(); pass++) {
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < contenders.size(); i++) {
                    order.add(i);
                }
                if (pass % 2 == 1) {
                    Collections.reverse(order);
                }
                for (int i : order) {
                    Factory c = contenders.get(i);
                    if (workload.equals(READ_WRITE) && !c.readWrite()) {
                        continue;
                    }
                    passes.get(i).add(cyclesPerSecond(c, workload, settings));
                }
            }
            for (int i = 0; i < contenders.size(); i++) {
                if (!passes.get(i).isEmpty()) {
                    Factory c = contenders.get(i);
                    out.add(Figures.Throughput.of(c.label(), c.kind(), workload, THREADS, passes.get(i)));
                }
            }
        }
        return out;
    }

    private static double cyclesPerSecond(Factory factory, String workload, BenchSettings settings) throws Exception {
        String name = "bench-shared-" + UUID.randomUUID();
        List<SharedContender> instances = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicLong cycles = new AtomicLong();
        try {
            for (int i = 0; i < INSTANCES; i++) {
                instances.add(factory.opener().open());
            }
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                SharedContender instance = instances.get(t % INSTANCES);
                Random random = new Random(t);
                threads.add(pool.submit(() -> {
                    while (!stop.get()) {
                        LockContender.Held held = workload.equals(SEMAPHORE)
                                ? instance.permit(name, WAIT)
                                : random.nextInt(10) == 0 ? instance.write(name, WAIT) : instance.read(name, WAIT);
                        if (held != null) {
                            held.release();
                            if (counting.get()) {
                                cycles.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            Thread.sleep(settings.throughputWarmup().toMillis());
            counting.set(true);
            long start = System.nanoTime();
            Thread.sleep(settings.throughputTime().toMillis());
            counting.set(false);
            double seconds = (System.nanoTime() - start) / 1e9;
            long counted = cycles.get();
            stop.set(true);
            for (Future<?> f : threads) {
                f.get(WAIT.toSeconds() * 3, TimeUnit.SECONDS);
            }
            return counted / seconds;
        } finally {
            stop.set(true);
            pool.shutdownNow();
            for (SharedContender c : instances) {
                c.close();
            }
        }
    }

    /** fencelock's handles, one client per instance, as an application would use them. */
    private static final class Fencelock implements SharedContender {
        private final LockClient client;

        Fencelock(LockBackend backend) {
            this.client = LockClient.create(
                    backend,
                    LockOptions.builder().ttl(BackendUnderTest.WORK_TTL).build());
        }

        @Override
        public LockContender.Held read(String name, Duration wait) throws Exception {
            return held(client.readWriteLock(name).read(wait));
        }

        @Override
        public LockContender.Held write(String name, Duration wait) throws Exception {
            return held(client.readWriteLock(name).write(wait));
        }

        @Override
        public LockContender.Held permit(String name, Duration wait) throws Exception {
            return held(client.semaphore(name, PERMITS).acquire(1, wait));
        }

        private static LockContender.Held held(Optional<Lease> lease) {
            return lease.<LockContender.Held>map(l -> l::release).orElse(null);
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** The provider's shared primitive through the SPI, retried at once on a refusal: what the engine adds shows against it. */
    private static final class ProviderAlone implements SharedContender {
        private final LockBackend backend;

        ProviderAlone(LockBackend backend) {
            this.backend = backend;
        }

        @Override
        public LockContender.Held read(String name, Duration wait) throws Exception {
            return take(name, LockMode.READ, 1, 0, wait);
        }

        @Override
        public LockContender.Held write(String name, Duration wait) throws Exception {
            return take(name, LockMode.WRITE, 1, 0, wait);
        }

        @Override
        public LockContender.Held permit(String name, Duration wait) throws Exception {
            return take(name, LockMode.PERMITS, 1, PERMITS, wait);
        }

        private LockContender.Held take(String name, LockMode mode, int permits, int limit, Duration wait)
                throws Exception {
            // a try, not a wait: no writer's intent is left behind, so writers may wait longer than with the engine
            SharedRequest request =
                    new SharedRequest(mode, permits, limit, UUID.randomUUID().toString(), false, false);
            return BusyRetry.until(wait, () -> {
                String leaseId = UUID.randomUUID().toString();
                return backend.tryAcquireShared(name, leaseId, BackendUnderTest.WORK_TTL, request, LockMetadata.NONE)
                                .acquired()
                        ? () -> backend.release(name, leaseId, GrantKind.SHARED)
                        : null;
            });
        }

        @Override
        public void close() {
            backend.close();
        }
    }
}
