package io.fencelock;

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
 */
final class ManagedLease implements Lease {
    private final Engine engine;
    private final String name;
    private final String leaseId;
    private final Duration ttl;
    private final long validityWindowNanos;
    private final long renewIntervalNanos;
    private final boolean autoRenew;
    private final CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
    private final ReentrantLock lock = new ReentrantLock();

    private LeaseState state = LeaseState.HELD;
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
        return ttl;
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
        if (state() != LeaseState.HELD) {
            return false;
        }
        long sent = engine.clock.getAsLong();
        RenewResult result = engine.renew(java.util.List.of(renewRequest())).get(0);
        return applyRenewal(sent, result);
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
        engine.forget(this);
        boolean freed;
        try {
            freed = engine.release(name, leaseId);
        } catch (LockBackendException e) {
            if (e.isRetryable()) {
                engine.releaseInBackground(name, leaseId, ttl, false);
            }
            throw e;
        }
        engine.events.released(this, freed);
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

    RenewRequest renewRequest() {
        return new RenewRequest(name, leaseId, ttl, engine.options.tokenPeriod());
    }

    boolean autoRenew() {
        return autoRenew;
    }

    long renewIntervalNanos() {
        return renewIntervalNanos;
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
    boolean applyRenewal(long sentNanos, RenewResult result) {
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
                lastRenewFailure = null;
                if (sentNanos - lastGrantSentNanos > 0) {
                    lastGrantSentNanos = sentNanos;
                    deadlineNanos = Math.max(deadlineNanos, sentNanos + validityWindowNanos);
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

    /** A renewal failed on the way; the watchdog tries again after {@code retryNanos}, up to the deadline. */
    void renewalFailed(Throwable failure, long retryNanos) {
        lock.lock();
        try {
            lastRenewFailure = failure;
            nextRenewNanos = engine.clock.getAsLong() + retryNanos;
        } finally {
            lock.unlock();
        }
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
            engine.releaseInBackground(name, leaseId, ttl, false);
        }
        lost.complete(loss);
        engine.events.lost(loss);
    }

    @Override
    public String toString() {
        return "Lease{" + name + ", id=" + leaseId + ", token=" + fencingToken() + ", " + state() + '}';
    }
}
