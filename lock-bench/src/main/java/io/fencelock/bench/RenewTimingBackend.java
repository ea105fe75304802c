package io.fencelock.bench;

import io.fencelock.Capability;
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

/**
 * Times the watchdog's own renew calls, so the renewal workload measures a tick as it happens
 * instead of sending a second batch of the same rows beside it (which can deadlock on PostgreSQL).
 * Round trips are counted by the TCK's {@code InstrumentedBackend} underneath.
 */
final class RenewTimingBackend implements LockBackend {
    /** One renew call: how many leases, how long. */
    record Call(int size, long nanos) {
    }

    private final LockBackend delegate;
    private final List<Call> calls = new CopyOnWriteArrayList<>();

    RenewTimingBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    List<Call> calls() {
        return List.copyOf(calls);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        long start = System.nanoTime();
        try {
            return delegate.renew(requests);
        } finally {
            calls.add(new Call(requests.size(), System.nanoTime() - start));
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return delegate.tryAcquire(name, leaseId, ttl);
    }

    @Override
    public boolean release(String name, String leaseId) {
        return delegate.release(name, leaseId);
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return delegate.inspect(name);
    }

    @Override
    public List<LockInfo> list(String prefix) {
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
