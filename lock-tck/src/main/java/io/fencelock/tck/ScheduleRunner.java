package io.fencelock.tck;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LeaseState;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.Event.Type;
import io.fencelock.tck.history.History;
import io.fencelock.tck.schedule.Action;
import io.fencelock.tck.schedule.ProcessScript;
import io.fencelock.tck.schedule.Schedule;
import io.fencelock.tck.schedule.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a {@link Schedule} against a real backend: one thread and one {@link io.fencelock.LockClient} (with its
 * own backend connections) per process, all started together, every operation recorded into a
 * {@link History} with invoke and completion events on one monotonic clock.
 */
public final class ScheduleRunner {
    private final BackendFixture fixture;
    private final String namePrefix;

    /** @param namePrefix lock names of this run start with it, so runs never share a lock */
    public ScheduleRunner(BackendFixture fixture, String namePrefix) {
        this.fixture = fixture;
        this.namePrefix = namePrefix;
    }

    /** The lock names a schedule uses, by index. */
    public List<String> lockNames(Schedule schedule, int attempt) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < schedule.lockCount(); i++) {
            names.add(namePrefix + "-s" + Long.toUnsignedString(schedule.seed(), 36) + "-a" + attempt + "-L" + i);
        }
        return names;
    }

    /**
     * Runs the schedule and returns its history. {@code attempt} makes the lock names fresh when
     * the same schedule runs again (shrinking, replay). Fails with an {@link AssertionError} if a
     * process hangs far beyond the schedule's own length.
     */
    public History run(Schedule schedule, int attempt) {
        History history = new History();
        List<String> names = lockNames(schedule, attempt);
        Map<String, FencedResource> resources = new HashMap<>();
        names.forEach(n -> resources.put(n, new FencedResource()));
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(schedule.processes().size(), r -> {
            Thread t = new Thread(r, "tck-process");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> running = new ArrayList<>();
            for (ProcessScript script : schedule.processes()) {
                Process process = new Process(script, names, resources, history);
                running.add(pool.submit(() -> {
                    start.await();
                    process.run();
                    return null;
                }));
            }
            start.countDown();
            long limit = schedule.estimatedDuration().toMillis() + 30_000 + 2 * maxTtl(schedule);
            long deadline = System.currentTimeMillis() + limit;
            for (Future<?> f : running) {
                try {
                    f.get(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError(
                            "schedule seed " + schedule.seed() + " hung for more than " + limit
                                    + " ms; history so far:\n" + history,
                            e);
                } catch (ExecutionException e) {
                    throw new AssertionError(
                            "a process of schedule seed " + schedule.seed() + " crashed: " + e.getCause()
                                    + "\nhistory so far:\n" + history,
                            e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted", e);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return history;
    }

    private static long maxTtl(Schedule schedule) {
        return schedule.processes().stream()
                .mapToLong(ProcessScript::ttlMillis)
                .max()
                .orElse(0);
    }

    /** Options the TCK's clients use: the script's TTL, and short polls so schedules stay short. */
    static LockOptions optionsFor(ProcessScript script) {
        return LockOptions.builder()
                .ttl(Duration.ofMillis(script.ttlMillis()))
                .autoRenew(script.autoRenew())
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(50))
                .build();
    }

    /** One process of a schedule: a recorded client, the leases it holds per lock, and the previous ones. */
    private final class Process {
        private final ProcessScript script;
        private final List<String> names;
        private final Map<String, FencedResource> resources;
        private final History history;
        private final Map<Integer, Lease> current = new HashMap<>();
        private final Map<Integer, Lease> previous = new HashMap<>();
        private final List<Lease> abandoned = new ArrayList<>();

        Process(ProcessScript script, List<String> names, Map<String, FencedResource> resources, History history) {
            this.script = script;
            this.names = names;
            this.resources = resources;
            this.history = history;
        }

        void run() throws InterruptedException {
            try (RecordedClient client =
                    new RecordedClient(script.process(), history, fixture.openBackend(), optionsFor(script))) {
                for (Step step : script.steps()) {
                    perform(client, step);
                }
                for (Map.Entry<Integer, Lease> held : new ArrayList<>(current.entrySet())) {
                    release(client, held.getKey(), held.getValue());
                }
                // A crashed holder never releases: wait until its leases are lost before close() could free them.
                for (Lease lease : abandoned) {
                    try {
                        lease.lost().toCompletableFuture().get(lease.ttl().toMillis() + 5_000, TimeUnit.MILLISECONDS);
                    } catch (ExecutionException | TimeoutException e) {
                        throw new AssertionError(
                                "abandoned lease " + lease + " was not declared lost by its deadline", e);
                    }
                }
            }
        }

        private void perform(RecordedClient client, Step step) throws InterruptedException {
            String name = names.get(step.lock());
            Lease lease = current.get(step.lock());
            switch (step.action()) {
                case TRY_ACQUIRE, ACQUIRE -> {
                    if (lease != null && lease.state() == LeaseState.HELD) {
                        return;
                    }
                    Duration wait = step.action() == Action.ACQUIRE ? Duration.ofMillis(step.millis()) : null;
                    client.acquire(name, wait).ifPresent(got -> {
                        Lease before = current.put(step.lock(), got);
                        if (before != null) {
                            previous.put(step.lock(), before);
                        }
                    });
                }
                case HOLD, PAUSE -> Thread.sleep(step.millis());
                case WRITE -> {
                    if (lease != null && lease.isValid()) {
                        client.write(resources.get(name), lease, true);
                    }
                }
                case ZOMBIE_WRITE -> {
                    Lease last = lease != null ? lease : previous.get(step.lock());
                    if (last != null) {
                        client.write(resources.get(name), last, false);
                    }
                }
                case RENEW -> {
                    if (lease != null && lease.state() == LeaseState.HELD) {
                        client.renew(lease);
                    }
                }
                case RELEASE -> {
                    if (lease != null) {
                        release(client, step.lock(), lease);
                    }
                }
                case RELEASE_STALE -> {
                    Lease old = previous.get(step.lock());
                    if (old != null) {
                        client.releaseStale(old);
                    }
                }
                case ABANDON -> {
                    if (lease != null && !script.autoRenew()) {
                        current.remove(step.lock());
                        previous.put(step.lock(), lease);
                        abandoned.add(lease);
                    }
                }
                case PURGE -> {
                    if (client.client().capabilities().contains(Capability.PURGE_FREE)) {
                        long op = history.newOpId();
                        history.record(script.process(), op, Type.INVOKE, Kind.PURGE, null, null, 0, false, 0, null);
                        int purged = client.client().purgeFree(Duration.ZERO);
                        history.record(
                                script.process(), op, Type.OK, Kind.PURGE, null, null, 0, false, 0, purged + " purged");
                    }
                }
            }
        }

        private void release(RecordedClient client, int lock, Lease lease) {
            current.remove(lock);
            previous.put(lock, lease);
            client.release(lease);
        }
    }

    /** Capabilities a fixture's backend declares (opens and closes one backend). */
    public static Set<Capability> capabilitiesOf(BackendFixture fixture) {
        try (LockBackend backend = fixture.openBackend()) {
            return backend.capabilities();
        }
    }
}
