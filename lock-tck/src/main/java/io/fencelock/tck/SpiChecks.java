package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockBackendException;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.SharedRequest;
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
import java.util.function.Function;
import java.util.function.Supplier;

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
            assertThat(backend.tryAcquire(name, lease(), ttl).acquired())
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

            String next = lease();
            assertThat(backend.tryAcquire(name, next, ttl).acquired())
                    .as("the grant clears the mark")
                    .isTrue();
            assertThat(backend.release(name, next)).isTrue();
            String last = lease();
            assertThat(backend.tryAcquire(name, last, ttl).acquired()).isTrue();
            assertThat(backend.tryAcquire(name, lease(), ttl).acquired()).isFalse();
            assertThat(backend.release(name, last)).isTrue();
            assertThat(wakeUps.tryAcquire(hangGuard.toNanos(), TimeUnit.NANOSECONDS))
                    .isTrue();
            assertThat(wakeUps.availablePermits())
                    .as("the release after the cleared mark sent none")
                    .isZero();
        }
    }

    /**
     * A hand-over from a lease that does not hold the name writes nothing: {@code stateOf} reads all a
     * provider stores of a name (rows, keys, a document), equal before and after a hand-over from a
     * released lease, from an expired lease whose name {@code other} (another client) took, and from a
     * semaphore's permit. The contract's handOverIsOwnerChecked sees only what inspect shows.
     */
    public static void refusedHandOversWriteNothing(
            LockBackend backend, LockBackend other, Supplier<String> freshName, Function<String, ?> stateOf) {
        Duration ttl = Duration.ofSeconds(30);
        String released = freshName.get();
        String old = lease();
        backend.tryAcquire(released, old, ttl);
        backend.release(released, old);
        refusedWithoutAWrite(backend, released, old, stateOf);

        String taken = freshName.get();
        String expired = lease();
        backend.tryAcquire(taken, expired, Duration.ofMillis(1));
        String taker = lease();
        long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!other.tryAcquire(taken, taker, ttl).acquired()) { // the 1 ms lease expires on the backend
            assertThat(System.nanoTime() - guard).as("the 1 ms lease expired").isNegative();
        }
        refusedWithoutAWrite(backend, taken, expired, stateOf);
        assertThat(other.release(taken, taker)).isTrue();

        String semaphore = freshName.get();
        String permit = lease();
        assertThat(backend.tryAcquireShared(
                                semaphore,
                                permit,
                                ttl,
                                new SharedRequest(LockMode.PERMITS, 1, 2, lease(), false, false),
                                LockMetadata.NONE)
                        .acquired())
                .isTrue();
        refusedWithoutAWrite(backend, semaphore, permit, stateOf);
        assertThat(backend.release(semaphore, permit)).isTrue();
    }

    private static void refusedWithoutAWrite(
            LockBackend backend, String name, String from, Function<String, ?> stateOf) {
        Object before = stateOf.apply(name);
        assertThat(backend.handOver(name, from, lease(), Duration.ofSeconds(30), LockMetadata.NONE)
                        .acquired())
                .as("a hand-over from %s, which does not hold %s", from, name)
                .isFalse();
        assertThat(stateOf.apply(name))
                .as("what the backend stores of %s", name)
                .isEqualTo(before);
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
