package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's own handling of releases that cannot happen at once, on a map standing in for a
 * backend (the contract runs the same promises on every real backend): retries of a failed
 * release, sweeps of an acquire whose outcome is unknown, and releases on an interrupted thread.
 */
class BackgroundReleaseTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final MapBackend backend = new MapBackend();
    private final LockClient client = LockClient.create(
            backend, LockOptions.builder().ttl(TTL).autoRenew(false).build());

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void aReleaseThatFailsIsRetriedInTheBackground() throws InterruptedException {
        Lease lease = client.tryAcquire("a").orElseThrow();
        backend.failingReleases.set(3);
        assertThatThrownBy(lease::release).isInstanceOf(LockBackendException.class);
        await("the lock to be freed by the retries", () -> !backend.owners.containsKey("a"));
        assertThat(backend.releases.get()).as("release attempts").isEqualTo(4);
    }

    @Test
    void anAcquireOfUnknownOutcomeIsSweptEvenWhenItsGrantLandsLate() throws InterruptedException {
        backend.grantLate.set(true); // the request is applied 400 ms after the call failed, past the first release
        assertThatThrownBy(() -> client.tryAcquire("b")).isInstanceOf(LockBackendException.class);
        await("the late grant to land", () -> backend.owners.containsKey("b"));
        await("the late grant to be swept", () -> !backend.owners.containsKey("b"));
    }

    @Test
    void aReleaseNeverSeesTheCallersInterrupt() {
        Lease lease = client.tryAcquire("c").orElseThrow();
        Thread.currentThread().interrupt();
        boolean freed;
        boolean kept;
        try {
            freed = lease.release();
        } finally {
            kept = Thread.interrupted();
        }
        assertThat(freed).isTrue();
        assertThat(kept).as("interrupt kept for the caller").isTrue();
        assertThat(backend.releasedOnInterruptedThread)
                .as("a release the backend ran on an interrupted thread")
                .isFalse();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as("waiting for " + what).isNegative();
            Thread.sleep(5);
        }
    }

    /** Owners in a map; releases can be made to fail, and an acquire to fail and be applied later. */
    private static final class MapBackend implements LockBackend {
        final Map<String, String> owners = new ConcurrentHashMap<>();
        final AtomicInteger failingReleases = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        final AtomicBoolean grantLate = new AtomicBoolean();
        final AtomicLong tokens = new AtomicLong();
        volatile boolean releasedOnInterruptedThread;

        @Override
        public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
            if (grantLate.getAndSet(false)) {
                CompletableFuture.runAsync(
                        () -> owners.putIfAbsent(name, leaseId),
                        CompletableFuture.delayedExecutor(400, TimeUnit.MILLISECONDS));
                throw new LockBackendException("no answer (the request may still be applied)", true);
            }
            return owners.putIfAbsent(name, leaseId) == null
                    ? AcquireResult.granted(
                            tokens.incrementAndGet(), Instant.now().plus(ttl))
                    : AcquireResult.held(null);
        }

        @Override
        public List<RenewResult> renew(List<RenewRequest> requests) {
            return requests.stream()
                    .map(r -> r.leaseId().equals(owners.get(r.name()))
                            ? RenewResult.renewed(tokens.get(), Instant.now().plus(r.ttl()))
                            : RenewResult.rejected())
                    .toList();
        }

        @Override
        public boolean release(String name, String leaseId) {
            releases.incrementAndGet();
            releasedOnInterruptedThread |= Thread.currentThread().isInterrupted();
            if (failingReleases.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new LockBackendException("connection lost", true);
            }
            return owners.remove(name, leaseId);
        }

        @Override
        public Optional<LockInfo> inspect(String name) {
            return Optional.empty();
        }

        @Override
        public List<LockInfo> list(String prefix) {
            return List.of();
        }

        @Override
        public Set<Capability> capabilities() {
            return Set.of(Capability.FENCING);
        }

        @Override
        public void close() {}
    }
}
