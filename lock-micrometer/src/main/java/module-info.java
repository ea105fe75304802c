/**
 * Micrometer meters for fencelock: {@link io.fencelock.micrometer.LockMetrics}, a
 * {@code MeterBinder} that times acquire calls and holds, counts renewals and losses, and gauges
 * the leases a {@code LockClient} holds.
 */
module io.fencelock.micrometer {
    requires transitive io.fencelock; // LockMetrics.builder takes a LockClient
    requires transitive micrometer.core; // LockMetrics is a MeterBinder
    requires org.slf4j;

    exports io.fencelock.micrometer;
}
