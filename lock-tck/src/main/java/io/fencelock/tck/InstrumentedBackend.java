package io.fencelock.tck;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a real backend to count its round trips and, on request, to cut renewals off as a lost
 * connection would (the call fails with a retryable error and never reaches the server). Used by
 * properties about the engine: batching, lost signals, input validation before any I/O.
 */
public final class InstrumentedBackend implements LockBackend {
    private final LockBackend delegate;
    private final AtomicInteger acquires = new AtomicInteger();
    private final AtomicInteger releases = new AtomicInteger();
    private final AtomicInteger reads = new AtomicInteger();
    private final List<Integer> renewBatchSizes = new CopyOnWriteArrayList<>();
    private volatile boolean renewalsCut;

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

    public int acquireCalls() {
        return acquires.get();
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

    /** All round trips so far. */
    public int totalCalls() {
        return acquires.get() + releases.get() + reads.get() + renewBatchSizes.size();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        acquires.incrementAndGet();
        return delegate.tryAcquire(name, leaseId, ttl);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        renewBatchSizes.add(requests.size());
        if (renewalsCut) {
            throw new LockBackendException("renewal cut off by the TCK (simulated lost connection)", true);
        }
        return delegate.renew(requests);
    }

    @Override
    public boolean release(String name, String leaseId) {
        releases.incrementAndGet();
        return delegate.release(name, leaseId);
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
    public Set<Capability> capabilities() {
        return delegate.capabilities();
    }

    @Override
    public WakeUpSubscription subscribe(String name, Runnable onRelease) {
        return delegate.subscribe(name, onRelease);
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
