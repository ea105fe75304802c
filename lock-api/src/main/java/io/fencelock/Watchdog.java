package io.fencelock;

import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One client's renewal machinery: a single renewer thread that renews every due lease in one
 * batched round trip, and a single expiry thread that declares leases lost at their local validity
 * deadline. The two are separate so that a renewal stuck in I/O never delays a lost signal. Both
 * sleep until their next planned moment; an acquire wakes one only when its lease is due before
 * that, which a lease with the usual TTL never is. The renewer also runs the client's chores
 * (background releases), each at its planned time, a slice at a time between renewals.
 *
 * <p>Without its threads (the engine's unit tests, on a clock they move), the test drives it with
 * {@link #checkExpiries()} and {@link #renewTurn()}.
 */
final class Watchdog implements AutoCloseable {
    /** At most this many leases per round trip; more are split into several batches. */
    static final int MAX_BATCH = 10_000;
    /** The longest the threads sleep with nothing due: new leases due later than that wake nobody. */
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The renewer runs chores for at most this long before it looks at due renewals again. */
    private static final long CHORE_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Engine engine;
    private final LongSupplier clock;
    private final Thread renewer;
    private final Thread expiry;
    private final PlannedWake renewerWake = new PlannedWake();
    private final PlannedWake expiryWake = new PlannedWake();
    private final DelayQueue<Planned> chores = new DelayQueue<>();
    private volatile boolean closed;

    Watchdog(Engine engine, String clientName, boolean runThreads) {
        this.engine = engine;
        this.clock = engine.clock;
        this.renewer = runThreads ? daemon(clientName + "-renewer", this::renewLoop) : null;
        this.expiry = runThreads ? daemon(clientName + "-expiry", this::expiryLoop) : null;
        if (runThreads) {
            this.renewer.start();
            this.expiry.start();
        }
    }

    private static Thread daemon(String name, Runnable loop) {
        Thread t = new Thread(loop, name);
        t.setDaemon(true);
        return t;
    }

    /** Starts watching a new lease, already in the engine's map: its deadline, and its renewals. */
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

    /** A chore and the clock's time at which it is due. */
    private record Planned(Chore chore, long atNanos, LongSupplier clock) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(atNanos - clock.getAsLong(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(atNanos - ((Planned) other).atNanos, 0);
        }
    }

    /** Runs {@code chore} on the renewer thread, {@code delayNanos} from now and then as often as it asks. */
    void submit(Chore chore, long delayNanos) {
        long at = clock.getAsLong() + Math.max(0, delayNanos);
        chores.add(new Planned(chore, at, clock));
        renewerWake.wakeIfBefore(at);
    }

    /**
     * Declares each lease lost at its deadline. Deadlines only ever move later, and a let-go lease
     * leaves the engine's map, so one look at the held leases finds the next moment to wake.
     */
    private void expiryLoop() {
        while (!closed) {
            try {
                expiryWake.looking();
                expiryWake.sleepUntil(checkExpiries(), () -> closed);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                Engine.LOG.error("fencelock expiry timer: unexpected failure, continuing", e);
                pause(expiryWake);
            }
        }
    }

    /** Declares the leases past their deadline lost; returns the clock's time at which to look again. */
    long checkExpiries() {
        long next = clock.getAsLong() + IDLE_NANOS;
        for (ManagedLease lease : engine.heldLeases()) {
            long deadline = lease.checkExpiry();
            if (deadline != 0 && deadline - next < 0) {
                next = deadline;
            }
        }
        return next;
    }

    private void renewLoop() {
        while (!closed) {
            try {
                renewerWake.looking();
                long now = clock.getAsLong();
                long sleep = renewTurn();
                if (sleep >= 0) {
                    renewerWake.sleepUntil(now + sleep, () -> closed);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                Engine.LOG.error("fencelock watchdog: unexpected failure, continuing", e);
                pause(renewerWake);
            }
        }
    }

    /**
     * One turn of the renewer: the due chores (one slice of them), then every due lease renewed in
     * batched round trips. Returns how long to sleep before the next turn, or -1 after renewals
     * (look again at once).
     */
    long renewTurn() {
        runChores();
        long now = clock.getAsLong();
        long waitNanos = IDLE_NANOS;
        Planned nextChore = chores.peek();
        if (nextChore != null) {
            waitNanos = Math.max(0, Math.min(waitNanos, nextChore.atNanos - now));
        }
        boolean anyDue = false;
        List<ManagedLease> soon = new ArrayList<>();
        for (ManagedLease lease : engine.heldLeases()) {
            if (!lease.autoRenew() || lease.state() != LeaseState.HELD) {
                continue;
            }
            long untilDue = lease.nextRenewNanos() - now;
            anyDue |= untilDue <= 0;
            // Leases falling due within 60% of their interval join the round trip of one that is due now.
            // More than half: two groups half an interval apart, each sent a little after its turn,
            // would otherwise never join each other's batch, and stay two round trips per interval.
            if (untilDue <= lease.renewIntervalNanos() / 5 * 3) {
                soon.add(lease);
            }
            if (untilDue > 0) {
                waitNanos = Math.min(waitNanos, untilDue);
            }
        }
        if (!anyDue) {
            return waitNanos;
        }
        boolean skipped = false;
        for (int from = 0; from < soon.size(); from += MAX_BATCH) {
            skipped |= renewBatch(soon.subList(from, Math.min(soon.size(), from + MAX_BATCH)));
        }
        // A lease skipped because its caller is renewing it is looked at again shortly, not in a busy loop.
        return skipped ? TimeUnit.MILLISECONDS.toNanos(1) : -1;
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
        long start = clock.getAsLong();
        Planned due;
        while (clock.getAsLong() - start < CHORE_SLICE_NANOS && (due = chores.poll()) != null) {
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
            Engine.LOG.debug("fencelock background task failed: {}", e.toString());
            return -1;
        }
    }

    /** Renews the leases of {@code candidates} no caller is renewing now; returns whether any was skipped. */
    private boolean renewBatch(List<ManagedLease> candidates) {
        // A lease whose caller is renewing it now is left for the next turn: one renewal per lease in flight.
        List<ManagedLease> batch = new ArrayList<>(candidates.size());
        for (ManagedLease lease : candidates) {
            if (lease.renewing.tryLock()) {
                batch.add(lease);
            }
        }
        try {
            renewLocked(batch);
        } finally {
            for (ManagedLease lease : batch) {
                lease.renewing.unlock();
            }
        }
        return batch.size() < candidates.size();
    }

    private void renewLocked(List<ManagedLease> batch) {
        if (batch.isEmpty()) {
            return;
        }
        List<RenewRequest> requests = new ArrayList<>(batch.size());
        for (ManagedLease lease : batch) {
            requests.add(lease.renewRequest());
        }
        long sent = clock.getAsLong();
        List<RenewResult> results;
        try {
            results = engine.renew(requests);
        } catch (RuntimeException e) {
            Engine.LOG.debug(
                    "fencelock: renewing {} lease(s) failed, retrying until their deadlines: {}",
                    batch.size(),
                    e.toString());
            for (ManagedLease lease : batch) {
                lease.renewalFailed(e, retryDelayNanos(lease));
            }
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).applyRenewal(sent, requests.get(i), results.get(i));
        }
    }

    /** A jittered retry delay: a fifth of the renew interval, between 5 ms and 1 s. */
    private static long retryDelayNanos(ManagedLease lease) {
        long base = Math.max(
                TimeUnit.MILLISECONDS.toNanos(5),
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
            if (renewer != null) {
                renewer.join(TimeUnit.SECONDS.toMillis(5));
                expiry.join(TimeUnit.SECONDS.toMillis(5));
            }
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
