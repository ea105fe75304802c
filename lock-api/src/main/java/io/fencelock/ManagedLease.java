package io.fencelock;

import io.fencelock.spi.GrantKind;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The engine's lease: grant state, local validity deadline and lost signal. The state changes under
 * {@link #lock}, which is never held across I/O; listeners are called after it is let go.
 *
 * <p>Renewals of one lease are sent one at a time ({@link #renewing}: a caller's renewal waits for
 * the watchdog's, and the watchdog skips a lease a caller is renewing), so that a renewal to another
 * TTL is answered before the next one leaves. A renewal to a shorter TTL caps the deadline before
 * it is sent (the backend may apply it even if the answer is lost); only its successful answer lifts
 * the cap, and after a lost answer the cap stays for the rest of the lease.
 */
final class ManagedLease implements Lease {
    private final Engine engine;
    private final String name;
    private final String leaseId;
    private final LockMetadata metadata;
    private final int permits;
    private final boolean autoRenew;
    private final long grantedNanos;
    private final Duration grantedTtl;
    /** Held by whoever is sending a renewal of this lease, across the round trip. */
    final ReentrantLock renewing = new ReentrantLock();

    private final CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
    private final ReentrantLock lock = new ReentrantLock();

    private LeaseState state = LeaseState.HELD;
    /** The grant's mode; a downgrade turns WRITE into READ. */
    private LockMode mode;
    /** Which call granted the lease (a fair mutex's is a shared grant): a renewal says it to the backend. */
    private final GrantKind grant;

    private Duration ttl;
    private long validityWindowNanos;
    private long renewIntervalNanos;
    /** The latest deadline a shorter renewal in flight (or with a lost answer) allows; MAX_VALUE when none. */
    private long capNanos = Long.MAX_VALUE;
    /** When the shortening behind {@link #capNanos} was sent. */
    private long capSentNanos;
    /** A shortening's answer was lost: the backend may have applied it at any time, so the cap stays. */
    private boolean capForGood;

    private long token;
    private Instant serverExpiry;
    /** The engine clock's time after which the lease is no longer valid. */
    private long deadlineNanos;
    /** When the latest successful grant was sent; the next renewal is due a renew interval later. */
    private long lastGrantSentNanos;
    /** The watchdog's next attempt, moved later after a failed renewal. */
    private long nextRenewNanos;

    private Throwable lastRenewFailure;

    ManagedLease(
            Engine engine,
            String name,
            String leaseId,
            Duration ttl,
            boolean autoRenew,
            LockMetadata metadata,
            LockMode mode,
            GrantKind grant,
            int permits,
            long token,
            Instant serverExpiry,
            long sentNanos) {
        this.engine = engine;
        LockOptions options = engine.options;
        this.name = name;
        this.leaseId = leaseId;
        this.ttl = ttl;
        this.validityWindowNanos = options.validityWindow(ttl).toNanos();
        this.renewIntervalNanos = options.renewInterval(ttl).toNanos();
        this.autoRenew = autoRenew;
        this.metadata = metadata;
        this.mode = mode;
        this.grant = grant;
        this.permits = permits;
        this.grantedNanos = sentNanos;
        this.grantedTtl = ttl;
        this.token = token;
        this.serverExpiry = serverExpiry;
        this.lastGrantSentNanos = sentNanos;
        this.deadlineNanos = sentNanos + validityWindowNanos;
        this.nextRenewNanos = sentNanos + renewIntervalNanos;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String leaseId() {
        return leaseId;
    }

    @Override
    public long fencingToken() {
        lock.lock();
        try {
            return token;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Instant serverExpiry() {
        lock.lock();
        try {
            return serverExpiry;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Duration ttl() {
        lock.lock();
        try {
            return ttl;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public LockMetadata metadata() {
        return metadata;
    }

    @Override
    public LockMode mode() {
        lock.lock();
        try {
            return mode;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public boolean isValid() {
        return remainingNanos() > 0;
    }

    @Override
    public Duration remainingValidity() {
        return Duration.ofNanos(Math.max(0, remainingNanos()));
    }

    private long remainingNanos() {
        lock.lock();
        try {
            return state == LeaseState.HELD ? deadlineNanos - engine.clock.getAsLong() : 0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public LeaseState state() {
        lock.lock();
        try {
            return state;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean renew() {
        return renewTo(null, false);
    }

    @Override
    public boolean renew(Duration newTtl) {
        engine.requireUsableTtl(newTtl);
        requireExtendable("ttl", newTtl);
        return renewTo(newTtl, false);
    }

    /**
     * One renewal, to {@code newTtl} (null: the lease's TTL), sent only when no other renewal of this lease is in
     * flight. With {@code thenLetGo}, a successful renewal ends the lease here: the backend keeps it until the new
     * TTL ends.
     */
    private boolean renewTo(Duration newTtl, boolean thenLetGo) {
        if (state() != LeaseState.HELD) {
            return false;
        }
        renewing.lock();
        try {
            RenewRequest request;
            long sent;
            boolean shortens = false;
            lock.lock();
            try {
                if (state != LeaseState.HELD) {
                    return false;
                }
                sent = engine.clock.getAsLong();
                if (newTtl != null && !newTtl.equals(ttl)) {
                    shortens = changeTtl(newTtl, sent);
                }
                request = renewRequest();
            } finally {
                lock.unlock();
            }
            RenewResult result;
            try {
                result = engine.renew(java.util.List.of(request)).get(0);
            } catch (RuntimeException e) {
                if (shortens) {
                    lock.lock();
                    try {
                        capForGood = true;
                    } finally {
                        lock.unlock();
                    }
                }
                renewalFailed(e, -1);
                throw e;
            }
            if (thenLetGo && result.renewed()) {
                return letGo();
            }
            return applyRenewal(sent, request, result);
        } finally {
            renewing.unlock();
        }
    }

    /**
     * Turns this write lease into a read lease in one round trip, sent as one of its renewals (one
     * at a time with the others): the backend keeps the grant and its token throughout, so no writer
     * slips in. A refusal means the write grant was already gone: the lease is lost. After a failure on
     * the way the lease counts as a reader (the backend may have applied the downgrade; a renewal works
     * either way).
     */
    boolean downgrade() {
        if (mode() != LockMode.WRITE) {
            throw new IllegalStateException("lease " + leaseId + " of '" + name + "' is " + mode()
                    + ", not WRITE: only a write lease can be downgraded");
        }
        if (state() != LeaseState.HELD) {
            return false;
        }
        renewing.lock();
        try {
            RenewRequest request;
            long sent;
            lock.lock();
            try {
                if (state != LeaseState.HELD) {
                    return false;
                }
                sent = engine.clock.getAsLong();
                request = renewRequest();
            } finally {
                lock.unlock();
            }
            RenewResult result;
            try {
                result = engine.downgradeOnBackend(name, leaseId, request.ttl());
            } catch (RuntimeException e) {
                // The backend may have applied it: from now on the lease claims no more than a reader's right.
                lock.lock();
                try {
                    mode = LockMode.READ;
                } finally {
                    lock.unlock();
                }
                renewalFailed(e, -1);
                throw e;
            }
            return applyRenewal(sent, request, result, LockMode.READ);
        } finally {
            renewing.unlock();
        }
    }

    /** Under {@link #lock}: the lease's TTL becomes {@code newTtl}; a shorter one caps the deadline at once (returns true). */
    private boolean changeTtl(Duration newTtl, long sent) {
        long window = engine.options.validityWindow(newTtl).toNanos();
        boolean shortens = newTtl.compareTo(ttl) < 0;
        if (shortens) {
            capNanos = Math.min(capNanos, sent + window);
            capSentNanos = sent;
            deadlineNanos = Math.min(deadlineNanos, capNanos);
        }
        ttl = newTtl;
        validityWindowNanos = window;
        renewIntervalNanos = engine.options.renewInterval(newTtl).toNanos();
        return shortens;
    }

    @Override
    public boolean releaseAfter(Duration delay) {
        LockOptions.requireNonNegative("delay", delay);
        if (delay.compareTo(engine.maxTtl()) > 0) {
            throw new IllegalArgumentException(
                    "delay " + delay + " is longer than " + engine.maxTtl() + ", the longest TTL this backend honours");
        }
        if (delay.compareTo(Duration.ofMillis(1)) < 0) {
            release();
            return true;
        }
        requireExtendable("delay", delay);
        // One renewal to exactly the delay: the backend frees the lock when it ends, with no further I/O.
        return renewTo(delay, true);
    }

    /** A TTL longer than the grant's only where the backend can extend a lease ({@link Capability#EXTENDABLE_TTL}). */
    private void requireExtendable(String what, Duration newTtl) {
        if (newTtl.compareTo(grantedTtl) > 0 && !engine.capabilities.contains(Capability.EXTENDABLE_TTL)) {
            throw new IllegalArgumentException(what + " " + newTtl + " is longer than the TTL " + grantedTtl
                    + " this lease was granted with, and this backend cannot extend a lease past it"
                    + " (it does not declare Capability.EXTENDABLE_TTL)");
        }
    }

    /** After the final renewal of {@link #releaseAfter}: the lease is no longer this client's to renew or release. */
    private boolean letGo() {
        Duration held;
        lock.lock();
        try {
            if (state != LeaseState.HELD) {
                return false;
            }
            state = LeaseState.RELEASED;
            held = Duration.ofNanos(engine.clock.getAsLong() - grantedNanos);
        } finally {
            lock.unlock();
        }
        engine.forget(this);
        engine.events.released(this, false, held);
        return true;
    }

    @Override
    public boolean release() {
        lock.lock();
        try {
            if (state == LeaseState.RELEASED) {
                return false;
            }
            if (state == LeaseState.HELD) {
                state = LeaseState.RELEASED;
            }
        } finally {
            lock.unlock();
        }
        engine.forgetReleasing(this);
        boolean listening = engine.events.listening();
        long releasing = listening ? engine.clock.getAsLong() : 0;
        boolean freed;
        try {
            freed = engine.release(this);
        } catch (LockBackendException e) {
            if (e.isRetryable()) {
                engine.releaseInBackground(name, leaseId, grant, ttl, false);
            }
            throw e;
        }
        if (listening) {
            engine.events.released(this, freed, Duration.ofNanos(releasing - grantedNanos));
        }
        return freed;
    }

    @Override
    public void close() {
        try {
            release();
        } catch (RuntimeException e) {
            boolean retried = e instanceof LockBackendException b && b.isRetryable();
            Engine.LOG.warn(
                    "Could not release lease {} on '{}'; {}: {}",
                    leaseId,
                    name,
                    retried
                            ? "retrying in the background until it would have expired"
                            : "it expires on the backend by itself",
                    e.toString());
        }
    }

    @Override
    public CompletionStage<LeaseLoss> lost() {
        return lost.minimalCompletionStage();
    }

    /** The loss, once the lease is lost. */
    java.util.Optional<LeaseLoss> loss() {
        return java.util.Optional.ofNullable(lost.getNow(null));
    }

    /** Adds an action run when the lease is lost (at once if it already is). */
    void whenLost(Runnable action) {
        lost.thenRun(action);
    }

    /** Which call granted the lease; a renewal and the release tell the backend. */
    GrantKind grant() {
        return grant;
    }

    /** A renewal to the lease's current TTL. */
    RenewRequest renewRequest() {
        return new RenewRequest(name, leaseId, ttl(), engine.options.tokenPeriod(), grant);
    }

    boolean autoRenew() {
        return autoRenew;
    }

    long renewIntervalNanos() {
        lock.lock();
        try {
            return renewIntervalNanos;
        } finally {
            lock.unlock();
        }
    }

    long nextRenewNanos() {
        lock.lock();
        try {
            return nextRenewNanos;
        } finally {
            lock.unlock();
        }
    }

    long deadlineNanos() {
        lock.lock();
        try {
            return deadlineNanos;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies the backend's answer to a renewal sent at {@code sentNanos}. A grant that arrives
     * after the deadline cannot revive the lease: losing it is final.
     */
    boolean applyRenewal(long sentNanos, RenewRequest request, RenewResult result) {
        return applyRenewal(sentNanos, request, result, null);
    }

    /** As {@link #applyRenewal(long, RenewRequest, RenewResult)}; a successful answer sets the mode to {@code newMode} (when not null). */
    private boolean applyRenewal(long sentNanos, RenewRequest request, RenewResult result, LockMode newMode) {
        LeaseLoss loss = null;
        lock.lock();
        try {
            if (state != LeaseState.HELD) {
                return false;
            }
            if (!result.renewed()) {
                loss = markLost(LeaseLoss.Reason.REJECTED, null);
            } else if (engine.clock.getAsLong() - deadlineNanos >= 0) {
                loss = markLost(LeaseLoss.Reason.EXPIRED, lastRenewFailure);
            } else {
                token = Math.max(token, result.token());
                serverExpiry = result.expiresAt();
                if (newMode != null) {
                    mode = newMode;
                }
                lastRenewFailure = null;
                if (capNanos != Long.MAX_VALUE && !capForGood && sentNanos - capSentNanos >= 0) {
                    // The shortening (or a renewal sent after it was answered) is applied: nothing older can follow.
                    capNanos = Long.MAX_VALUE;
                }
                // Renewals of a lease are sent one at a time, so this answer is to the latest one sent.
                if (sentNanos - lastGrantSentNanos >= 0) {
                    lastGrantSentNanos = sentNanos;
                    long window = engine.options.validityWindow(request.ttl()).toNanos();
                    deadlineNanos = Math.min(capNanos, Math.max(deadlineNanos, sentNanos + window));
                    nextRenewNanos = sentNanos + renewIntervalNanos;
                }
            }
        } finally {
            lock.unlock();
        }
        if (loss != null) {
            announceLoss(loss, result.renewed());
            return false;
        }
        engine.events.renewed(this, sentNanos);
        return true;
    }

    /**
     * A renewal failed on the way; the watchdog tries again after {@code retryNanos} (a caller's
     * renewal passes -1: the watchdog keeps its own plan), up to the deadline.
     */
    void renewalFailed(Throwable failure, long retryNanos) {
        boolean willRetry;
        lock.lock();
        try {
            if (state != LeaseState.HELD) {
                return;
            }
            lastRenewFailure = failure;
            long now = engine.clock.getAsLong();
            if (retryNanos >= 0) {
                nextRenewNanos = now + retryNanos;
            }
            willRetry = autoRenew && nextRenewNanos - deadlineNanos < 0;
        } finally {
            lock.unlock();
        }
        engine.events.renewalFailed(this, failure, willRetry);
    }

    /**
     * Called by the watchdog's expiry thread: declares the lease lost when its deadline has passed, else returns
     * the deadline to check again at (or 0 when the lease is no longer held).
     */
    long checkExpiry() {
        LeaseLoss loss;
        lock.lock();
        try {
            if (state != LeaseState.HELD) {
                return 0;
            }
            if (engine.clock.getAsLong() - deadlineNanos < 0) {
                return deadlineNanos;
            }
            loss = markLost(LeaseLoss.Reason.EXPIRED, lastRenewFailure);
        } finally {
            lock.unlock();
        }
        announceLoss(loss, true);
        return 0;
    }

    private LeaseLoss markLost(LeaseLoss.Reason reason, Throwable cause) {
        state = LeaseState.LOST;
        return new LeaseLoss(this, reason, cause);
    }

    /** Tells everyone; when the backend may still hold the lock for us, frees it in the background. */
    private void announceLoss(LeaseLoss loss, boolean mayStillHoldOnBackend) {
        engine.forget(this);
        if (mayStillHoldOnBackend) {
            engine.releaseInBackground(name, leaseId, grant, ttl, false);
        }
        lost.complete(loss);
        engine.events.lost(loss);
    }

    @Override
    public String toString() {
        LockMode m = mode();
        String shared = m == LockMode.EXCLUSIVE ? "" : ", " + m + (m == LockMode.PERMITS ? " x" + permits : "");
        return "Lease{" + name + ", id=" + leaseId + ", token=" + fencingToken() + shared + ", " + state() + '}';
    }
}
