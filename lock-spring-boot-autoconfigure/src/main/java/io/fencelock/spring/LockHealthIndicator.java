package io.fencelock.spring;

import io.fencelock.LockClient;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * {@code fencelock} health: DOWN when the backend does not answer a read of one lock record
 * ({@code fencelock.health.probe-name}); OUT_OF_SERVICE while a lease was lost within
 * {@code fencelock.health.lost-lease-window} (the application still runs, but lost exclusive work
 * in that window and should be looked at); else UP.
 */
public class LockHealthIndicator extends AbstractHealthIndicator {
    private final LockClient client;
    private final LeaseLossHistory history;
    private final FencelockProperties.Health settings;

    public LockHealthIndicator(LockClient client, LeaseLossHistory history, FencelockProperties.Health settings) {
        super("fencelock health check failed");
        this.client = client;
        this.history = history;
        this.settings = settings;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        long start = System.nanoTime();
        client.inspect(settings.getProbeName()); // throws when the backend cannot be reached: DOWN
        builder.withDetail("backend", client.backendName())
                .withDetail(
                        "probeMillis",
                        Duration.ofNanos(System.nanoTime() - start).toMillis())
                .withDetail("held", client.held().size());
        Duration window = settings.getLostLeaseWindow();
        List<LeaseLossHistory.Loss> recent = window.isZero() ? List.of() : history.within(window);
        if (recent.isEmpty()) {
            builder.up();
        } else {
            builder.outOfService()
                    .withDetail("lostLeases", recent.size())
                    .withDetail("lostWithin", window.toString())
                    .withDetail("lastLost", recent.get(0));
        }
    }
}
