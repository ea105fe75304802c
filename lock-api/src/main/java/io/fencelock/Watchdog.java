package io.fencelock;

import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One client's renewal machinery: a single renewer thread that renews every due lease in one
 * batched round trip, and a single expiry thread that declares leases lost at their local validity
 * deadline. The two are separate so that a renewal stuck in I/O never delays a lost signal. Both
 * sleep until their next planned moment; an acquire wakes one only when its lease is due before
 * that, which a lease with the usual TTL never is. The renewer also runs the client's chores
 * (background releases), each at its planned time, a slice at a time between renewals.
 */
final class Watchdog implements AutoCloseable {
    /** At most this many leases per round trip; more are split into several batches. */
    static final int MAX_BATCH = 10_000;
    /** The longest the threads sleep with nothing due: new leases due later than that wake nobody. */
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The renewer runs chores for at most this long before it looks at due renewals again. */
    private static final long CHORE_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final LockClient client;
    private final Supplier<Collection<ManagedLease>> leases;
    private final Thread renewer;
    private final Thread expiry;
    private final PlannedWake renewerWake = new PlannedWake();
    private final PlannedWake expiryWake = new PlannedWake();
    private final DelayQueue<Planned> chores = new DelayQueue<>();
    private volatile boolean closed;

    Watchdog(LockClient client, Supplier<Collection<ManagedLease>> leases, String clientName) {
        this.client = client;
        this.leases = leases;
        this.renewer = daemon(clientName + "-renewer", this::renewLoop);
        this.expiry = daemon(clientName + "-expiry", this::expiryLoop);
        this.renewer.start();
        this.expiry.start();
    }

    private static Thread daemon(String name, Runnable loop) {
        Thread t = new Thread(loop, name);
        t.setDaemon(true);
        return t;
    }

    /** Starts watching a new lease, already in the client's map: its deadline, and its renewals. */
    void watch(ManagedLease lease) {
        expiryWake.wakeIfBefore(lease.deadlineNanos());
        if (lease.autoRenew()) {
            renewerWake.wakeIfBefore(lease.nextRenewNanos());
        }
    }

    /** Background work on the renewer thread that may ask to run again. */
    interface Chore {
        /** Does one step; returns the nanoseconds until the next one, or a negative number when done. */
        long run();
    }

    /** A chore and the System.nanoTime() at which it is due. */
    private record Planned(Chore chore, long atNanos) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(atNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(atNanos - ((Planned) other).atNanos, 0);
        }
    }

    /** Runs {@code chore} on the renewer thread, {@code delayNanos} from now and then as often as it asks. */
    void submit(Chore chore, long delayNanos) {
        long at = System.nanoTime() + Math.max(0, delayNanos);
        chores.add(new Planned(chore, at));
        renewerWake.wakeIfBefore(at);
    }

    /**
     * Declares each lease lost at its deadline. Deadlines only ever move later, and a let-go lease
     * leaves the client's map, so one look at the held leases finds the next moment to wake.
     */
    private void expiryLoop() {
        while (!closed) {
            try {
                expiryWake.looking();
                long next = System.nanoTime() + IDLE_NANOS;
                for (ManagedLease lease : leases.get()) {
                    long deadline = lease.checkExpiry();
                    if (deadline != 0 && deadline - next < 0) {
                        next = deadline;
                    }
                }
                expiryWake.sleepUntil(next, () -> closed);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                LockClient.LOG.error("fencelock expiry timer: unexpected failure, continuing", e);
                pause(expiryWake);
            }
        }
    }

    private void renewLoop() {
        while (!closed) {
            try {
                renewerWake.looking();
                runChores();
                long now = System.nanoTime();
                long waitNanos = IDLE_NANOS;
                Planned nextChore = chores.peek();
                if (nextChore != null) {
                    waitNanos = Math.max(0, Math.min(waitNanos, nextChore.atNanos - now));
                }
                boolean anyDue = false;
                List<ManagedLease> soon = new ArrayList<>();
                for (ManagedLease lease : leases.get()) {
                    if (!lease.autoRenew() || lease.state() != LeaseState.HELD) {
                        continue;
                    }
                    long untilDue = lease.nextRenewNanos() - now;
                    anyDue |= untilDue <= 0;
                    // Leases falling due within half their interval join the round trip of one that is due now.
                    if (untilDue <= lease.renewIntervalNanos() / 2) {
                        soon.add(lease);
                    }
                    if (untilDue > 0) {
                        waitNanos = Math.min(waitNanos, untilDue);
                    }
                }
                List<ManagedLease> due = anyDue ? soon : List.of();
                if (due.isEmpty()) {
                    renewerWake.sleepUntil(now + waitNanos, () -> closed);
                } else {
                    for (int from = 0; from < due.size(); from += MAX_BATCH) {
                        renewBatch(due.subList(from, Math.min(due.size(), from + MAX_BATCH)));
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                LockClient.LOG.error("fencelock watchdog: unexpected failure, continuing", e);
                pause(renewerWake);
            }
        }
    }

    private void pause(PlannedWake wake) {
        try {
            wake.sleepFor(TimeUnit.MILLISECONDS.toNanos(100), () -> closed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    /** Runs the chores that are due, for one slice, so that a backlog of them never holds up due renewals. */
    private void runChores() {
        long start = System.nanoTime();
        Planned due;
        while (System.nanoTime() - start < CHORE_SLICE_NANOS && (due = chores.poll()) != null) {
            long again = runOnce(due.chore);
            if (again >= 0) {
                submit(due.chore, again);
            }
        }
    }

    private static long runOnce(Chore chore) {
        try {
            return chore.run();
        } catch (RuntimeException e) {
            LockClient.LOG.debug("fencelock background task failed: {}", e.toString());
            return -1;
        }
    }

    private void renewBatch(List<ManagedLease> batch) {
        List<RenewRequest> requests = new ArrayList<>(batch.size());
        for (ManagedLease lease : batch) {
            requests.add(lease.renewRequest());
        }
        long sent = System.nanoTime();
        List<RenewResult> results;
        try {
            results = client.backendRenew(requests);
        } catch (RuntimeException e) {
            LockClient.LOG.debug("fencelock: renewing {} lease(s) failed, retrying until their deadlines: {}",
                    batch.size(), e.toString());
            for (ManagedLease lease : batch) {
                lease.renewalFailed(e, retryDelayNanos(lease));
            }
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).applyRenewal(sent, results.get(i));
        }
    }

    /** A jittered retry delay: a fifth of the renew interval, between 5 ms and 1 s. */
    private static long retryDelayNanos(ManagedLease lease) {
        long base = Math.max(TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(TimeUnit.SECONDS.toNanos(1), lease.renewIntervalNanos() / 5));
        return base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
    }

    /** Stops both threads; then every chore still queued (background releases) runs once more, due or not. */
    @Override
    public void close() {
        closed = true;
        renewerWake.wake();
        expiryWake.wake();
        try {
            renewer.join(TimeUnit.SECONDS.toMillis(5));
            expiry.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Planned left;
        while ((left = firstOf(chores)) != null) {
            runOnce(left.chore);
        }
    }

    /** Takes the earliest chore, due or not (poll() hands out only due ones). */
    private static Planned firstOf(DelayQueue<Planned> queue) {
        Planned first = queue.peek();
        return first != null && queue.remove(first) ? first : null;
    }
}
