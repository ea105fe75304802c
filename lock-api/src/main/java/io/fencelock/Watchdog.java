package io.fencelock;

import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One client's renewal machinery: a single renewer thread that renews every due lease in one
 * batched round trip, and a single timer thread that declares leases lost at their local validity
 * deadline. The two are separate so that a renewal stuck in I/O never delays a lost signal.
 */
final class Watchdog implements AutoCloseable {
    /** At most this many leases per round trip; more are split into several batches. */
    static final int MAX_BATCH = 10_000;

    private final LockClient client;
    private final Supplier<Collection<ManagedLease>> leases;
    private final ScheduledExecutorService timers;
    private final Thread renewer;
    private final ConcurrentLinkedQueue<Runnable> chores = new ConcurrentLinkedQueue<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private boolean wakeRequested;
    /**
     * When the renewer wakes next by itself ({@link System#nanoTime()}), or {@code SCANNING} while
     * it looks at the leases or renews: a new lease due no earlier needs no nudge, which spares
     * every acquire a wake-up of the renewer and a scan of all held leases.
     */
    private volatile long plannedWakeNanos = SCANNING;
    private static final long SCANNING = Long.MIN_VALUE;
    private volatile boolean closed;

    Watchdog(LockClient client, Supplier<Collection<ManagedLease>> leases, String clientName) {
        this.client = client;
        this.leases = leases;
        ScheduledThreadPoolExecutor expiryTimers = new ScheduledThreadPoolExecutor(1, daemon(clientName + "-expiry"));
        // a released lease's timer leaves the queue at once, not at its deadline: under churn the
        // queue (and the leases it points to) stays as large as what is held, not what was taken
        expiryTimers.setRemoveOnCancelPolicy(true);
        this.timers = expiryTimers;
        this.renewer = daemon(clientName + "-renewer").newThread(this::renewLoop);
        this.renewer.start();
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Starts watching a new lease: its expiry timer, and its renewals when it renews automatically. */
    void watch(ManagedLease lease) {
        scheduleExpiryCheck(lease, lease.deadlineNanos());
        if (lease.autoRenew()) {
            // The lease is in the client's map already: a scan that starts after this read sees it.
            long planned = plannedWakeNanos;
            if (planned == SCANNING || lease.nextRenewNanos() - planned < 0) {
                nudge();
            }
        }
    }

    /** Stops watching a lease that is no longer held: drops its expiry timer. */
    void unwatch(ManagedLease lease) {
        Future<?> timer = lease.expiryTimer;
        if (timer != null) {
            timer.cancel(false);
        }
    }

    /** Runs {@code chore} on the renewer thread (background releases). */
    void submit(Runnable chore) {
        chores.add(chore);
        nudge();
    }

    private void scheduleExpiryCheck(ManagedLease lease, long atNanos) {
        if (closed) {
            return;
        }
        long delay = Math.max(0, atNanos - System.nanoTime());
        try {
            lease.expiryTimer = timers.schedule(() -> {
                long next = lease.checkExpiry();
                if (next != 0) {
                    scheduleExpiryCheck(lease, next);
                }
            }, delay, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // the client is closing; close() settles every lease
        }
    }

    private void nudge() {
        lock.lock();
        try {
            wakeRequested = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void renewLoop() {
        while (!closed) {
            try {
                plannedWakeNanos = SCANNING;
                runChores();
                long now = System.nanoTime();
                long waitNanos = TimeUnit.SECONDS.toNanos(1);
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
                    plannedWakeNanos = now + waitNanos;
                    awaitNudge(waitNanos);
                } else {
                    for (int from = 0; from < due.size(); from += MAX_BATCH) {
                        renewBatch(due.subList(from, Math.min(due.size(), from + MAX_BATCH)));
                    }
                }
            } catch (RuntimeException | Error e) {
                LockClient.LOG.error("fencelock watchdog: unexpected failure, continuing", e);
                awaitNudge(TimeUnit.MILLISECONDS.toNanos(100));
            }
        }
    }

    private void runChores() {
        Runnable chore;
        while ((chore = chores.poll()) != null) {
            try {
                chore.run();
            } catch (RuntimeException e) {
                LockClient.LOG.debug("fencelock background task failed: {}", e.toString());
            }
        }
    }

    private void awaitNudge(long nanos) {
        lock.lock();
        try {
            long left = nanos;
            while (!wakeRequested && !closed && left > 0) {
                left = wake.awaitNanos(left);
            }
            wakeRequested = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        } finally {
            lock.unlock();
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

    /** Stops both threads; chores still queued (background releases) run first. */
    @Override
    public void close() {
        closed = true;
        nudge();
        try {
            renewer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        runChores();
        timers.shutdownNow();
    }
}
