package io.fencelock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fencelock.Lease;
import io.fencelock.LeaseLoss;
import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.ClientConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The meters against one backend, with clients opened by connection string as an application opens
 * them: every acquire outcome, hold times, renewals, losses and the gauge, read back from
 * Micrometer's {@link SimpleMeterRegistry}. Lock names are new per test, so tests share a server.
 */
abstract class LockMetricsContract {
    static final Duration TTL = Duration.ofSeconds(30);
    /** Bounds a wait that ends as soon as the engine acts; never reached by a working engine. */
    static final long HANG_GUARD_SECONDS = 20;

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> opened = new ArrayList<>();

    /** How an application opens a client on the backend: a connection string and its properties. */
    protected abstract ClientConnection connection();

    /** The provider name a client opened on {@link #connection()} reports. */
    protected abstract String expectedBackendName();

    /** A client whose backend the test can make fail. */
    protected abstract Breakable breakable();

    /** A client, what makes its backend fail, and what closes them. */
    protected record Breakable(LockClient client, Runnable breakBackend, Runnable closer) implements AutoCloseable {
        @Override
        public void close() {
            closer.run();
        }
    }

    /** A client on a backend that fails once closed under its client (for a backend with no server). */
    static Breakable byClosing(LockBackend backend) {
        LockClient client =
                LockClient.builder().backend(backend).options(options()).build();
        return new Breakable(client, backend::close, client::close);
    }

    static LockOptions options() {
        return LockOptions.builder().ttl(TTL).autoRenew(false).build();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        registry.close();
    }

    LockClient open() {
        ClientConnection connection = connection();
        LockClient.Builder builder = LockClient.builder().uri(connection.uri()).options(options());
        connection.properties().forEach(builder::property);
        return closing(builder.build());
    }

    LockMetrics bind(LockClient client) {
        return bind(client, Function.identity());
    }

    LockMetrics bind(LockClient client, Function<LockMetrics.Builder, LockMetrics.Builder> settings) {
        LockMetrics metrics =
                closing(settings.apply(LockMetrics.builder(client)).build());
        metrics.bindTo(registry);
        return metrics;
    }

    <T extends AutoCloseable> T closing(T resource) {
        opened.add(resource);
        return resource;
    }

    /** A lock name of this test run in {@code group}. */
    String name(String group, String rest) {
        return group + ":" + run + "-" + rest;
    }

    Timer timer(String meter, String tag, String value, String group) {
        return registry.find(meter).tag(tag, value).tag("lock.group", group).timer();
    }

    double count(String meter, String tag, String value, String group) {
        Counter counter =
                registry.find(meter).tag(tag, value).tag("lock.group", group).counter();
        return counter == null ? 0 : counter.count();
    }

    long timed(String meter, String tag, String value, String group) {
        Timer timer = timer(meter, tag, value, group);
        return timer == null ? 0 : timer.count();
    }

    /** Waits until a counter reaches {@code expected}, bounded by {@link #HANG_GUARD_SECONDS}, and checks it stays there. */
    void awaitCount(String meter, String tag, String value, String group, double expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (count(meter, tag, value, group) < expected && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
        assertThat(count(meter, tag, value, group)).as(meter + " " + value).isEqualTo(expected);
    }

    double held() {
        return registry.get(LockMetrics.LEASES_HELD).gauge().value();
    }

    @Test
    void everyAcquireCallIsTimedByHowItEnded() throws Exception {
        LockClient other = open();
        LockClient client = open();
        bind(client);
        String name = name("orders", "a");
        Lease holder = other.tryAcquire(name).orElseThrow();

        assertThat(client.tryAcquire(name)).as("refused").isEmpty();
        Duration wait = Duration.ofMillis(200);
        assertThat(client.acquire(name, wait)).as("timed out").isEmpty();
        Thread.currentThread().interrupt();
        assertThat(catchThrowable(() -> client.acquire(name, Duration.ofHours(1))))
                .as("an interrupted waiter fails")
                .isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).as("the interrupt was taken").isFalse();
        holder.release();
        Lease granted = client.tryAcquire(name).orElseThrow();

        for (String outcome : List.of("granted", "refused", "timed_out", "failed")) {
            assertThat(timed(LockMetrics.ACQUIRE, "outcome", outcome, "orders"))
                    .as(outcome)
                    .isEqualTo(1);
        }
        Timer timedOut = timer(LockMetrics.ACQUIRE, "outcome", "timed_out", "orders");
        assertThat(timedOut.totalTime(TimeUnit.NANOSECONDS))
                .as("the time waited")
                .isGreaterThanOrEqualTo(wait.toNanos());
        assertThat(timedOut.getId().getTag("backend"))
                .isEqualTo(client.backendName())
                .isEqualTo(expectedBackendName());
        assertThat(registry.find(LockMetrics.ACQUIRE).timers())
                .as("only the bound client's calls")
                .hasSize(4);
        granted.release();
    }

    @Test
    void aReleasedLeaseRecordsHowLongItWasHeld() {
        LockClient client = open();
        bind(client);
        long before = System.nanoTime();
        Lease lease = client.tryAcquire(name("jobs", "hold")).orElseThrow();
        assertThat(lease.release()).isTrue();
        long bound = System.nanoTime() - before;
        Lease handedOver = client.tryAcquire(name("jobs", "later")).orElseThrow();
        assertThat(handedOver.releaseAfter(Duration.ofSeconds(1))).isTrue();

        Timer freed = timer(LockMetrics.HOLD, "freed", "true", "jobs");
        assertThat(freed.count()).isEqualTo(1);
        assertThat(freed.totalTime(TimeUnit.NANOSECONDS)).isPositive().isLessThanOrEqualTo(bound);
        assertThat(timed(LockMetrics.HOLD, "freed", "false", "jobs"))
                .as("let go by releaseAfter: the backend frees it later")
                .isEqualTo(1);
    }

    @Test
    void theGaugeFollowsTheHeldLeases() {
        LockClient client = open();
        bind(client);
        assertThat(held()).isZero();
        Lease a = client.tryAcquire(name("jobs", "a")).orElseThrow();
        client.tryAcquire(name("jobs", "b")).orElseThrow();
        assertThat(held()).isEqualTo(2);
        a.release();
        assertThat(held()).isEqualTo(1);
        assertThat(registry.get(LockMetrics.LEASES_HELD).gauge().getId().getTag("backend"))
                .isEqualTo(expectedBackendName());
    }

    @Test
    void aForcedReleaseIsCountedAsARejectedRenewalAndALoss() throws Exception {
        LockClient holder = open();
        LockClient operator = open();
        bind(holder);
        String name = name("reports", "forced");
        Lease lease = holder.tryAcquire(name).orElseThrow();
        assertThat(lease.renew()).isTrue();
        assertThat(held()).isEqualTo(1);

        assertThat(operator.forceRelease(name)).isPresent();
        assertThat(lease.renew()).as("refused by the backend").isFalse();

        assertThat(lease.lost()
                        .toCompletableFuture()
                        .get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)
                        .reason())
                .isEqualTo(LeaseLoss.Reason.REJECTED);
        assertThat(count(LockMetrics.RENEWALS, "outcome", "renewed", "reports")).isEqualTo(1);
        assertThat(count(LockMetrics.RENEWALS, "outcome", "rejected", "reports"))
                .isEqualTo(1);
        assertThat(count(LockMetrics.RENEWALS, "outcome", "failed", "reports")).isZero();
        assertThat(count(LockMetrics.LOSSES, "reason", "rejected", "reports")).isEqualTo(1);
        assertThat(count(LockMetrics.LOSSES, "reason", "expired", "reports")).isZero();
        assertThat(held()).isZero();
    }

    @Test
    void aFailingBackendFailsAcquiresAndRenewalsAndItsLeasesExpire() throws Exception {
        try (Breakable broken = breakable()) {
            LockClient client = broken.client();
            bind(client);
            Lease kept = client.tryAcquire(name("kept", "a")).orElseThrow();
            Lease renewed = client.lock(name("renewed", "a"))
                    .ttl(Duration.ofSeconds(2))
                    .autoRenew(true)
                    .tryAcquire()
                    .orElseThrow();
            broken.breakBackend().run();

            assertThat(catchThrowable(kept::renew)).isInstanceOf(LockBackendException.class);
            assertThat(catchThrowable(() -> client.tryAcquire(name("orders", "b"))))
                    .isInstanceOf(LockBackendException.class);
            LeaseLoss loss = renewed.lost().toCompletableFuture().get(HANG_GUARD_SECONDS, TimeUnit.SECONDS);

            assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.EXPIRED);
            assertThat(timed(LockMetrics.ACQUIRE, "outcome", "failed", "orders"))
                    .isEqualTo(1);
            assertThat(count(LockMetrics.RENEWALS, "outcome", "failed", "kept"))
                    .as("the one renewal asked for")
                    .isEqualTo(1);
            // the lost signal completes before the listeners are told: wait for the count itself
            awaitCount(LockMetrics.LOSSES, "reason", "expired", "renewed", 1);
            assertThat(held()).as("the kept lease is valid for its TTL").isEqualTo(1);
        }
    }

    @Test
    void aGroupFunctionOfTheUsersOwnTagsTheMeters() {
        LockClient client = open();
        bind(client, b -> b.lockGroup(name -> name.startsWith("orders") ? "billing" : "misc"));
        client.tryAcquire(name("orders", "a")).orElseThrow().release();
        client.tryAcquire(name("stock", "a")).orElseThrow().release();

        assertThat(timed(LockMetrics.ACQUIRE, "outcome", "granted", "billing")).isEqualTo(1);
        assertThat(timed(LockMetrics.ACQUIRE, "outcome", "granted", "misc")).isEqualTo(1);
        assertThat(timed(LockMetrics.HOLD, "freed", "true", "billing")).isEqualTo(1);
        assertThat(registry.find(LockMetrics.ACQUIRE)
                        .tag("lock.group", "orders")
                        .timers())
                .isEmpty();
    }

    @Test
    void closeStopsRecordingAndRemovesTheGauge() {
        LockClient client = open();
        LockMetrics metrics = bind(client);
        client.tryAcquire(name("orders", "before")).orElseThrow().release();
        metrics.close();
        client.tryAcquire(name("orders", "after")).orElseThrow().release();

        assertThat(timed(LockMetrics.ACQUIRE, "outcome", "granted", "orders"))
                .as("the totals stay")
                .isEqualTo(1);
        assertThat(timed(LockMetrics.HOLD, "freed", "true", "orders")).isEqualTo(1);
        Gauge gauge = registry.find(LockMetrics.LEASES_HELD).gauge();
        assertThat(gauge).as("the gauge refers to the client: removed").isNull();
    }
}
