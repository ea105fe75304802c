package io.fencelock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A reentrant mutex on one name ({@link LockClient#reentrant(String)}), counted here in the engine:
 * the first hold of a key is one ordinary grant; further holds of the same key while that lease is
 * valid only raise the count (no request, same lease, same token); the last {@link ReentrantHold#release()}
 * releases the grant. The key is the calling thread by default, or an owner key the caller names
 * (a job id, a request id) so that holds can span threads. The backend sees one grant, and
 * {@link Lease} itself stays thread-agnostic. A lost lease ends every hold on it: the next acquire
 * by that key asks the backend again. Thread-safe.
 *
 * <pre>{@code
 * ReentrantLockHandle ledger = locks.reentrant("ledger");
 * try (ReentrantHold outer = ledger.acquire(Duration.ofSeconds(5)).orElseThrow()) {
 *     try (ReentrantHold inner = ledger.acquire(Duration.ofSeconds(5)).orElseThrow()) {
 *         // same lease, same token; no second request
 *     }
 * }
 * }</pre>
 */
public final class ReentrantLockHandle {
    private final LockClient client;
    private final String name;
    /** Per key (a Thread, or an owner key string): the lease and how many holds it carries. */
    private final ConcurrentHashMap<Object, Holds> holds = new ConcurrentHashMap<>();

    /** One key's grant and count; changed only inside the map's compute calls. */
    private static final class Holds {
        final ManagedLease lease;
        volatile int count; // written only inside the map's compute calls

        Holds(ManagedLease lease) {
            this.lease = lease;
            this.count = 1;
        }
    }

    ReentrantLockHandle(LockClient client, String name) {
        LockNames.requireValid(name);
        this.client = client;
        this.name = name;
    }

    /** The lock name. */
    public String name() {
        return name;
    }

    /** One attempt for the calling thread: a hold on its current grant, or a new grant; empty when another holds it. */
    public Optional<ReentrantHold> tryAcquire() {
        return enterNow(Thread.currentThread());
    }

    /** As {@link #tryAcquire()}, counted for {@code ownerKey} instead of the thread. */
    public Optional<ReentrantHold> tryAcquire(String ownerKey) {
        return enterNow(requireKey(ownerKey));
    }

    /**
     * For the calling thread: a further hold on its current grant at once, or waits up to {@code wait}
     * for a new grant; empty when the wait ran out.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<ReentrantHold> acquire(Duration wait) throws InterruptedException {
        return enter(Thread.currentThread(), LockOptions.requireNonNegative("wait", wait));
    }

    /** As {@link #acquire(Duration)}, counted for {@code ownerKey} instead of the thread. */
    public Optional<ReentrantHold> acquire(String ownerKey, Duration wait) throws InterruptedException {
        return enter(requireKey(ownerKey), LockOptions.requireNonNegative("wait", wait));
    }

    /**
     * Holds the lock for the calling thread (waiting up to {@code wait} if it does not hold it yet),
     * runs {@code task} and gives the hold back; a nested call in the task only counts. A lost lease
     * interrupts the task and surfaces as {@link LeaseLostException}, as {@link LockClient#runExclusively}.
     */
    public <T> Optional<T> runExclusively(Duration wait, LeaseTask<T> task) throws Exception {
        Objects.requireNonNull(task, "task");
        Optional<ReentrantHold> hold = acquire(wait);
        if (hold.isEmpty()) {
            return Optional.empty();
        }
        ReentrantHold h = hold.get();
        return Optional.ofNullable(ExclusiveRun.run((ManagedLease) h.lease(), task, h::close));
    }

    /** How many holds the calling thread has on the current grant (0 when none). */
    public int holdCount() {
        return count(Thread.currentThread());
    }

    /** How many holds {@code ownerKey} has on the current grant (0 when none). */
    public int holdCount(String ownerKey) {
        return count(requireKey(ownerKey));
    }

    private int count(Object key) {
        Holds h = holds.get(key);
        return h != null && h.lease.isValid() ? h.count : 0;
    }

    private static String requireKey(String ownerKey) {
        if (ownerKey == null || ownerKey.isBlank()) {
            throw new IllegalArgumentException("owner key " + (ownerKey == null ? "null" : "'" + ownerKey + "'")
                    + " must have at least one non-blank character");
        }
        return ownerKey;
    }

    /** A further hold on the key's valid grant, or one attempt for a new grant. */
    private Optional<ReentrantHold> enterNow(Object key) {
        Optional<ReentrantHold> again = holdAgain(key);
        return again.isPresent() ? again : client.tryAcquire(name).map(l -> install(key, (ManagedLease) l));
    }

    /** A further hold on the key's valid grant, or a new grant within {@code wait}. */
    private Optional<ReentrantHold> enter(Object key, Duration wait) throws InterruptedException {
        Optional<ReentrantHold> again = holdAgain(key);
        return again.isPresent() ? again : client.acquire(name, wait).map(l -> install(key, (ManagedLease) l));
    }

    /** Counts a new grant as the key's first hold (or, when another thread of the key got one first, joins that one). */
    private ReentrantHold install(Object key, ManagedLease lease) {
        ManagedLease[] kept = new ManagedLease[1];
        holds.compute(key, (k, h) -> {
            if (h != null && h.lease.isValid()) {
                h.count++; // another thread of this owner key got there first: join its grant
                kept[0] = h.lease;
                return h;
            }
            kept[0] = lease;
            return new Holds(lease);
        });
        if (kept[0] != lease) {
            lease.close();
        }
        return new ReentrantHold(this, key, kept[0]);
    }

    private Optional<ReentrantHold> holdAgain(Object key) {
        ManagedLease[] kept = new ManagedLease[1];
        holds.computeIfPresent(key, (k, h) -> {
            if (!h.lease.isValid()) {
                return null; // lost or past its deadline: the holds on it are over; ask the backend again
            }
            h.count++;
            kept[0] = h.lease;
            return h;
        });
        return kept[0] == null ? Optional.empty() : Optional.of(new ReentrantHold(this, key, kept[0]));
    }

    /** Gives one hold back; returns whether it was the last one on the key's grant (the caller then releases it). */
    boolean exit(Object key, ManagedLease lease) {
        boolean[] last = new boolean[1];
        holds.computeIfPresent(key, (k, h) -> {
            if (h.lease != lease) {
                return h; // a later grant of this key: the hold's own grant is already gone
            }
            if (--h.count > 0) {
                return h;
            }
            last[0] = true;
            return null;
        });
        return last[0];
    }
}
