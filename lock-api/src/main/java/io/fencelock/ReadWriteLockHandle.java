package io.fencelock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A read-write lock on one name ({@link LockClient#readWriteLock(String)}): any number of readers,
 * or one writer. A writer that waits records its intent on the backend, and new readers wait behind
 * it, so a stream of readers cannot starve it. Every grant is a {@link Lease} of its own (mode
 * {@link LockMode#READ} or {@link LockMode#WRITE}) whose token exceeds every earlier completed
 * grant's; a resource that accepts writes only under write grants rejects a writer whose token is
 * below its last accepted write. Immutable and thread-safe; the {@code with} methods return a copy.
 *
 * <pre>{@code
 * ReadWriteLockHandle catalog = locks.readWriteLock("catalog");
 * try (Lease write = catalog.write(Duration.ofSeconds(5)).orElseThrow()) {
 *     rebuild(write.fencingToken());
 *     catalog.downgrade(write);            // now a reader; no other writer came in between
 *     publish(write.fencingToken());
 * }
 * }</pre>
 */
public final class ReadWriteLockHandle {
    private final SharedAcquirer acquirer;

    ReadWriteLockHandle(SharedAcquirer acquirer) {
        this.acquirer = acquirer;
    }

    /** The lock name. */
    public String name() {
        return acquirer.name();
    }

    /** With this TTL for its grants (default: the client's). */
    public ReadWriteLockHandle withTtl(Duration ttl) {
        return new ReadWriteLockHandle(acquirer.withTtl(ttl));
    }

    /** Whether the watchdog renews its grants (default: the client's option). */
    public ReadWriteLockHandle withAutoRenew(boolean autoRenew) {
        return new ReadWriteLockHandle(acquirer.withAutoRenew(autoRenew));
    }

    /** With this metadata stored with each grant (owner filled in with the client's default). */
    public ReadWriteLockHandle withMetadata(LockMetadata metadata) {
        return new ReadWriteLockHandle(acquirer.withMetadata(metadata));
    }

    /**
     * Fair: readers and writers are granted in the order they reached the backend.
     *
     * @throws UnsupportedOperationException when the backend does not declare {@link Capability#FAIR_ORDER}
     */
    public ReadWriteLockHandle fair(boolean fair) {
        return new ReadWriteLockHandle(acquirer.withFair(fair));
    }

    /** One attempt to read; empty when a writer holds the lock or a writer's intent stands. */
    public Optional<Lease> tryRead() {
        return acquirer.tryAcquire(LockMode.READ, 1, 0);
    }

    /** One attempt to write; empty when anyone holds the lock. Leaves no intent behind. */
    public Optional<Lease> tryWrite() {
        return acquirer.tryAcquire(LockMode.WRITE, 1, 0);
    }

    /**
     * Waits up to {@code wait} to read; empty when the wait ran out.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> read(Duration wait) throws InterruptedException {
        return acquirer.acquire(LockMode.READ, 1, 0, wait);
    }

    /**
     * Waits up to {@code wait} to write, holding back new readers meanwhile (the intent is withdrawn
     * when the wait ends without a grant); empty when the wait ran out.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> write(Duration wait) throws InterruptedException {
        return acquirer.acquire(LockMode.WRITE, 1, 0, wait);
    }

    /** Reads (waiting up to {@code wait}), runs {@code task} and releases, as {@link LockClient#runExclusively}. */
    public <T> Optional<T> runReading(Duration wait, LeaseTask<T> task) throws Exception {
        return acquirer.run(LockMode.READ, 1, 0, wait, task);
    }

    /** Writes (waiting up to {@code wait}), runs {@code task} and releases, as {@link LockClient#runExclusively}. */
    public <T> Optional<T> runWriting(Duration wait, LeaseTask<T> task) throws Exception {
        return acquirer.run(LockMode.WRITE, 1, 0, wait, task);
    }

    /**
     * Turns {@code writeLease} into a read lease in one round trip, without a gap: the backend never
     * frees the name in between, so no other writer slips in; readers may join from then on. The
     * lease keeps its id, token and validity; its {@link Lease#mode()} becomes {@link LockMode#READ}.
     *
     * @return {@code true} when downgraded; {@code false} when the lease no longer held the lock (it
     *         is then lost, or was released)
     * @throws IllegalArgumentException when the lease is not a write lease of this lock (before any I/O)
     * @throws LockBackendException     when the backend cannot be reached; the lease then counts as a
     *                                  reader (the backend may have applied the downgrade)
     */
    public boolean downgrade(Lease writeLease) {
        Objects.requireNonNull(writeLease, "writeLease");
        if (!(writeLease instanceof ManagedLease managed)
                || !managed.name().equals(name())
                || managed.mode() != LockMode.WRITE) {
            throw new IllegalArgumentException(
                    "lease " + writeLease + " is not a write lease of '" + name() + "': only those can be downgraded");
        }
        return managed.downgrade();
    }
}
