package io.fencelock.micrometer;

import io.fencelock.LockClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Micrometer meters for one {@link LockClient}: how long acquire calls wait and how they end, how
 * long leases are held, renewals and losses, and the leases held now.
 *
 * <pre>{@code
 * LockMetrics metrics = LockMetrics.builder(client).percentiles(0.5, 0.99, 0.999).build();
 * metrics.bindTo(registry); // registers the gauge and starts recording
 * ...
 * metrics.close();          // stops recording
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer</td><td>outcome, backend, lock.group</td>
 *       <td>time an acquire call waited; outcome granted, refused, timed_out or failed</td></tr>
 *   <tr><td>{@value #HOLD}</td><td>timer</td><td>freed, backend, lock.group</td>
 *       <td>how long a released lease was held; freed whether the release freed it on the backend</td></tr>
 *   <tr><td>{@value #RENEWALS}</td><td>counter</td><td>outcome, backend, lock.group</td>
 *       <td>renewals: renewed, failed (no answer), rejected (the backend refused: the lease is lost)</td></tr>
 *   <tr><td>{@value #LOSSES}</td><td>counter</td><td>reason, backend, lock.group</td>
 *       <td>leases lost: expired (no renewal in time) or rejected</td></tr>
 *   <tr><td>{@value #LEASES_HELD}</td><td>gauge</td><td>backend</td><td>the leases the client holds now</td></tr>
 * </table>
 *
 * <p>Lock names are unbounded, so meters are tagged with a <em>lock group</em> instead: by default
 * the name up to its first {@code ':'} or {@code '/'} ({@code "orders:42"} and {@code "orders/7"}
 * are in group {@code orders}), and {@value #OTHER} for a name without either. A function of your
 * own replaces that ({@link Builder#lockGroup}). However the groups are made, at most
 * {@link Builder#maxLockGroups} of them get meters of their own; the rest are counted in group
 * {@value #OVERFLOW} (with one warning), so a careless group function cannot grow the registry
 * without bound. Meters are registered on first use, one per tag set.
 *
 * <p>{@link #bindTo} adds a listener to the client ({@link LockClient#addListener}); {@link #close()}
 * removes it and the gauge (which refers to the client). Timers and counters stay in the registry
 * with their totals.
 */
public final class LockMetrics implements MeterBinder, AutoCloseable {
    /** Timer: the time acquire calls waited. */
    public static final String ACQUIRE = "fencelock.acquire";
    /** Timer: how long leases were held until released. */
    public static final String HOLD = "fencelock.hold";
    /** Counter: renewals by outcome. */
    public static final String RENEWALS = "fencelock.renewals";
    /** Counter: lost leases by reason. */
    public static final String LOSSES = "fencelock.losses";
    /** Gauge: the leases the client holds now. */
    public static final String LEASES_HELD = "fencelock.leases.held";

    /** The default group of a name with no {@code ':'} or {@code '/'}, and of a blank group. */
    public static final String OTHER = "other";
    /** The group of names whose own group came after {@link Builder#maxLockGroups} others. */
    public static final String OVERFLOW = "overflow";
    /** The default of {@link Builder#maxLockGroups}. */
    public static final int DEFAULT_MAX_LOCK_GROUPS = 100;

    private static final Logger LOG = LoggerFactory.getLogger(LockMetrics.class);

    final LockClient client;
    final Function<String, String> lockGroup;
    final double[] percentiles;
    final boolean histogram;
    /** The backend tag and the extra tags, on every meter. */
    final Tags commonTags;

    private final int maxLockGroups;
    private final Set<String> groups = ConcurrentHashMap.newKeySet();
    private final AtomicInteger groupCount = new AtomicInteger();
    private final AtomicBoolean overflowWarned = new AtomicBoolean();

    private final ReentrantLock binding = new ReentrantLock();
    private final List<MetricsListener> bound = new ArrayList<>();
    private boolean closed;

    private LockMetrics(Builder b) {
        this.client = b.client;
        this.lockGroup = b.lockGroup;
        this.percentiles = b.percentiles.clone();
        this.histogram = b.histogram;
        this.maxLockGroups = b.maxLockGroups;
        this.commonTags = Tags.of("backend", client.backendName()).and(b.extraTags);
    }

    /** A builder of meters for {@code client}. */
    public static Builder builder(LockClient client) {
        return new Builder(Objects.requireNonNull(client, "client"));
    }

    /**
     * Registers the gauge and records into {@code registry} from now on. Binding the same registry
     * again does nothing.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        binding.lock();
        try {
            if (closed) {
                throw new IllegalStateException("these LockMetrics are closed");
            }
            for (MetricsListener l : bound) {
                if (l.registry == registry) {
                    return;
                }
            }
            MetricsListener listener = new MetricsListener(this, registry);
            bound.add(listener);
            client.addListener(listener);
        } finally {
            binding.unlock();
        }
    }

    /** Stops recording: removes the listeners from the client and the gauges from the registries. Idempotent. */
    @Override
    public void close() {
        binding.lock();
        try {
            closed = true;
            for (MetricsListener l : bound) {
                client.removeListener(l);
                l.removeGauge();
            }
            bound.clear();
        } finally {
            binding.unlock();
        }
    }

    /** The group tag for {@code name}: the function's answer while fewer than the maximum are known, else {@value #OVERFLOW}. */
    String groupOf(String name) {
        String group = lockGroup.apply(name);
        if (group == null || group.isBlank()) {
            group = OTHER;
        }
        if (groups.contains(group)) {
            return group;
        }
        if (groupCount.incrementAndGet() > maxLockGroups) {
            groupCount.decrementAndGet();
            if (overflowWarned.compareAndSet(false, true)) {
                LOG.warn(
                        "fencelock metrics: more than {} lock groups; further groups are counted as '{}' (set lockGroup(...) to"
                                + " map lock names to a bounded set of groups, or raise maxLockGroups)",
                        maxLockGroups,
                        OVERFLOW);
            }
            return OVERFLOW;
        }
        if (!groups.add(group)) {
            groupCount.decrementAndGet(); // another thread added it first
        }
        return group;
    }

    /**
     * The default group: the name up to its first {@code ':'} or {@code '/'}, or {@value #OTHER}
     * when it has neither (or starts with one).
     */
    public static String defaultLockGroup(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == ':' || c == '/') {
                return i == 0 ? OTHER : name.substring(0, i);
            }
        }
        return OTHER;
    }

    /** Options of {@link LockMetrics}; every one has a default. */
    public static final class Builder {
        private final LockClient client;
        private Function<String, String> lockGroup = LockMetrics::defaultLockGroup;
        private double[] percentiles = new double[0];
        private boolean histogram;
        private Tags extraTags = Tags.empty();
        private int maxLockGroups = DEFAULT_MAX_LOCK_GROUPS;

        private Builder(LockClient client) {
            this.client = client;
        }

        /**
         * Maps a lock name to its {@code lock.group} tag; keep the set of answers small (a blank or
         * null answer means {@value LockMetrics#OTHER}). Default: {@link LockMetrics#defaultLockGroup}.
         */
        public Builder lockGroup(Function<String, String> lockGroup) {
            this.lockGroup = Objects.requireNonNull(lockGroup, "lockGroup");
            return this;
        }

        /**
         * Client-side percentiles of both timers, each in [0, 1], e.g. {@code 0.5, 0.99, 0.999}.
         * Default: none set here, which leaves them to the registry's meter filters (many
         * registries compute percentiles from the histogram instead).
         */
        public Builder percentiles(double... percentiles) {
            Objects.requireNonNull(percentiles, "percentiles");
            for (double p : percentiles) {
                if (!(p >= 0 && p <= 1)) {
                    throw new IllegalArgumentException("percentile " + p + " must be between 0 and 1");
                }
            }
            this.percentiles = percentiles.clone();
            return this;
        }

        /**
         * Whether both timers publish a percentile histogram (buckets, for Prometheus and the like).
         * Default {@code false}: not set here, which leaves it to the registry's meter filters.
         */
        public Builder histogram(boolean histogram) {
            this.histogram = histogram;
            return this;
        }

        /** Tags added to every meter, e.g. the application or the client's role. */
        public Builder extraTags(Iterable<Tag> tags) {
            Objects.requireNonNull(tags, "tags");
            this.extraTags = Tags.of(tags);
            return this;
        }

        /**
         * How many lock groups get meters of their own (at least 1); the names of further groups are
         * counted in group {@value LockMetrics#OVERFLOW}. Default {@value LockMetrics#DEFAULT_MAX_LOCK_GROUPS}.
         */
        public Builder maxLockGroups(int maxLockGroups) {
            if (maxLockGroups < 1) {
                throw new IllegalArgumentException("maxLockGroups " + maxLockGroups + " must be at least 1");
            }
            this.maxLockGroups = maxLockGroups;
            return this;
        }

        /** The meters, not yet bound: call {@link LockMetrics#bindTo}. */
        public LockMetrics build() {
            return new LockMetrics(this);
        }
    }
}
