package io.fencelock.coordination;

import io.fencelock.Lease;
import io.fencelock.LeaseLostException;
import io.fencelock.LeaseTask;
import io.fencelock.LockClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One candidate in a leader election: a lock named after the group, taken by whoever campaigns
 * first and held (renewed by the client's watchdog) while it leads. The leader's work runs under
 * that lease with its fencing token at hand; when the lease is lost the work is interrupted and
 * the candidate steps down. {@link #resign()} hands leadership on at once (the next candidate is
 * woken by the release signal); {@link #close()} steps down and stops campaigning.
 *
 * <pre>{@code
 * LeaderElection election = LeaderElection.builder(locks, "billing")
 *         .candidate("node-a")
 *         .work(lease -> { runBilling(lease.fencingToken()); return null; })
 *         .build();
 * election.start();
 * ...
 * LeaderElection.leader(locks, "billing")   // who leads, without campaigning
 * }</pre>
 *
 * <p>Without {@link Builder#work work}, a leader holds leadership until it resigns, closes or
 * loses the lease. When the work returns or fails, the candidate steps down and campaigns again.
 * One campaign thread per candidate; it runs the work too.
 */
public final class LeaderElection implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);

    /** Why a leader stopped leading. */
    public enum StepDown {
        /** {@link #resign()} was called. */
        RESIGNED,
        /** The lease was lost (renewals failed past the validity deadline, or were refused). */
        LOST,
        /** The leader's work returned. */
        WORK_ENDED,
        /** The leader's work threw. */
        WORK_FAILED,
        /** {@link #close()} was called. */
        CLOSED
    }

    /** Told when this candidate gains and loses leadership; called on the campaign thread, keep it short. */
    public interface Listener {
        default void gained(Lease lease) {}

        default void steppedDown(Lease lease, StepDown why) {}
    }

    /** The current leader of a group as the backend records it. */
    public record Leader(String group, Optional<String> candidate, long fencingToken, Instant serverExpiry) {}

    private final LockClient client;
    private final String group;
    private final String candidate;
    private final Duration ttl;
    private final Duration resignHold;
    private final LeaseTask<?> work;
    private final List<Listener> listeners;
    private final ReentrantLock stateLock = new ReentrantLock();
    private final AtomicReference<Lease> leading = new AtomicReference<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private Thread campaign;
    private volatile boolean closed;
    private volatile boolean resigning;
    private volatile long holdOffUntil;

    private LeaderElection(Builder b) {
        this.client = b.client;
        this.group = b.group;
        this.candidate = b.candidate;
        this.ttl = b.ttl;
        this.resignHold = b.resignHold;
        this.work = b.work;
        this.listeners = new CopyOnWriteArrayList<>(b.listeners);
    }

    public static Builder builder(LockClient client, String group) {
        return new Builder(client, group);
    }

    /** Who leads {@code group} now, in two round trips, without campaigning; empty when nobody does. */
    public static Optional<Leader> leader(LockClient client, String group) {
        return OwnerRecords.holderOf(client, group)
                .map(h -> new Leader(
                        group, h.ownerId(), h.record().token(), h.record().expiresAt()));
    }

    /** Starts campaigning in the background. */
    public LeaderElection start() {
        stateLock.lock();
        try {
            if (campaign != null) {
                throw new IllegalStateException("election of '" + group + "' for '" + candidate + "' already started");
            }
            if (closed) {
                throw new IllegalStateException("election of '" + group + "' for '" + candidate + "' is closed");
            }
            campaign = new Thread(this::campaignLoop, "fencelock-election-" + group + "-" + candidate);
            campaign.setDaemon(true);
            campaign.start();
        } finally {
            stateLock.unlock();
        }
        return this;
    }

    public String group() {
        return group;
    }

    public String candidate() {
        return candidate;
    }

    /** Whether this candidate leads now (holds a valid lease on the group). */
    public boolean isLeader() {
        Lease lease = leading.get();
        return lease != null && lease.isValid();
    }

    /** The lease this candidate leads with, while it leads. */
    public Optional<Lease> leadership() {
        return Optional.ofNullable(leading.get()).filter(Lease::isValid);
    }

    public void addListener(Listener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Steps down if leading (the work is interrupted, the lease released) and stays out of the
     * campaign for the resign hold, so that another candidate takes over. Returns at once.
     */
    public void resign() {
        stateLock.lock();
        try {
            if (leading.get() != null) {
                resigning = true;
                holdOffUntil = System.nanoTime() + resignHold.toNanos();
                campaign.interrupt();
            }
        } finally {
            stateLock.unlock();
        }
    }

    /** Steps down if leading and stops campaigning; waits for the campaign thread to end. */
    @Override
    public void close() {
        Thread t;
        stateLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            t = campaign;
            if (t != null) {
                t.interrupt();
            }
        } finally {
            stateLock.unlock();
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void campaignLoop() {
        try {
            while (!closed) {
                long hold = holdOffUntil - System.nanoTime();
                if (hold > 0) {
                    sleepQuietly(hold);
                    continue;
                }
                campaignOnce();
            }
        } finally {
            stopped.countDown();
        }
    }

    /** One campaign: waits for the lock (up to a TTL, then looks at the hold and the close flag again) and leads. */
    private void campaignOnce() {
        AtomicReference<StepDown> why = new AtomicReference<>();
        AtomicReference<Lease> held = new AtomicReference<>();
        try {
            client.runExclusively(group, ttl, lease -> {
                held.set(lease);
                why.set(lead(lease));
                return null;
            });
        } catch (LeaseLostException e) {
            why.set(StepDown.LOST);
        } catch (InterruptedException e) {
            // interrupted while waiting for the lock: by close() or a resign that raced the grant
        } catch (Exception e) {
            if (held.get() == null) {
                LOG.debug(
                        "fencelock election '{}': campaign of '{}' failed, trying again: {}",
                        group,
                        candidate,
                        e.toString());
                sleepQuietly(Math.min(ttl.toNanos(), TimeUnit.SECONDS.toNanos(1)) / 4);
            } else {
                why.set(StepDown.WORK_FAILED);
                LOG.warn("fencelock election '{}': the work of leader '{}' failed", group, candidate, e);
            }
        } finally {
            Thread.interrupted(); // an interrupt meant for this campaign (resign, close) is used up
        }
        Lease lease = held.get();
        if (lease != null) {
            leading.set(null);
            resigning = false;
            StepDown reason = why.get() == null ? (closed ? StepDown.CLOSED : StepDown.RESIGNED) : why.get();
            listeners.forEach(l -> safely(() -> l.steppedDown(lease, reason)));
        }
    }

    /** Runs while leading; returns why leadership ends (the lease itself is released by runExclusively). */
    private StepDown lead(Lease lease) throws Exception {
        Optional<Lease> marker = OwnerRecords.publish(client, lease, candidate);
        stateLock.lock();
        try {
            leading.set(lease);
        } finally {
            stateLock.unlock();
        }
        try {
            listeners.forEach(l -> safely(() -> l.gained(lease)));
            if (closed) {
                return StepDown.CLOSED;
            }
            if (work == null) {
                new CountDownLatch(1).await(); // lead until interrupted: resign, close or loss
                return null;
            }
            work.run(lease);
            return StepDown.WORK_ENDED;
        } catch (InterruptedException e) {
            if (closed) {
                return StepDown.CLOSED;
            }
            if (resigning) {
                return StepDown.RESIGNED;
            }
            throw e; // the lease was lost: runExclusively reports it
        } finally {
            marker.ifPresent(Lease::close);
        }
    }

    private void sleepQuietly(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            // close() or resign(): the loop looks at its flags
        }
    }

    private void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.warn("fencelock election '{}': a listener failed", group, e);
        }
    }

    /** Settings of one candidate, validated before any I/O. */
    public static final class Builder {
        private final LockClient client;
        private final String group;
        private String candidate;
        private Duration ttl;
        private Duration resignHold;
        private LeaseTask<?> work;
        private final List<Listener> listeners = new ArrayList<>();

        private Builder(LockClient client, String group) {
            this.client = Objects.requireNonNull(client, "client");
            this.group = group;
        }

        /** This candidate's id, shown by {@link #leader}; default: host name and process id. */
        public Builder candidate(String id) {
            this.candidate = id;
            return this;
        }

        /** The leadership lease's TTL; default: the client's. A leader that freezes is replaced about a TTL later. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** How long a candidate that resigned stays out of the campaign; default: one TTL. */
        public Builder resignHold(Duration hold) {
            this.resignHold = hold;
            return this;
        }

        /** The leader's work, run under the leadership lease; interrupted when it is lost. */
        public Builder work(LeaseTask<?> work) {
            this.work = Objects.requireNonNull(work, "work");
            return this;
        }

        public Builder listener(Listener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public LeaderElection build() {
            if (candidate == null) {
                candidate = OwnerRecords.defaultOwnerId();
            }
            OwnerRecords.requireOwnerId("candidate", candidate);
            OwnerRecords.requireMarkableName("group", group, candidate);
            if (ttl == null) {
                ttl = client.options().ttl();
            }
            client.options().requireUsableTtl(OwnerRecords.positive("ttl", ttl));
            resignHold = resignHold == null ? ttl : requireNonNegative("resignHold", resignHold);
            return new LeaderElection(this);
        }

        private static Duration requireNonNegative(String what, Duration d) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException(what + " " + d + " must be zero or positive");
            }
            return d;
        }
    }
}
