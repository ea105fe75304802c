package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.WakeUpRegistry;
import io.fencelock.spi.WakeUpSubscription;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.WeakHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Steps and checks that a provider's own tests share, at the SPI level: what the contract does
 * not ask of every backend, but a provider may promise and test for itself.
 */
public final class SpiChecks {
    private SpiChecks() {}

    /**
     * Calls {@code operation} until it does not fail retryably (connections that died with a
     * restarted server fail until the pool has replaced them), as the engine would, for at most
     * {@code giveUpAfter}.
     */
    public static <T> T retryWhileRetryable(Callable<T> operation, Duration giveUpAfter) {
        long deadline = System.nanoTime() + giveUpAfter.toNanos();
        while (true) {
            try {
                return operation.call();
            } catch (LockBackendException e) {
                if (!e.isRetryable() || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static final ReentrantLock REGISTRIES_LOCK = new ReentrantLock();
    private static final Map<LockBackend, WakeUpRegistry> REGISTRIES = new WeakHashMap<>();

    /**
     * Subscribes to {@code backend}'s release signals as the engine does: through one
     * {@link WakeUpRegistry} over the backend's {@link LockBackend#releaseFeed() feed} per backend,
     * which the backend's close ends.
     */
    public static WakeUpSubscription subscribe(LockBackend backend, String name, Runnable onRelease) {
        WakeUpRegistry registry;
        REGISTRIES_LOCK.lock();
        try {
            registry = REGISTRIES.computeIfAbsent(
                    backend,
                    b -> new WakeUpRegistry(
                            b.releaseFeed().orElseThrow(() -> new IllegalArgumentException(b + " has no release feed")),
                            "tck-wake-ups"));
        } finally {
            REGISTRIES_LOCK.unlock();
        }
        return registry.subscribe(name, onRelease);
    }

    /**
     * For a backend whose release signals waiters only when an attempt was refused since the grant
     * (which {@link io.fencelock.spi.ReleaseFeed} allows, and which keeps a signal every subscriber hears
     * off the uncontended path): checks that an uncontended release sends no signal, that a
     * contended one sends exactly one, and that the next grant clears the mark. It relies on the
     * signals of one subscription arriving in release order, so it needs no sleep: had the
     * uncontended release signalled, that wake-up would come before the contended one's.
     *
     * @param name      a name no one else uses
     * @param hangGuard how long to wait for an expected signal before failing
     */
    public static void assertOnlyReleasesAfterARefusalSignal(
            LockBackend backend, String name, Duration ttl, Duration hangGuard) throws InterruptedException {
        Semaphore wakeUps = new Semaphore(0);
        try (WakeUpSubscription ignored = subscribe(backend, name, wakeUps::release)) {
            String alone = lease();
            assertThat(backend.tryAcquire(name, alone, ttl).acquired()).isTrue();
            assertThat(backend.release(name, alone))
                    .as("uncontended: no signal")
                    .isTrue();

            String holder = lease();
            assertThat(backend.tryAcquire(name, holder, ttl).acquired()).isTrue();
            String refused = lease();
            assertThat(backend.tryAcquire(name, refused, ttl).acquired())
                    .as("refused: marks the lock")
                    .isFalse();
            assertThat(backend.tryAcquire(name, lease(), ttl).acquired())
                    .as("refused again: already marked")
                    .isFalse();
            assertThat(backend.release(name, holder)).as("contended: a signal").isTrue();
            assertThat(wakeUps.tryAcquire(hangGuard.toNanos(), TimeUnit.NANOSECONDS))
                    .as("woken by the contended release")
                    .isTrue();
            assertThat(wakeUps.availablePermits())
                    .as("wake-ups beyond the contended release's")
                    .isZero();
            if (backend.capabilities().contains(Capability.GRANT_ON_RELEASE)) {
                // the release granted the lease this client queued under: its first refused one
                assertThat(backend.release(name, refused))
                        .as("the release of the grant the contended release made")
                        .isTrue();
                assertThat(wakeUps.tryAcquire(hangGuard.toMillis() / 10, TimeUnit.MILLISECONDS))
                        .as("a signal from releasing a grant nobody was refused since")
                        .isFalse();
            }

            String next = lease();
            assertThat(backend.tryAcquire(name, next, ttl).acquired())
                    .as("the grant clears the mark")
                    .isTrue();
            assertThat(backend.release(name, next)).isTrue();
            String last = lease();
            assertThat(backend.tryAcquire(name, last, ttl).acquired()).isTrue();
            String refusedLast = lease();
            assertThat(backend.tryAcquire(name, refusedLast, ttl).acquired()).isFalse();
            assertThat(backend.release(name, last)).isTrue();
            assertThat(wakeUps.tryAcquire(hangGuard.toNanos(), TimeUnit.NANOSECONDS))
                    .isTrue();
            assertThat(wakeUps.availablePermits())
                    .as("the release after the cleared mark sent none")
                    .isZero();
            backend.release(name, refusedLast); // granted by that release where the backend grants the queue
        }
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
