package io.fencelock.coordination;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spreads a set of tasks over the instances of a service: each task runs on at most one instance
 * at a time, under its own lock, and the instances share the tasks evenly.
 *
 * <p>Every instance announces itself with a membership lease ({@code <group>/members/<id>}), so each
 * knows the live count M. With N tasks an instance takes at most {@code min(maxTasks, ⌈N / M⌉ + slack)}.
 * A monitor runs every period: it takes orphaned tasks (nobody holds their lock) up to the share,
 * and when members join it hands over what it holds above the share, gracefully: the task is
 * interrupted and its lock released only once it has stopped. A task whose lease is lost is
 * interrupted at once. An instance that dies frees its tasks when their leases expire, and the
 * others take them within their TTL plus one monitor period.
 *
 * <pre>{@code
 * TaskSpreader spreader = TaskSpreader.builder(locks, "subscriptions")
 *         .instance("node-3")
 *         .tasks(() -> subscriptionIds())
 *         .maxTasks(20)
 *         .work((key, lease) -> consume(key, lease.fencingToken()))   // runs until interrupted
 *         .build()
 *         .start();
 * }</pre>
 */
public final class TaskSpreader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TaskSpreader.class);
    private static final AtomicInteger NUMBER = new AtomicInteger();

    /** The work of one task, run while this instance owns it; interrupted when it must stop. */
    @FunctionalInterface
    public interface TaskWork {
        void run(String key, Lease lease) throws Exception;
    }

    private final LockClient client;
    private final String group;
    private final String instance;
    private final Supplier<Set<String>> tasks;
    private final TaskWork work;
    private final Duration ttl;
    private final Duration monitorPeriod;
    private final int slack;
    private final int maxTasks;
    private final String membersPrefix;
    private final String tasksPrefix;
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    private final ExecutorService workers;
    private Thread monitor;
    private volatile boolean closed;
    private volatile Lease membership;

    /** One task this instance runs: its lease, its owner record and the thread running it. */
    private static final class Running {
        final String key;
        final Lease lease;
        volatile Future<?> future;
        volatile boolean stopping;

        Running(String key, Lease lease) {
            this.key = key;
            this.lease = lease;
        }
    }

    private TaskSpreader(Builder b) {
        this.client = b.client;
        this.group = b.group;
        this.instance = b.instance;
        this.tasks = b.tasks;
        this.work = b.work;
        this.ttl = b.ttl;
        this.monitorPeriod = b.monitorPeriod;
        this.slack = b.slack;
        this.maxTasks = b.maxTasks;
        this.membersPrefix = group + "/members/";
        this.tasksPrefix = group + "/tasks/";
        int n = NUMBER.incrementAndGet();
        AtomicInteger thread = new AtomicInteger();
        this.workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "fencelock-tasks-" + n + "-" + thread.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public static Builder builder(LockClient client, String group) {
        return new Builder(client, group);
    }

    /** Starts the monitor; the first look at the tasks happens at once. */
    public TaskSpreader start() {
        if (monitor != null) {
            throw new IllegalStateException("task spreader '" + group + "' of '" + instance + "' already started");
        }
        monitor = new Thread(this::monitorLoop, "fencelock-spreader-" + group + "-" + instance);
        monitor.setDaemon(true);
        monitor.start();
        return this;
    }

    public String instance() {
        return instance;
    }

    /** The tasks this instance runs now (the design's {@code HoldingKeys}). */
    public Set<String> holdingKeys() {
        return running.values().stream()
                .filter(r -> !r.stopping && r.lease.isValid())
                .map(r -> r.key)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The tasks some instance holds now, by anyone's lock (the design's {@code LockedKeys}). */
    public Set<String> lockedKeys() {
        return assignments().keySet();
    }

    /** Which instance runs which task now, as the backend records it (one round trip). */
    public Map<String, String> assignments() {
        Map<String, String> byTask = new TreeMap<>();
        for (OwnerRecords.Holder h : OwnerRecords.holdersUnder(client, tasksPrefix)) {
            byTask.put(h.name().substring(tasksPrefix.length()), h.ownerId().orElse("?"));
        }
        return byTask;
    }

    /** The live instances, by their membership leases. */
    public Set<String> members() {
        return client.list(membersPrefix).stream()
                .filter(i -> i.held())
                .map(i -> i.name().substring(membersPrefix.length()))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Stops every task (waiting for each to end), releases their locks and the membership, and stops the monitor. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (monitor != null) {
            monitor.interrupt();
            try {
                monitor.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        running.values().forEach(this::stop);
        workers.shutdown();
        try {
            workers.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Lease m = membership;
        if (m != null) {
            m.close();
        }
    }

    private void monitorLoop() {
        while (!closed) {
            try {
                rebalance();
            } catch (RuntimeException e) {
                LOG.debug(
                        "fencelock task spreader '{}': a monitor round failed, trying again next period: {}",
                        group,
                        e.toString());
            }
            try {
                // jittered, so that instances started together do not look at the same moment
                long period = monitorPeriod.toNanos();
                TimeUnit.NANOSECONDS.sleep(
                        period - period / 10 + ThreadLocalRandom.current().nextLong(period / 5 + 1));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One monitor round: stay a member, count the members, let go of tasks above the share, take orphans below it. */
    private void rebalance() {
        Lease m = membership;
        if (m == null || !m.isValid()) {
            membership = client.tryAcquire(membersPrefix + instance, ttl).orElse(null);
            if (membership == null) {
                LOG.warn("fencelock task spreader '{}': another live instance uses the id '{}'", group, instance);
            }
        }
        Set<String> members = members();
        members.add(instance);
        Set<String> wanted = new TreeSet<>(tasks.get());
        wanted.forEach(k -> requireKey(k, group, instance));
        int share = share(wanted.size(), members.size());
        running.values().removeIf(r -> r.future != null && r.future.isDone());
        for (Running r : running.values()) {
            if (!wanted.contains(r.key)) {
                stop(r); // the task was removed from the set
            }
        }
        List<Running> active = running.values().stream()
                .filter(r -> !r.stopping)
                .sorted((a, b) -> a.key.compareTo(b.key))
                .collect(Collectors.toCollection(ArrayList::new));
        if (active.size() > share) {
            // members joined: hand the excess over (the last ones by key, so the choice is stable)
            for (Running r : active.subList(share, active.size())) {
                stop(r);
            }
            return;
        }
        int room = share - active.size();
        if (room <= 0) {
            return;
        }
        Set<String> held = OwnerRecords.holdersUnder(client, tasksPrefix).stream()
                .map(h -> h.name().substring(tasksPrefix.length()))
                .collect(Collectors.toSet());
        List<String> orphans = wanted.stream()
                .filter(k -> !held.contains(k) && !running.containsKey(k))
                .collect(Collectors.toCollection(ArrayList::new));
        Collections.shuffle(orphans); // instances looking at once mostly try different tasks
        for (String key : orphans) {
            if (room == 0 || closed) {
                break;
            }
            if (take(key)) {
                room--;
            }
        }
    }

    /** The most tasks this instance should run with {@code n} tasks over {@code m} members. */
    int share(int n, int m) {
        int even = (n + m - 1) / Math.max(1, m);
        return (int) Math.min(maxTasks, (long) even + slack);
    }

    private boolean take(String key) {
        Optional<Lease> acquired = client.tryAcquire(tasksPrefix + key, ttl);
        if (acquired.isEmpty()) {
            return false;
        }
        Lease lease = acquired.get();
        Running r = new Running(key, lease);
        running.put(key, r);
        Optional<Lease> marker = OwnerRecords.publish(client, lease, instance);
        r.future = workers.submit(() -> runTask(r, marker));
        lease.lost().thenRun(() -> r.future.cancel(true));
        if (lease.lost().toCompletableFuture().isDone()) {
            r.future.cancel(true);
        }
        return true;
    }

    private void runTask(Running r, Optional<Lease> marker) {
        try {
            if (!r.stopping && r.lease.isValid()) {
                work.run(r.key, r.lease);
            }
        } catch (InterruptedException e) {
            // stopped: handed over, lost, removed or closing
        } catch (Exception e) {
            LOG.warn("fencelock task spreader '{}': task '{}' failed; it is let go and may run again", group, r.key, e);
        } finally {
            // released only now that the work has stopped: nobody else may start it while it still runs
            boolean interrupted = Thread.interrupted();
            marker.ifPresent(Lease::close);
            r.lease.close();
            running.remove(r.key, r);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void stop(Running r) {
        r.stopping = true;
        Future<?> f = r.future;
        if (f != null) {
            f.cancel(true);
        }
    }

    private static String requireKey(String key, String group, String instance) {
        if (key == null) {
            throw new IllegalArgumentException("task key is null in the task set of '" + group + "'");
        }
        OwnerRecords.requireMarkableName("task key", group + "/tasks/" + key, instance);
        return key;
    }

    /** Settings of one instance, validated before any I/O. */
    public static final class Builder {
        private final LockClient client;
        private final String group;
        private String instance;
        private Supplier<Set<String>> tasks;
        private TaskWork work;
        private Duration ttl;
        private Duration monitorPeriod;
        private int slack;
        private int maxTasks = Integer.MAX_VALUE;

        private Builder(LockClient client, String group) {
            this.client = Objects.requireNonNull(client, "client");
            this.group = group;
        }

        /** This instance's id, unique among the live instances; default: host name and process id. */
        public Builder instance(String id) {
            this.instance = id;
            return this;
        }

        /** A fixed set of task keys. */
        public Builder tasks(Set<String> keys) {
            Set<String> copy = Set.copyOf(Objects.requireNonNull(keys, "keys"));
            this.tasks = () -> copy;
            return this;
        }

        /** Task keys looked up at every monitor round (tasks may come and go). */
        public Builder tasks(Supplier<Set<String>> keys) {
            this.tasks = Objects.requireNonNull(keys, "keys");
            return this;
        }

        public Builder work(TaskWork work) {
            this.work = Objects.requireNonNull(work, "work");
            return this;
        }

        /** The TTL of task and membership leases; default: the client's. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** How often the monitor looks for orphans and excess; default: half the TTL. */
        public Builder monitorPeriod(Duration period) {
            this.monitorPeriod = period;
            return this;
        }

        /** Tasks an instance may take above the even share (default 0). */
        public Builder slack(int slack) {
            this.slack = slack;
            return this;
        }

        /** A hard cap on the tasks of one instance, e.g. so that half the instances can die (default: none). */
        public Builder maxTasks(int max) {
            this.maxTasks = max;
            return this;
        }

        public TaskSpreader build() {
            if (instance == null) {
                instance = OwnerRecords.defaultOwnerId();
            }
            OwnerRecords.requireOwnerId("instance", instance);
            LockNames.requireValid(group);
            OwnerRecords.requireMarkableName("group", group + "/tasks/x", instance);
            if (tasks == null) {
                throw new IllegalArgumentException("tasks are not set: give a set of task keys or a supplier of them");
            }
            if (work == null) {
                throw new IllegalArgumentException("work is not set: give what runs for each task");
            }
            if (ttl == null) {
                ttl = client.options().ttl();
            }
            client.options().requireUsableTtl(OwnerRecords.positive("ttl", ttl));
            // the design's rule: a lease lives at least twice as long as the interval it is refreshed at
            Duration renew = client.options().renewInterval(ttl);
            if (ttl.compareTo(renew.multipliedBy(2)) < 0) {
                throw new IllegalArgumentException(
                        "ttl " + ttl + " must be at least twice the renew interval " + renew);
            }
            monitorPeriod =
                    monitorPeriod == null ? ttl.dividedBy(2) : OwnerRecords.positive("monitorPeriod", monitorPeriod);
            if (slack < 0) {
                throw new IllegalArgumentException("slack " + slack + " must be zero or more");
            }
            if (maxTasks < 1) {
                throw new IllegalArgumentException("maxTasks " + maxTasks + " must be at least 1");
            }
            return new TaskSpreader(this);
        }
    }
}
