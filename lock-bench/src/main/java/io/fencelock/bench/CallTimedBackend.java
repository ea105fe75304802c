package io.fencelock.bench;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.spi.WakeUpSubscription;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A backend that adds up, per thread, the time spent inside its calls. The latency workload subtracts it
 * from each cycle: what is left is the time the caller spends around the provider's round trips (the
 * engine's, for fencelock; the bench's own loop, for the provider alone). That is a direct reading of
 * the engine's cost on the path, where the difference of two p50s carries both contenders' round-trip
 * noise. Per thread, so that a renewal on the client's renewer thread is not counted against a cycle.
 * Two clock reads per call, on fencelock and the provider alone alike.
 */
final class CallTimedBackend implements LockBackend {
    private final LockBackend delegate;
    private final ThreadLocal<long[]> spent = ThreadLocal.withInitial(() -> new long[1]);

    CallTimedBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    /** Nanoseconds the calling thread has spent inside this backend's calls so far. */
    long callingThreadNanos() {
        return spent.get()[0];
    }

    private <T> T timed(Supplier<T> call) {
        long start = System.nanoTime();
        try {
            return call.get();
        } finally {
            spent.get()[0] += System.nanoTime() - start;
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return timed(() -> delegate.tryAcquire(name, leaseId, ttl));
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        return timed(() -> delegate.tryAcquire(name, leaseId, ttl, metadata));
    }

    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        return timed(() -> delegate.tryAcquireShared(name, leaseId, ttl, request, metadata));
    }

    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        return timed(() -> delegate.handOver(name, fromLeaseId, leaseId, ttl, metadata));
    }

    @Override
    public boolean release(String name, String leaseId) {
        return timed(() -> delegate.release(name, leaseId));
    }

    @Override
    public boolean release(String name, String leaseId, GrantKind grant) {
        return timed(() -> delegate.release(name, leaseId, grant));
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        return timed(() -> delegate.downgrade(name, leaseId, ttl));
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        return timed(() -> delegate.renew(requests));
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return timed(() -> delegate.inspect(name));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        return timed(() -> delegate.list(prefix));
    }

    @Override
    public int purgeFree(Duration freeFor) {
        return timed(() -> delegate.purgeFree(freeFor));
    }

    @Override
    public Set<Capability> capabilities() {
        return delegate.capabilities();
    }

    @Override
    public Duration maxTtl() {
        return delegate.maxTtl();
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return delegate.releaseFeed();
    }

    @Override
    @SuppressWarnings("deprecation") // passes on a backend's own subscriptions too
    public WakeUpSubscription subscribe(String name, Runnable onRelease) {
        return delegate.subscribe(name, onRelease);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
