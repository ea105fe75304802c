package io.fencelock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The binder's own rules, on the in-memory backend: groups and their bound, options, bad input, binding. */
class LockMetricsTest {
    private final LockClient client = LockClient.builder()
            .uri("inmemory:metrics-" + UUID.randomUUID())
            .options(LockOptions.builder().autoRenew(false).build())
            .build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @AfterEach
    void close() {
        client.close();
        registry.close();
    }

    @Test
    void theDefaultGroupIsTheNameUpToItsFirstSeparatorElseOther() {
        assertThat(LockMetrics.defaultLockGroup("orders:42")).isEqualTo("orders");
        assertThat(LockMetrics.defaultLockGroup("orders/eu:42")).isEqualTo("orders");
        assertThat(LockMetrics.defaultLockGroup("billing:eu/42")).isEqualTo("billing");
        assertThat(LockMetrics.defaultLockGroup("nightly-report"))
                .as("no separator: names like this are unbounded")
                .isEqualTo(LockMetrics.OTHER);
        assertThat(LockMetrics.defaultLockGroup(":42")).isEqualTo(LockMetrics.OTHER);
    }

    @Test
    void groupsBeyondTheMaximumAreCountedAsOverflow() {
        try (LockMetrics metrics = LockMetrics.builder(client)
                .lockGroup(name -> name.equals("blank") ? " " : name)
                .maxLockGroups(2)
                .build()) {
            metrics.bindTo(registry);
            for (String name : List.of("a", "b", "c", "d", "a", "blank")) {
                client.tryAcquire(name).orElseThrow().release();
            }
            assertThat(registry.find(LockMetrics.ACQUIRE).timers())
                    .extracting(t -> t.getId().getTag("lock.group") + "=" + t.count())
                    .containsExactlyInAnyOrder("a=2", "b=1", "overflow=3");
        }
    }

    /**
     * The timers' settings as the registry's meter filters see them: the simple registry publishes
     * no buckets (it aggregates no percentiles), so a histogram cannot be read from its meters.
     */
    private Map<String, DistributionStatisticConfig> timerSettings() {
        Map<String, DistributionStatisticConfig> settings = new ConcurrentHashMap<>();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                settings.put(id.getName(), config);
                return config;
            }
        });
        return settings;
    }

    @Test
    void percentilesAndHistogramAreLeftToTheRegistryUnlessSet() {
        Map<String, DistributionStatisticConfig> settings = timerSettings();
        try (LockMetrics metrics = LockMetrics.builder(client).build()) {
            metrics.bindTo(registry);
            client.tryAcquire("jobs:a").orElseThrow().release();
        }
        for (String meter : List.of(LockMetrics.ACQUIRE, LockMetrics.HOLD)) {
            assertThat(settings.get(meter).isPercentileHistogram()).as(meter).isNull();
            assertThat(settings.get(meter).getPercentiles()).as(meter).isNull();
        }
    }

    @Test
    void percentilesHistogramAndExtraTagsApplyToBothTimers() {
        Map<String, DistributionStatisticConfig> settings = timerSettings();
        try (LockMetrics metrics = LockMetrics.builder(client)
                .percentiles(0.5, 0.99)
                .histogram(true)
                .extraTags(List.of(Tag.of("app", "billing")))
                .build()) {
            metrics.bindTo(registry);
            client.tryAcquire("jobs:a").orElseThrow().release();
        }
        for (String meter : List.of(LockMetrics.ACQUIRE, LockMetrics.HOLD)) {
            Timer timer = registry.get(meter).tag("app", "billing").timer();
            HistogramSnapshot snapshot = timer.takeSnapshot();
            assertThat(snapshot.percentileValues()).as(meter).hasSize(2);
            assertThat(settings.get(meter).isPercentileHistogram()).as(meter).isTrue();
            assertThat(timer.getId().getTag("backend")).isEqualTo("inmemory");
        }
    }

    @Test
    void bindingARegistryTwiceRecordsOnceAndAClosedBinderCannotBeBound() {
        LockMetrics metrics = LockMetrics.builder(client).build();
        metrics.bindTo(registry);
        metrics.bindTo(registry);
        SimpleMeterRegistry second = new SimpleMeterRegistry();
        metrics.bindTo(second);
        client.tryAcquire("jobs:a").orElseThrow();

        assertThat(registry.get(LockMetrics.ACQUIRE).timer().count()).isEqualTo(1);
        assertThat(second.get(LockMetrics.ACQUIRE).timer().count()).isEqualTo(1);
        assertThat(second.get(LockMetrics.LEASES_HELD).gauge().value()).isEqualTo(1);

        metrics.close();
        metrics.close();
        assertThat(second.find(LockMetrics.LEASES_HELD).gauge()).isNull();
        assertThatThrownBy(() -> metrics.bindTo(registry))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        second.close();
    }

    @Test
    void badOptionsAreRejectedNamingTheValueAndTheRule() {
        LockMetrics.Builder builder = LockMetrics.builder(client);
        assertThatThrownBy(() -> builder.percentiles(0.5, 1.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("percentile 1.5 must be between 0 and 1");
        assertThatThrownBy(() -> builder.percentiles(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NaN");
        assertThatThrownBy(() -> builder.maxLockGroups(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxLockGroups 0 must be at least 1");
        assertThatThrownBy(() -> LockMetrics.builder(null)).isInstanceOf(NullPointerException.class);
    }
}
