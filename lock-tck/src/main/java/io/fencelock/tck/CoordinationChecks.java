package io.fencelock.tck;

import static io.fencelock.tck.LockBackendContract.awaitCondition;
import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.coordination.LeaderElection;
import io.fencelock.coordination.TaskSpreader;
import io.fencelock.tck.fault.CoordinationJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The contract's properties of leader election and task spreading ({@code io.fencelock.coordination}),
 * built on the engine alone and so held to every backend. Each judges what the feature promises:
 * one leader or runner at a time, a fenced resource that turns a frozen one away, and the times a
 * hand-over takes, measured against the TTL.
 */
final class CoordinationChecks {
    /** Leases of one second, so that a takeover after a freeze or a crash is measured in seconds. */
    static final Duration TTL = Duration.ofSeconds(1);

    static final Duration MONITOR_PERIOD = Duration.ofMillis(200);
    private static final Duration BOUND = Duration.ofSeconds(20);

    private final Function<LockOptions, LockClient> clients;
    private final Supplier<InstrumentedBackend> backends;
    private final java.util.function.BiFunction<InstrumentedBackend, LockOptions, LockClient> clientOn;

    CoordinationChecks(
            Function<LockOptions, LockClient> clients,
            Supplier<InstrumentedBackend> backends,
            java.util.function.BiFunction<InstrumentedBackend, LockOptions, LockClient> clientOn) {
        this.clients = clients;
        this.backends = backends;
        this.clientOn = clientOn;
    }

    static LockOptions options() {
        return LockOptions.builder()
                .ttl(TTL)
                .autoRenew(true)
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(100))
                .build();
    }

    /** The longest a takeover may take after the holder stopped renewing: the TTL, one poll and scheduling on a busy machine. */
    static Duration takeoverBound(Duration extra) {
        return TTL.plus(Duration.ofMillis(100)).plus(extra).plusSeconds(2);
    }

    /** A candidate that writes its token to {@code resource} every 10 ms while it leads. */
    private record Candidate(String id, InstrumentedBackend backend, LeaderElection election, List<String> events) {}

    private Candidate candidate(String group, String id, FencedResource resource) {
        InstrumentedBackend backend = backends.get();
        LockClient client = clientOn.apply(backend, options());
        List<String> events = new CopyOnWriteArrayList<>();
        LeaderElection election = LeaderElection.builder(client, group)
                .candidate(id)
                .listener(new LeaderElection.Listener() {
                    @Override
                    public void gained(Lease lease) {
                        events.add("gained " + lease.fencingToken());
                    }

                    @Override
                    public void steppedDown(Lease lease, LeaderElection.StepDown why) {
                        events.add("stepped " + why);
                    }
                })
                .work(lease -> {
                    while (true) {
                        resource.write(lease.fencingToken());
                        Thread.sleep(10); // pacing the leader's writes; interrupted when it steps down
                    }
                })
                .build();
        return new Candidate(id, backend, election, events);
    }

    /** One leader at a time; anyone can ask who leads; a resign hands over promptly; a leader that stops renewing is replaced. */
    void leadershipMovesOnResignAndLoss(String group) throws Exception {
        FencedResource resource = new FencedResource();
        List<Candidate> candidates = List.of(
                candidate(group, "c0", resource), candidate(group, "c1", resource), candidate(group, "c2", resource));
        LockClient observer = clients.apply(options());
        try {
            candidates.forEach(c -> c.election().start());
            Candidate first = awaitLeader(candidates, null);
            assertThat(candidates.stream().filter(c -> c.election().isLeader()).count())
                    .as("leaders at once")
                    .isEqualTo(1);
            LeaderElection.Leader seen =
                    LeaderElection.leader(observer, group).orElseThrow(() -> new AssertionError("nobody leads"));
            assertThat(seen.candidate())
                    .as("who leads, asked without campaigning")
                    .contains(first.id());
            assertThat(seen.fencingToken())
                    .isEqualTo(first.election().leadership().orElseThrow().fencingToken());

            long resigned = System.nanoTime();
            first.election().resign();
            Candidate second = awaitLeader(candidates, first);
            Duration handOver = Duration.ofNanos(System.nanoTime() - resigned);
            System.out.println("[fencelock-tck] leadership handed over " + handOver.toMillis() + " ms after a resign");
            assertThat(handOver)
                    .as("hand-over after a resign")
                    .isLessThan(Duration.ofMillis(100).plusSeconds(2));
            awaitCondition(
                    "the resigned leader to report it", () -> first.events().contains("stepped RESIGNED"));
            assertThat(LeaderElection.leader(observer, group).orElseThrow().fencingToken())
                    .as("the new leader's token")
                    .isGreaterThan(seen.fencingToken());

            // the leader is cut off, as by a partition: it loses the lease, its work stops, another takes over
            long cut = System.nanoTime();
            second.backend().cutAcquires(true);
            second.backend().cutRenewals(true);
            Candidate third = awaitLeader(candidates, second);
            Duration failover = Duration.ofNanos(System.nanoTime() - cut);
            System.out.println("[fencelock-tck] leadership moved " + failover.toMillis()
                    + " ms after the leader's renewals were cut (TTL " + TTL.toMillis() + " ms)");
            assertThat(failover)
                    .as("failover after the leader stopped renewing")
                    .isLessThan(takeoverBound(Duration.ZERO));
            awaitCondition(
                    "the cut-off leader to learn it lost", () -> second.events().contains("stepped LOST"));
            second.backend().cutRenewals(false);
            second.backend().cutAcquires(false);
            assertThat(third.election().isLeader()).isTrue();
        } finally {
            candidates.forEach(c -> c.election().close());
        }
        awaitCondition(
                "nobody to lead once every candidate closed",
                () -> LeaderElection.leader(observer, group).isEmpty());
    }

    /** A leader in a child JVM is frozen past its TTL: another candidate leads, and the thawed one is interrupted and fenced. */
    void frozenLeaderIsReplacedAndFenced(ClientConnection connection, String group) throws Exception {
        FencedResource resource = new FencedResource();
        try (CoordinationJvm zombie = CoordinationJvm.candidate(connection, group, "frozen", TTL, r -> resource)) {
            zombie.await("gained", BOUND);
            Candidate successor = candidate(group, "successor", resource);
            try {
                successor.election().start();
                zombie.pause();
                long frozen = System.nanoTime();
                awaitCondition(
                        "the successor to lead", () -> successor.election().isLeader());
                Duration failover = Duration.ofNanos(System.nanoTime() - frozen);
                System.out.println("[fencelock-tck] leadership moved " + failover.toMillis()
                        + " ms after the leader froze (TTL " + TTL.toMillis() + " ms)");
                assertThat(failover).as("failover after the leader froze").isLessThan(takeoverBound(Duration.ZERO));
                long successorToken =
                        successor.election().leadership().orElseThrow().fencingToken();
                awaitCondition("the successor's writes", () -> resource.highestToken() == successorToken);
                zombie.resume();
                zombie.await("interrupted leader", BOUND);
                zombie.await("stepped LOST", BOUND);
                awaitCondition(
                        "the thawed leader's late write to be turned away",
                        () -> !zombie.rejectedTokens().isEmpty());
                assertThat(zombie.rejectedTokens())
                        .as("tokens of the thawed leader's refused writes")
                        .allMatch(t -> t < successorToken);
                assertThat(successor.election().isLeader())
                        .as("the successor still leads")
                        .isTrue();
                assertThat(resource.highestToken()).isEqualTo(successorToken);
            } finally {
                successor.election().close();
            }
        }
    }

    /**
     * Tasks spread within one of even; each runs on one instance at a time; a frozen instance's tasks
     * run elsewhere and, thawed, it is interrupted and fenced; a killed instance's tasks run elsewhere
     * within its TTL plus a monitor period; a joining instance gets its share.
     */
    void tasksSpreadAndMoveOnFailure(ClientConnection connection, String group) throws Exception {
        int taskCount = 6;
        Map<String, FencedResource> resources = new ConcurrentHashMap<>();
        Function<String, FencedResource> resource = k -> resources.computeIfAbsent(k, x -> new FencedResource());
        Map<String, AtomicInteger> runners = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < taskCount; i++) {
            keys.add("t" + i);
        }
        List<TaskSpreader> spreaders = new ArrayList<>();
        BiFunction<String, LockClient, TaskSpreader> instance = (id, client) -> {
            TaskSpreader s = TaskSpreader.builder(client, group)
                    .instance(id)
                    .ttl(TTL)
                    .monitorPeriod(MONITOR_PERIOD)
                    .tasks(keys)
                    .work((key, lease) -> {
                        AtomicInteger running = runners.computeIfAbsent(key, k -> new AtomicInteger());
                        if (running.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        try {
                            while (true) {
                                resource.apply(key).write(lease.fencingToken());
                                Thread.sleep(10); // pacing the task's writes; interrupted when it must stop
                            }
                        } finally {
                            running.decrementAndGet();
                        }
                    })
                    .build();
            spreaders.add(s);
            return s.start();
        };
        try (CoordinationJvm child =
                CoordinationJvm.instance(connection, group, "child", TTL, MONITOR_PERIOD, taskCount, resource)) {
            child.await("started", BOUND);
            TaskSpreader a = instance.apply("a", clients.apply(options()));
            TaskSpreader b = instance.apply("b", clients.apply(options()));
            awaitCondition("the tasks to spread over three instances", () -> {
                Map<String, String> now = a.assignments();
                return now.size() == taskCount
                        && countsOf(now, "a", "b", "child").stream().allMatch(n -> n == 2);
            });
            assertThat(a.assignments())
                    .as("who runs what, as the backend records it")
                    .containsAllEntriesOf(ownedBy("a", a.holdingKeys()))
                    .containsAllEntriesOf(ownedBy("b", b.holdingKeys()));

            // frozen (SIGSTOP): its tasks run elsewhere; thawed, its works are interrupted and their late writes turned
            // away
            // the child's own report of what it runs arrives on its stdout: wait until it matches the backend's record
            awaitCondition(
                    "the child to run the two tasks the backend records for it",
                    () -> child.running().keySet().equals(ownedKeys(a.assignments(), "child")));
            Map<String, Long> frozenTasks = child.running();
            assertThat(frozenTasks).as("the child's tasks before it froze").hasSize(2);
            child.pause();
            long frozen = System.nanoTime();
            awaitCondition(
                    "the frozen instance's tasks to run elsewhere",
                    () -> a.holdingKeys().size() + b.holdingKeys().size() == taskCount);
            Duration frozenTakeover = Duration.ofNanos(System.nanoTime() - frozen);
            System.out.println("[fencelock-tck] a frozen instance's tasks ran elsewhere after "
                    + frozenTakeover.toMillis() + " ms");
            assertThat(frozenTakeover)
                    .as("takeover of a frozen instance's tasks")
                    .isLessThan(takeoverBound(MONITOR_PERIOD.multipliedBy(2)));
            frozenTasks.forEach((key, token) -> {
                try {
                    awaitCondition(
                            "a newer owner's write to " + key,
                            () -> resource.apply(key).highestToken() > token);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            child.resume();
            awaitCondition(
                    "the thawed instance's works to be interrupted and their late writes turned away",
                    () -> child.rejectedTokens().size() >= frozenTasks.size()
                            && frozenTasks.keySet().stream()
                                    .noneMatch(k -> frozenTasks
                                            .get(k)
                                            .equals(child.running().get(k))));
            assertThat(child.rejectedTokens())
                    .as("tokens of the thawed instance's refused writes")
                    .allMatch(frozenTasks::containsValue);
            awaitCondition("the thawed instance to get its share back", () -> {
                Map<String, String> now = a.assignments();
                return now.size() == taskCount
                        && countsOf(now, "a", "b", "child").stream().allMatch(n -> n == 2);
            });

            awaitCondition(
                    "the child to run the two tasks the backend records for it again",
                    () -> child.running().keySet().equals(ownedKeys(a.assignments(), "child"))
                            && child.running().size() == 2);
            child.kill();
            long killed = System.nanoTime();
            awaitCondition(
                    "the killed instance's tasks to run elsewhere",
                    () -> a.holdingKeys().size() + b.holdingKeys().size() == taskCount);
            Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
            System.out.println("[fencelock-tck] a killed instance's tasks ran elsewhere after " + takeover.toMillis()
                    + " ms (TTL " + TTL.toMillis() + " ms, monitor period " + MONITOR_PERIOD.toMillis() + " ms)");
            assertThat(takeover)
                    .as("takeover of a killed instance's tasks")
                    .isLessThan(takeoverBound(MONITOR_PERIOD.multipliedBy(2)));

            // the joining instance's client opens its connections before the clock runs: the bound is
            // the spreading's (monitor periods), and a busy ensemble may take seconds for a new session
            LockClient joining = clients.apply(options());
            joining.tryAcquire(group + "-joining-warm-up").ifPresent(Lease::release);
            long joined = System.nanoTime();
            TaskSpreader d = instance.apply("d", joining);
            awaitCondition("a joining instance to get its share", () -> {
                List<Integer> counts = List.of(
                        a.holdingKeys().size(),
                        b.holdingKeys().size(),
                        d.holdingKeys().size());
                return counts.stream().mapToInt(Integer::intValue).sum() == taskCount
                        && counts.stream().allMatch(n -> n == 2);
            });
            Duration rebalance = Duration.ofNanos(System.nanoTime() - joined);
            System.out.println(
                    "[fencelock-tck] a joining instance had its share after " + rebalance.toMillis() + " ms");
            assertThat(rebalance)
                    .as("rebalance after a join")
                    .isLessThan(MONITOR_PERIOD.multipliedBy(4).plusSeconds(2));
            assertThat(overlaps.get())
                    .as("times a task started on one instance while it ran on another")
                    .isZero();
        } finally {
            spreaders.forEach(TaskSpreader::close);
        }
    }

    private static Set<String> ownedKeys(Map<String, String> assignments, String instance) {
        Set<String> keys = new TreeSet<>();
        assignments.forEach((task, owner) -> {
            if (owner.equals(instance)) {
                keys.add(task);
            }
        });
        return keys;
    }

    private static Map<String, String> ownedBy(String instance, Set<String> tasks) {
        Map<String, String> m = new java.util.HashMap<>();
        tasks.forEach(t -> m.put(t, instance));
        return m;
    }

    private static List<Integer> countsOf(Map<String, String> assignments, String... instances) {
        List<Integer> counts = new ArrayList<>();
        for (String i : instances) {
            counts.add((int) assignments.values().stream().filter(i::equals).count());
        }
        return counts;
    }

    private static Candidate awaitLeader(List<Candidate> candidates, Candidate not) throws InterruptedException {
        Candidate[] found = new Candidate[1];
        awaitCondition("a" + (not == null ? "" : "nother") + " candidate to lead", () -> {
            Optional<Candidate> leader = candidates.stream()
                    .filter(c -> c != not && c.election().isLeader())
                    .findFirst();
            leader.ifPresent(c -> found[0] = c);
            return leader.isPresent();
        });
        return found[0];
    }
}
