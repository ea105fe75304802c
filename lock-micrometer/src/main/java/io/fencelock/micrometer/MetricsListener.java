package io.fencelock.micrometer;

import io.fencelock.AcquireEvent;
import io.fencelock.Lease;
import io.fencelock.LeaseLoss;
import io.fencelock.LockEventListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records one client's events into one registry. Meters are built on first use and kept per tag
 * set, so an event costs a map lookup; the tag sets are bounded by the outcomes times the lock
 * groups, which {@link LockMetrics#groupOf} bounds.
 */
final class MetricsListener implements LockEventListener {
    final MeterRegistry registry;
    private final LockMetrics metrics;
    private final Gauge held;
    private final Map<Key, Timer> timers = new ConcurrentHashMap<>();
    private final Map<Key, Counter> counters = new ConcurrentHashMap<>();

    private static final Map<String, String> DESCRIPTIONS = Map.of(
            LockMetrics.ACQUIRE, "How long acquire calls waited, by how they ended",
            LockMetrics.HOLD, "How long leases were held until released",
            LockMetrics.RENEWALS, "Lease renewals, by outcome",
            LockMetrics.LOSSES, "Leases lost without being released, by reason");

    /** One meter's name, its one varying tag, and the lock group. */
    private record Key(String meter, String tag, String value, String group) {
        Tags tags(Tags common) {
            return common.and(tag, value).and("lock.group", group);
        }
    }

    MetricsListener(LockMetrics metrics, MeterRegistry registry) {
        this.metrics = metrics;
        this.registry = registry;
        // the client is referred to strongly: the gauge lives until LockMetrics.close() removes it
        this.held = Gauge.builder(
                        LockMetrics.LEASES_HELD, metrics.client, c -> c.held().size())
                .description("The leases this lock client holds now")
                .tags(metrics.commonTags)
                .strongReference(true)
                .register(registry);
    }

    void removeGauge() {
        registry.remove(held);
    }

    @Override
    public void acquireFinished(AcquireEvent event) {
        timer(LockMetrics.ACQUIRE, "outcome", lower(event.outcome()), event.name())
                .record(event.waited());
    }

    @Override
    public void renewed(Lease lease, long sentNanos) {
        counter(LockMetrics.RENEWALS, "outcome", "renewed", lease.name()).increment();
    }

    @Override
    public void renewalFailed(Lease lease, Throwable cause, boolean willRetry) {
        counter(LockMetrics.RENEWALS, "outcome", "failed", lease.name()).increment();
    }

    @Override
    public void released(Lease lease, boolean freedOnBackend, Duration heldFor) {
        timer(LockMetrics.HOLD, "freed", Boolean.toString(freedOnBackend), lease.name())
                .record(heldFor);
    }

    @Override
    public void lost(LeaseLoss loss) {
        String name = loss.lease().name();
        if (loss.reason() == LeaseLoss.Reason.REJECTED) {
            counter(LockMetrics.RENEWALS, "outcome", "rejected", name).increment();
        }
        counter(LockMetrics.LOSSES, "reason", lower(loss.reason()), name).increment();
    }

    private Timer timer(String meter, String tag, String value, String lockName) {
        return timers.computeIfAbsent(
                new Key(meter, tag, value, metrics.groupOf(lockName)),
                k -> Timer.builder(meter)
                        .description(DESCRIPTIONS.get(meter))
                        .tags(k.tags(metrics.commonTags))
                        // unset unless asked for: the registry's meter filters decide (e.g. Spring Boot's properties)
                        .publishPercentiles(metrics.percentiles.length == 0 ? null : metrics.percentiles)
                        .publishPercentileHistogram(metrics.histogram ? Boolean.TRUE : null)
                        .register(registry));
    }

    private Counter counter(String meter, String tag, String value, String lockName) {
        return counters.computeIfAbsent(
                new Key(meter, tag, value, metrics.groupOf(lockName)),
                k -> Counter.builder(meter)
                        .description(DESCRIPTIONS.get(meter))
                        .tags(k.tags(metrics.commonTags))
                        .register(registry));
    }

    private static String lower(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "LockMetrics listener for " + metrics.client.clientId() + " on "
                + registry.getClass().getSimpleName();
    }
}
