package io.fencelock.tck;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a real backend to count its round trips and, on request, to inject faults at the SPI:
 * renewals cut off as by a lost connection (the call fails and never reaches the server), renewals
 * stalled as by a frozen network or a paused renewer (the call waits, then reaches the server
 * late), and lost answers (the call reaches the server and acts, then fails as if the answer had
 * been lost: an indeterminate outcome), and acquires whose thread is interrupted as they start.
 * Used by properties about the engine: batching, lost
 * signals, input validation before any I/O, and by the fault properties on every topology.
 */
public final class InstrumentedBackend implements LockBackend {
    private final LockBackend delegate;
    private final AtomicInteger acquires = new AtomicInteger();
    private final AtomicInteger refusals = new AtomicInteger();
    private final AtomicInteger queuedRefusals = new AtomicInteger();
    private final AtomicInteger releases = new AtomicInteger();
    private final AtomicInteger handOvers = new AtomicInteger();
    private final AtomicInteger reads = new AtomicInteger();
    private final List<Integer> renewBatchSizes = new CopyOnWriteArrayList<>();
    private final AtomicInteger renewsFinished = new AtomicInteger();
    private volatile boolean renewalsCut;
    private volatile boolean acquiresCut;
    private volatile boolean releasesCut;
    private volatile boolean answersLost;
    private final java.util.concurrent.atomic.AtomicBoolean interruptNextAcquire =
            new java.util.concurrent.atomic.AtomicBoolean();
    private volatile CountDownLatch renewalGate;

    public InstrumentedBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    public LockBackend delegate() {
        return delegate;
    }

    /** From now on, renewals fail as if the connection were gone (true) or go through again (false). */
    public void cutRenewals(boolean cut) {
        this.renewalsCut = cut;
    }

    /** From now on, acquires fail as if the connection were gone (true) or go through again (false). */
    public void cutAcquires(boolean cut) {
        this.acquiresCut = cut;
    }

    /** From now on, releases fail as if the connection were gone (true) or go through again (false). */
    public void cutReleases(boolean cut) {
        this.releasesCut = cut;
    }

    /**
     * From now on, acquires, renewals and releases reach the server and take effect, but their
     * answers are lost: the call fails with a retryable error (true), or answers again (false).
     */
    public void loseAnswers(boolean lose) {
        this.answersLost = lose;
    }

    /** From now on, renewals wait before they reach the server, until {@link #resumeRenewals()}. */
    public void stallRenewals() {
        renewalGate = new CountDownLatch(1);
    }

    /** Lets stalled renewals through (late) and stops stalling new ones. */
    public void resumeRenewals() {
        CountDownLatch gate = renewalGate;
        renewalGate = null;
        if (gate != null) {
            gate.countDown();
        }
    }

    /** The next acquire to start interrupts its own thread first, as an interrupt arriving just as it is sent (true), or not (false). */
    public void interruptNextAcquire(boolean interrupt) {
        interruptNextAcquire.set(interrupt);
    }

    /** Acquire calls started (counted as they enter, before any answer). */
    public int acquireCalls() {
        return acquires.get();
    }

    /**
     * Acquire calls answered with a refusal: the caller found the name held and, through the engine, now
     * waits. A property that releases "after the waiter found the lock held" waits for this, not for
     * {@link #acquireCalls()}: a first attempt may still be opening a connection or session when it is
     * counted, and a release before its answer tests no wake-up at all.
     */
    public int refusedAcquires() {
        return refusals.get();
    }

    /**
     * Refusals that queued the client for a grant by a release ({@code GRANT_ON_RELEASE}): the answer names
     * the lease it is queued under. The engine's first attempt of an acquire is sent before it watches the name,
     * so only a later refusal queues; a property that needs the waiter queued waits for this.
     */
    public int queuedRefusals() {
        return queuedRefusals.get();
    }

    public int releaseCalls() {
        return releases.get();
    }

    public int readCalls() {
        return reads.get();
    }

    /** The size of every renew round trip so far, in order. */
    public List<Integer> renewBatchSizes() {
        return List.copyOf(renewBatchSizes);
    }

    /** Renew round trips that have ended (answered or failed), stalled ones included once let through. */
    public int renewCallsFinished() {
        return renewsFinished.get();
    }

    /** All round trips so far. */
    public int totalCalls() {
        return acquires.get() + releases.get() + handOvers.get() + reads.get() + renewBatchSizes.size();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, io.fencelock.LockMetadata.NONE);
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, io.fencelock.LockMetadata metadata) {
        acquires.incrementAndGet();
        if (acquiresCut) {
            throw new LockBackendException("acquire cut off by the TCK (simulated lost connection)", true);
        }
        // read first: a compareAndSet takes the cache line exclusively even when it fails, on every acquire
        if (interruptNextAcquire.get() && interruptNextAcquire.compareAndSet(true, false)) {
            Thread.currentThread().interrupt();
        }
        return refusalCounted(answered(delegate.tryAcquire(name, leaseId, ttl, metadata)));
    }

    @Override
    public AcquireResult tryAcquireShared(
            String name,
            String leaseId,
            Duration ttl,
            io.fencelock.spi.SharedRequest request,
            io.fencelock.LockMetadata metadata) {
        acquires.incrementAndGet();
        if (acquiresCut) {
            throw new LockBackendException("acquire cut off by the TCK (simulated lost connection)", true);
        }
        return refusalCounted(answered(delegate.tryAcquireShared(name, leaseId, ttl, request, metadata)));
    }

    private AcquireResult refusalCounted(AcquireResult answer) {
        if (!answer.acquired()) {
            refusals.incrementAndGet();
            if (answer.queuedAs() != null && !answer.queuedGrant()) {
                queuedRefusals.incrementAndGet();
            }
        }
        return answer;
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        return answered(delegate.downgrade(name, leaseId, ttl));
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        renewBatchSizes.add(requests.size());
        try {
            return renewThrough(requests);
        } finally {
            renewsFinished.incrementAndGet();
        }
    }

    private List<RenewResult> renewThrough(List<RenewRequest> requests) {
        CountDownLatch gate = renewalGate;
        if (gate != null) {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("stalled renewal interrupted", e, true);
            }
        }
        if (renewalsCut) {
            throw new LockBackendException("renewal cut off by the TCK (simulated lost connection)", true);
        }
        return answered(delegate.renew(requests));
    }

    @Override
    public boolean release(String name, String leaseId) {
        return release(name, leaseId, GrantKind.EITHER);
    }

    @Override
    public boolean release(String name, String leaseId, GrantKind grant) {
        releases.incrementAndGet();
        if (releasesCut) {
            throw new LockBackendException("release cut off by the TCK (simulated lost connection)", true);
        }
        return answered(delegate.release(name, leaseId, grant));
    }

    /** A hand-over is one round trip that both releases and acquires: counted on its own, cut off with either. */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, io.fencelock.LockMetadata metadata) {
        handOvers.incrementAndGet();
        if (acquiresCut || releasesCut) {
            throw new LockBackendException("hand-over cut off by the TCK (simulated lost connection)", true);
        }
        return answered(delegate.handOver(name, fromLeaseId, leaseId, ttl, metadata));
    }

    public int handOverCalls() {
        return handOvers.get();
    }

    private <T> T answered(T answer) {
        if (answersLost) {
            throw new LockBackendException(
                    "answer lost by the TCK after the backend acted (indeterminate outcome)", true);
        }
        return answer;
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        reads.incrementAndGet();
        return delegate.inspect(name);
    }

    @Override
    public List<LockInfo> list(String prefix) {
        reads.incrementAndGet();
        return delegate.list(prefix);
    }

    @Override
    public Duration maxTtl() {
        return delegate.maxTtl();
    }

    @Override
    public Set<Capability> capabilities() {
        return delegate.capabilities();
    }

    @Override
    @SuppressWarnings("deprecation") // passes on a backend's own subscriptions too
    public WakeUpSubscription subscribe(String name, Runnable onRelease) {
        return delegate.subscribe(name, onRelease);
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return delegate.releaseFeed();
    }

    @Override
    public int purgeFree(Duration freeFor) {
        return delegate.purgeFree(freeFor);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
