package io.fencelock.bench;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.coordination.LeaderElection;
import io.fencelock.coordination.TaskSpreader;
import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * Leader election and task spreading on one backend: how long leadership takes to move after the
 * leader crashes or resigns, and how long tasks take to move after an instance crashes or joins.
 * A crash is the holder's connections going away (its backend closed under a running client), so
 * only the backend's expiry frees its locks.
 */
final class CoordinationMeasurements {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final int TASKS = 6;

    private CoordinationMeasurements() {}

    static Figures.Coordination measure(BackendUnderTest backend, Duration ttl, int samples) throws Exception {
        Duration monitor = ttl.dividedBy(4);
        double[] failover = new double[samples];
        double[] resign = new double[samples];
        double[] taskTakeover = new double[samples];
        double[] join = new double[samples];
        for (int i = 0; i < samples; i++) {
            String group = "bench-election-" + i + "-" + System.nanoTime();
            failover[i] = leaderFailoverMs(backend, group + "-crash", ttl);
            resign[i] = resignHandOverMs(backend, group + "-resign", ttl);
            double[] tasks = taskMovesMs(backend, "bench-tasks-" + i + "-" + System.nanoTime(), ttl, monitor);
            taskTakeover[i] = tasks[0];
            join[i] = tasks[1];
        }
        return new Figures.Coordination(
                ttl.toMillis(),
                monitor.toMillis(),
                samples,
                median(failover),
                median(resign),
                median(taskTakeover),
                median(join));
    }

    private static double leaderFailoverMs(BackendUnderTest backend, String group, Duration ttl) throws Exception {
        LockBackend doomedBackend = backend.openBackend();
        LockClient doomed = LockClient.create(doomedBackend, options(ttl));
        try (LockClient other = LockClient.create(backend.openBackend(), options(ttl));
                LeaderElection first = LeaderElection.builder(doomed, group)
                        .candidate("first")
                        .build()
                        .start()) {
            await("the first candidate to lead", first::isLeader);
            try (LeaderElection second = LeaderElection.builder(other, group)
                    .candidate("second")
                    .build()
                    .start()) {
                long crashed = System.nanoTime();
                doomedBackend.close();
                await("the second candidate to lead after the leader crashed", second::isLeader);
                return (System.nanoTime() - crashed) / 1e6;
            }
        } finally {
            doomed.close();
        }
    }

    private static double resignHandOverMs(BackendUnderTest backend, String group, Duration ttl) throws Exception {
        try (LockClient a = LockClient.create(backend.openBackend(), options(ttl));
                LockClient b = LockClient.create(backend.openBackend(), options(ttl));
                LeaderElection first = LeaderElection.builder(a, group)
                        .candidate("first")
                        .build()
                        .start()) {
            await("the first candidate to lead", first::isLeader);
            try (LeaderElection second =
                    LeaderElection.builder(b, group).candidate("second").build().start()) {
                Thread.sleep(50); // the second candidate is waiting for the lock, as a standby does
                long resigned = System.nanoTime();
                first.resign();
                await("the second candidate to lead after a resign", second::isLeader);
                return (System.nanoTime() - resigned) / 1e6;
            }
        }
    }

    /** [tasks of a crashed instance all running elsewhere, a joining instance holding its share], in ms. */
    private static double[] taskMovesMs(BackendUnderTest backend, String group, Duration ttl, Duration monitor)
            throws Exception {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < TASKS; i++) {
            keys.add("t" + i);
        }
        List<LockClient> clients = new ArrayList<>();
        List<TaskSpreader> spreaders = new ArrayList<>();
        try {
            LockBackend doomedBackend = backend.openBackend();
            List<TaskSpreader> live = new ArrayList<>();
            TaskSpreader doomed = null;
            for (String id : List.of("a", "b", "c")) {
                LockBackend b = id.equals("c") ? doomedBackend : backend.openBackend();
                LockClient client = LockClient.create(b, options(ttl));
                clients.add(client);
                TaskSpreader s = TaskSpreader.builder(client, group)
                        .instance(id)
                        .ttl(ttl)
                        .monitorPeriod(monitor)
                        .tasks(keys)
                        .work((key, lease) -> Thread.sleep(Long.MAX_VALUE))
                        .build()
                        .start();
                spreaders.add(s);
                if (id.equals("c")) {
                    doomed = s;
                } else {
                    live.add(s);
                }
            }
            TaskSpreader c = doomed;
            await(
                    "the tasks to spread",
                    () -> live.get(0).holdingKeys().size() == 2
                            && live.get(1).holdingKeys().size() == 2
                            && c.holdingKeys().size() == 2);
            long crashed = System.nanoTime();
            doomedBackend.close();
            await(
                    "the crashed instance's tasks to run elsewhere",
                    () -> live.get(0).holdingKeys().size()
                                    + live.get(1).holdingKeys().size()
                            == TASKS);
            double takeover = (System.nanoTime() - crashed) / 1e6;
            LockClient joinerClient = LockClient.create(backend.openBackend(), options(ttl));
            clients.add(joinerClient);
            long joined = System.nanoTime();
            TaskSpreader joiner = TaskSpreader.builder(joinerClient, group)
                    .instance("d")
                    .ttl(ttl)
                    .monitorPeriod(monitor)
                    .tasks(keys)
                    .work((key, lease) -> Thread.sleep(Long.MAX_VALUE))
                    .build()
                    .start();
            spreaders.add(joiner);
            await(
                    "the joining instance to hold its share",
                    () -> joiner.holdingKeys().size() == 2);
            return new double[] {takeover, (System.nanoTime() - joined) / 1e6};
        } finally {
            spreaders.forEach(TaskSpreader::close);
            clients.forEach(LockClient::close);
        }
    }

    private static LockOptions options(Duration ttl) {
        return LockOptions.builder().ttl(ttl).build();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return Measurements.percentile(sorted, 50);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + BOUND.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("no " + what + " within " + BOUND);
            }
            Thread.sleep(2);
        }
    }
}
