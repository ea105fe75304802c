package io.fencelock.bench;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.InstrumentedBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * The workloads. Every contender of a backend gets the same operations on the same server, after the
 * same warm-up; latency rounds are interleaved so that a noisy moment of this shared machine does
 * not fall on one contender only.
 */
final class Measurements {
    private static final Duration LONG_WAIT = Duration.ofSeconds(10);
    /** How long a second thread waits for a name its client already holds, in the exclusion check. */
    private static final Duration EXCLUSION_PROBE = Duration.ofMillis(200);

    private static final int LATENCY_ROUNDS = 5;
    /** Cycles one contender runs in a row in the latency workload before the next one's turn. */
    static final int LATENCY_RUN = 50;

    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final BenchSettings settings;

    Measurements(BenchSettings settings) {
        this.settings = settings;
    }

    /** Uncontended acquire + release, one client each, on one name per contender. */
    List<Figures.Latency> latency(List<LockContender.Factory> factories, List<String> errors)
            throws InterruptedException {
        return interleaved(factories, "bench-latency", settings.latencyCycles(), errors);
    }

    /**
     * {@code cycles} uncontended acquire + release cycles of each contender on {@code name}, after the
     * warm-up, in rounds of alternating order and within each round in turns of {@link #LATENCY_RUN} cycles
     * (a contender that fails drops out, its error in {@code errors}).
     */
    private List<Figures.Latency> interleaved(
            List<LockContender.Factory> factories, String name, int cycles, List<String> errors)
            throws InterruptedException {
        List<LockContender> open = new ArrayList<>();
        List<LockContender.Factory> measured = new ArrayList<>();
        List<Histogram> histograms = new ArrayList<>();
        // per contender whose backend calls are timed, the cycles less the time inside them; else null
        List<Histogram> outsideCalls = new ArrayList<>();
        List<double[]> roundP50s = new ArrayList<>();
        try {
            for (LockContender.Factory f : factories) {
                try {
                    LockContender c = f.open();
                    cycles(c, name, settings.latencyWarmup(), null, null);
                    open.add(c);
                    measured.add(f);
                    histograms.add(new Histogram(HIGHEST_NANOS, 3));
                    outsideCalls.add(
                            c.nanosInBackendCalls() == LockContender.NOT_COUNTED
                                    ? null
                                    : new Histogram(HIGHEST_NANOS, 3));
                    roundP50s.add(new double[LATENCY_ROUNDS]);
                } catch (Exception e) {
                    errors.add(f.label() + " latency: " + describe(e));
                }
            }
            int perRound = Math.max(1, cycles / LATENCY_ROUNDS);
            boolean[] failed = new boolean[open.size()];
            for (int round = 0; round < LATENCY_ROUNDS; round++) {
                List<Histogram> rounds = new ArrayList<>();
                open.forEach(c -> rounds.add(new Histogram(HIGHEST_NANOS, 3)));
                // Interleaved in short runs, each turn starting at the next contender (and the other way round in
                // odd rounds): every contender meets the machine's drift (a checkpoint, a busy neighbour) alike, so
                // a difference of medians is the contenders', not the minute's. A run of cycles, not one: after its
                // first cycle a contender's connection, threads and code are as warm as in a long run of its own.
                for (int from = 0; from < perRound; from += LATENCY_RUN) {
                    int run = Math.min(LATENCY_RUN, perRound - from);
                    for (int k = 0; k < open.size(); k++) {
                        int turn = (from / LATENCY_RUN + k) % open.size();
                        int i = round % 2 == 0 ? turn : open.size() - 1 - turn;
                        if (failed[i]) {
                            continue;
                        }
                        try {
                            cycles(open.get(i), name, run, rounds.get(i), outsideCalls.get(i));
                        } catch (InterruptedException e) {
                            throw e;
                        } catch (Exception e) {
                            failed[i] = true;
                            errors.add(measured.get(i).label() + " latency: " + describe(e));
                        }
                    }
                }
                for (int i = 0; i < open.size(); i++) {
                    histograms.get(i).add(rounds.get(i));
                    // a round the contender did not finish (it failed) has no p50: NaN keeps the rounds' order
                    roundP50s.get(i)[round] = rounds.get(i).getTotalCount() > 0
                            ? micros(rounds.get(i).getValueAtPercentile(50))
                            : Double.NaN;
                }
            }
        } finally {
            open.forEach(Measurements::closeQuietly);
        }
        List<Figures.Latency> figures = new ArrayList<>();
        for (int i = 0; i < measured.size(); i++) {
            Histogram h = histograms.get(i);
            Histogram outside = outsideCalls.get(i);
            if (h.getTotalCount() > 0) {
                figures.add(new Figures.Latency(
                        measured.get(i).label(),
                        measured.get(i).kind().name().toLowerCase(),
                        h.getTotalCount(),
                        micros(h.getValueAtPercentile(50)),
                        micros(h.getValueAtPercentile(99)),
                        micros(h.getValueAtPercentile(99.9)),
                        h.getMean() / 1000.0,
                        Arrays.stream(roundP50s.get(i))
                                .filter(p -> !Double.isNaN(p))
                                .min()
                                .orElse(Double.NaN),
                        Arrays.stream(roundP50s.get(i))
                                .filter(p -> !Double.isNaN(p))
                                .max()
                                .orElse(Double.NaN),
                        Arrays.stream(roundP50s.get(i)).boxed().toList(),
                        outside == null || outside.getTotalCount() == 0
                                ? Double.NaN
                                : micros(outside.getValueAtPercentile(50))));
            }
        }
        return figures;
    }

    /**
     * {@code count} acquire + release cycles, each recorded {@code into} (when given) and, less the time the
     * cycle spent inside the backend's calls, into {@code outsideCalls} (when given: a contender that times them).
     */
    private static void cycles(LockContender c, String name, int count, Histogram into, Histogram outsideCalls)
            throws Exception {
        for (int i = 0; i < count; i++) {
            long inCallsBefore = outsideCalls == null ? 0 : c.nanosInBackendCalls();
            long start = System.nanoTime();
            LockContender.Held held = c.acquire(name, LONG_WAIT);
            if (held == null) {
                throw new IllegalStateException("an uncontended acquire of '" + name + "' was refused");
            }
            held.release();
            long took = System.nanoTime() - start;
            if (into != null) {
                into.recordValue(Math.min(HIGHEST_NANOS, took));
            }
            if (outsideCalls != null) {
                long inCalls = c.nanosInBackendCalls() - inCallsBefore;
                outsideCalls.recordValue(Math.max(0, Math.min(HIGHEST_NANOS, took - inCalls)));
            }
        }
    }

    /**
     * A few cycles on a fresh client before its throughput cells (connections, subscriptions, JIT), and
     * a check that it is a mutual exclusion between its threads: the cells have an empty critical
     * section, so a contender that lets two threads of one client hold a name would look fast without
     * being a lock.
     */
    void warm(LockContender contender, String label) throws Exception {
        cycles(contender, "bench-warm", settings.clientWarmup(), null, null);
        String name = "bench-exclusion";
        LockContender.Held held = contender.acquire(name, LONG_WAIT);
        if (held == null) {
            throw new IllegalStateException("an uncontended acquire of '" + name + "' was refused");
        }
        ExecutorService secondThread = Executors.newSingleThreadExecutor();
        try {
            LockContender.Held second = secondThread
                    .submit(() -> contender.acquire(name, EXCLUSION_PROBE))
                    .get(60, TimeUnit.SECONDS);
            if (second != null) {
                second.release();
                throw new IllegalStateException(label + " granted '" + name
                        + "' to a second thread of the client while the first held it: not a mutual exclusion,"
                        + " so its throughput is not measured");
            }
        } finally {
            secondThread.shutdownNow();
            held.release();
        }
    }

    /**
     * One pass of a throughput cell: completed cycles per second, the longest wait of any thread, CPU µs per cycle
     * of the client's process and the server's, and the lock attempts the client sent per cycle (NaN: not read).
     */
    record Pass(
            double perSecond,
            double longestWaitMs,
            double clientCpuMicros,
            double serverCpuMicros,
            double attemptsPerGrant) {}

    /**
     * {@code clients} threads of one client instance run acquire + release for the measuring time,
     * each on its own name ({@code hot} false) or all on one name; counts completed cycles. A thread's
     * wait runs from its last release (or its start) to its next grant, across refused attempts, so a
     * waiter that starves shows as a long wait even when it is never granted.
     */
    Pass throughput(LockContender contender, String label, int clients, boolean hot, CpuMeter cpu) throws Exception {
        return throughput(contender, label, clients, hot, cpu, settings.throughputTime());
    }

    /**
     * One cell's load for its warm-up time only, nothing measured: the unmeasured round before the passes, in
     * which every contender's code, the libraries they share and the server settle before any pass is counted.
     */
    void warmCell(LockContender contender, String label, int clients, boolean hot) throws Exception {
        throughput(contender, label, clients, hot, CpuMeter.NONE, Duration.ZERO);
    }

    private Pass throughput(
            LockContender contender, String label, int clients, boolean hot, CpuMeter cpu, Duration measured)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong completed = new AtomicLong();
        LongestWait longestWait = new LongestWait();
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        List<Future<?>> workers = new ArrayList<>();
        String stem = "bench-tp-" + (hot ? "hot" : "own") + "-" + clients + "-";
        try {
            for (int t = 0; t < clients; t++) {
                String name = hot ? stem + "x" : stem + t;
                workers.add(threads.submit(() -> {
                    long waitingSince = System.nanoTime();
                    while (!stop.get()) {
                        LockContender.Held held = contender.acquire(name, Duration.ofSeconds(2));
                        if (held != null) {
                            long granted = System.nanoTime();
                            held.release();
                            completed.incrementAndGet();
                            longestWait.waited(waitingSince, granted);
                            waitingSince = System.nanoTime();
                        }
                    }
                    longestWait.waited(waitingSince, System.nanoTime()); // still waiting when the cell ended
                    return null;
                }));
            }
            Thread.sleep(settings.throughputWarmup().toMillis());
            long before = completed.get();
            long attemptsBefore = contender.acquireAttempts();
            CpuMeter.Reading cpuBefore = cpu.read();
            long start = System.nanoTime();
            longestWait.from = start;
            Thread.sleep(measured.toMillis());
            long done = completed.get() - before;
            long attemptsAfter = contender.acquireAttempts();
            long end = System.nanoTime();
            double[] cpuPerCycle = cpuBefore.perCycleMicros(cpu.read(), Math.max(1, done));
            longestWait.to = end;
            double seconds = (end - start) / 1e9;
            stop.set(true);
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS); // surfaces a worker's failure
            }
            // attempts in flight at either end make the ratio a little off; over a cell's thousands of cycles, noise
            double attemptsPerGrant = attemptsBefore == LockContender.NOT_COUNTED || done == 0
                    ? Double.NaN // no grant in the pass: attempts per grant has no value
                    : (attemptsAfter - attemptsBefore) / (double) done;
            return new Pass(
                    done / seconds, longestWait.longest.get() / 1e6, cpuPerCycle[0], cpuPerCycle[1], attemptsPerGrant);
        } finally {
            stop.set(true);
            threads.shutdownNow();
            if (!threads.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(label + " throughput workers did not stop");
            }
        }
    }

    /**
     * The longest wait of one thread within a cell's measured time: a wait that began in the warm-up
     * counts from the measured start, one still running at the end counts up to the end.
     */
    private static final class LongestWait {
        private static final long NOT_YET = Long.MIN_VALUE;
        final AtomicLong longest = new AtomicLong();
        volatile long from = NOT_YET;
        volatile long to = NOT_YET;

        void waited(long since, long until) {
            long start = from;
            if (start == NOT_YET || until - start < 0) {
                return; // the wait ended in the warm-up
            }
            long end = to;
            long waited = (end != NOT_YET && until - end > 0 ? end : until) - (since - start < 0 ? start : since);
            longest.accumulateAndGet(waited, Math::max);
        }
    }

    /** One waiter's acquire call in the hand-off workload: when it held, how long it waited, its attempts. */
    private record Waited(long holdsAt, long waitedNanos, long attempts) {}

    /**
     * A waiter blocked in acquire on a second client; the holder releases; time until the waiter holds.
     * The waiter counts its attempts where the contender can: what its way of waiting costs the server.
     */
    Figures.HandOff handOff(LockContender.Factory factory) throws Exception {
        double[] samples = new double[settings.handOffSamples()];
        long attempts = 0;
        long waitedNanos = 0;
        boolean countable;
        ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        try (LockContender holder = factory.open();
                LockContender waiter = factory.openCounting()) {
            countable = waiter.acquireAttempts() != LockContender.NOT_COUNTED;
            String name = "bench-handoff";
            // Unmeasured first hand-offs (BenchSettings.handOffWarmUps): connections and sessions opened on a
            // client's first acquire, and the JIT's compiling of the waiter's path, are no hand-off's cost.
            for (int i = -settings.handOffWarmUps(); i < samples.length; i++) {
                LockContender.Held held = holder.acquire(name, LONG_WAIT);
                if (held == null) {
                    throw new IllegalStateException("the holder could not take '" + name + "'");
                }
                Future<Waited> waiting = waiterThread.submit(() -> {
                    long attemptsBefore = waiter.acquireAttempts();
                    long called = System.nanoTime();
                    LockContender.Held next = waiter.acquire(name, LONG_WAIT);
                    long holds = System.nanoTime();
                    long made = waiter.acquireAttempts() - attemptsBefore;
                    if (next == null) {
                        throw new IllegalStateException("the waiter did not get '" + name + "' within " + LONG_WAIT);
                    }
                    next.release();
                    return new Waited(holds, holds - called, made);
                });
                Thread.sleep(settings.handOffSettle().toMillis()); // the waiter has tried, failed and now waits
                long releaseStart = System.nanoTime();
                held.release();
                Waited waited = waiting.get(30, TimeUnit.SECONDS);
                if (i >= 0) {
                    samples[i] = (waited.holdsAt() - releaseStart) / 1e6;
                    attempts += waited.attempts();
                    waitedNanos += waited.waitedNanos();
                }
            }
        } finally {
            waiterThread.shutdownNow();
        }
        Arrays.sort(samples);
        boolean counted = countable && waitedNanos > 0;
        return new Figures.HandOff(
                factory.label(),
                factory.kind().name().toLowerCase(),
                factory.waitsBy(),
                samples.length,
                percentile(samples, 50),
                percentile(samples, 99),
                samples[samples.length - 1],
                counted ? (double) attempts / samples.length : Figures.HandOff.NOT_COUNTED,
                counted ? attempts / (waitedNanos / 1e9) : Figures.HandOff.NOT_COUNTED);
    }

    /** One client holds {@code leases} leases; counts renew round trips per watchdog tick and times one batch. */
    Figures.Renewal renewal(BackendUnderTest backend, int leases) throws Exception {
        Duration ttl = settings.renewalTtl();
        InstrumentedBackend counted = new InstrumentedBackend(backend.openBackend());
        RenewTimer timed = new RenewTimer(counted);
        long acquireStart = System.nanoTime();
        try (LockClient client = LockClient.create(
                timed.backend(), LockOptions.builder().ttl(ttl).build())) {
            for (int i = 0; i < leases; i++) {
                if (client.tryAcquire("bench-renew-" + leases + "-" + i).isEmpty()) {
                    throw new IllegalStateException("could not take bench-renew-" + leases + "-" + i);
                }
            }
            double acquireAll = (System.nanoTime() - acquireStart) / 1e9;
            int callsBefore = counted.renewBatchSizes().size();
            long windowStart = System.nanoTime();
            Thread.sleep(ttl.toMillis()); // three renewal intervals
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (counted.renewBatchSizes().size() == callsBefore && System.nanoTime() - deadline < 0) {
                Thread.sleep(50); // a batch still running from before the window: wait for the next one
            }
            double intervals = (System.nanoTime() - windowStart)
                    / (double) ttl.dividedBy(3).toNanos();
            List<Integer> batches = counted.renewBatchSizes();
            List<Integer> during = batches.subList(callsBefore, batches.size());
            double perInterval = during.size() / intervals;
            double meanBatch =
                    during.stream().mapToInt(Integer::intValue).average().orElse(Double.NaN);
            int largest = during.stream().mapToInt(Integer::intValue).max().orElse(0);
            int lost = leases - client.held().size();

            // the watchdog's calls in the window that renewed the most leases at once: a full tick
            double[] fullTicks = timed.calls().stream()
                    .skip(callsBefore)
                    .filter(c -> c.size() == largest)
                    .mapToDouble(c -> c.nanos() / 1e6)
                    .sorted()
                    .toArray();
            double renewMs = fullTicks.length == 0 ? Double.NaN : percentile(fullTicks, 50);
            return new Figures.Renewal(leases, perInterval, meanBatch, largest, renewMs, acquireAll, lost);
        }
    }

    /** A holder takes the lock with a TTL and is abandoned (no renewal, no release): when does a waiter get it? */
    /** Covers one period of the slowest periodic expiry among the backends (etcd's lease revocation loop). */
    private static final long TAKEOVER_JITTER_MILLIS = 500;

    Figures.Takeover takeover(BackendUnderTest backend, Duration ttl, int samples) throws Exception {
        double[] took = new double[samples];
        LockOptions crashing = LockOptions.builder().ttl(ttl).autoRenew(false).build();
        try (LockClient waiter = LockClient.create(backend.openBackend(), LockOptions.defaults())) {
            for (int i = 0; i < samples; i++) {
                // A random pause first: back-to-back samples would fall at one phase of a server's
                // periodic expiry (etcd revokes expired leases every 500 ms) and all show that phase.
                Thread.sleep(ThreadLocalRandom.current().nextLong(TAKEOVER_JITTER_MILLIS));
                String name = "bench-takeover-" + i + "-" + System.nanoTime();
                LockBackend abandonedBackend = backend.openBackend();
                long sent;
                try {
                    // The crash: the holder's connections go away right after the grant. Its client is
                    // never closed (closing would release), and with its backend gone it cannot
                    // release at its local deadline either, so only the backend's expiry frees the lock.
                    LockClient abandoned = LockClient.create(abandonedBackend, crashing);
                    sent = System.nanoTime();
                    if (abandoned.tryAcquire(name, ttl).isEmpty()) {
                        throw new IllegalStateException("the doomed holder could not take " + name);
                    }
                } finally {
                    abandonedBackend.close();
                }
                Optional<Lease> next = waiter.acquire(name, ttl.multipliedBy(4).plusSeconds(5));
                long holds = System.nanoTime();
                if (next.isEmpty()) {
                    throw new IllegalStateException("no takeover of " + name + " within 4 TTLs");
                }
                next.get().release();
                took[i] = (holds - sent) / 1e6;
            }
        }
        Arrays.sort(took);
        double median = percentile(took, 50);
        return new Figures.Takeover(
                ttl.toMillis(), samples, median, median - ttl.toMillis(), took[took.length - 1] - ttl.toMillis());
    }

    /**
     * fencelock and the raw primitive, interleaved as in the latency workload, with {@code existing} lock
     * records on the backend: the raw primitive's figure at each population tells what the server itself
     * pays for the records, as against what the provider's statements add.
     */
    Figures.Scale scale(BackendUnderTest backend, long existing, double fillSeconds, List<String> errors)
            throws InterruptedException {
        List<LockContender.Factory> contenders = backend.contenders();
        List<LockContender.Factory> both = new ArrayList<>(2);
        contenders.stream()
                .filter(f -> f.label().equals(Cells.FENCELOCK))
                .findFirst()
                .ifPresent(both::add);
        contenders.stream()
                .filter(f -> f.kind() == LockContender.Kind.RAW)
                .findFirst()
                .ifPresent(both::add);
        return new Figures.Scale(
                existing, fillSeconds, interleaved(both, "bench-scale-" + existing, settings.scaleCycles(), errors));
    }

    static double percentile(double[] sorted, double p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }

    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = e == root ? e.toString() : e + " (cause: " + root + ")";
        return io.fencelock.spi.Redaction.message(text);
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing after a measurement: nothing left to report
        }
    }
}
