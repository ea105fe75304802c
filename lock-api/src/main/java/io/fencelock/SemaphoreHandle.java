package io.fencelock;

import java.time.Duration;
import java.util.Optional;

/**
 * A counting semaphore of N permits on one name ({@link LockClient#semaphore(String, int)}): each
 * grant takes k permits, and at no instant do the name's live grants hold more than N. Every grant
 * is a {@link Lease} of its own (mode {@link LockMode#PERMITS}, {@link Lease#permits()} k) with a
 * fencing token above every earlier completed grant's, renewed by the watchdog and released like
 * any lease. N is recorded with the name: a request with another N, while the name has a live grant,
 * is refused with an {@link IllegalArgumentException}. Immutable and thread-safe; the {@code with}
 * methods return a changed copy.
 *
 * <pre>{@code
 * SemaphoreHandle exports = locks.semaphore("exports", 4);
 * Optional<Lease> slot = exports.acquire(1, Duration.ofSeconds(10));
 * }</pre>
 */
public final class SemaphoreHandle {
    private final SharedAcquirer acquirer;
    private final int limit;

    SemaphoreHandle(SharedAcquirer acquirer, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("permits " + limit + " must be at least 1");
        }
        this.acquirer = acquirer;
        this.limit = limit;
    }

    /** The lock name. */
    public String name() {
        return acquirer.name();
    }

    /** The semaphore's N. */
    public int limit() {
        return limit;
    }

    /** With this TTL for its grants (default: the client's). */
    public SemaphoreHandle withTtl(Duration ttl) {
        return new SemaphoreHandle(acquirer.withTtl(ttl), limit);
    }

    /** Whether the watchdog renews its grants (default: the client's option). */
    public SemaphoreHandle withAutoRenew(boolean autoRenew) {
        return new SemaphoreHandle(acquirer.withAutoRenew(autoRenew), limit);
    }

    /** With this metadata stored with each grant (owner filled in with the client's default). */
    public SemaphoreHandle withMetadata(LockMetadata metadata) {
        return new SemaphoreHandle(acquirer.withMetadata(metadata), limit);
    }

    /**
     * Fair: grants in the order waiters reached the backend, so a request for many permits is not
     * overtaken by a stream of small ones.
     *
     * @throws UnsupportedOperationException when the backend does not declare {@link Capability#FAIR_ORDER}
     */
    public SemaphoreHandle fair(boolean fair) {
        return new SemaphoreHandle(acquirer.withFair(fair), limit);
    }

    /** One attempt for one permit; empty when none is free. */
    public Optional<Lease> tryAcquire() {
        return tryAcquire(1);
    }

    /** One attempt for {@code permits} permits ({@code 1..N}); empty when they are not free. */
    public Optional<Lease> tryAcquire(int permits) {
        return acquirer.tryAcquire(LockMode.PERMITS, permits, limit);
    }

    /** Waits up to {@code wait} for one permit; empty when the wait ran out. */
    public Optional<Lease> acquire(Duration wait) throws InterruptedException {
        return acquire(1, wait);
    }

    /**
     * Waits up to {@code wait} for {@code permits} permits, as {@link LockClient#acquire(String, Duration)}
     * waits for a mutex; empty when the wait ran out.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> acquire(int permits, Duration wait) throws InterruptedException {
        return acquirer.acquire(LockMode.PERMITS, permits, limit, wait);
    }

    /**
     * Acquires {@code permits} permits (waiting up to {@code wait}), runs {@code task} holding them and
     * releases them, as {@link LockClient#runExclusively}: a lost lease interrupts the task.
     */
    public <T> Optional<T> runWithPermits(int permits, Duration wait, LeaseTask<T> task) throws Exception {
        return acquirer.run(LockMode.PERMITS, permits, limit, wait, task);
    }
}
