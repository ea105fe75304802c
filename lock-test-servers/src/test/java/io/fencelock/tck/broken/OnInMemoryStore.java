package io.fencelock.tck.broken;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A broken backend built on the in-memory backend of a named store (the clients of one "server" share it):
 * everything its flaw does not touch goes to the store. Shared locks are not what these backends are about,
 * so they do not declare them.
 */
abstract class OnInMemoryStore implements LockBackend {
    final InMemoryLockBackend store;

    OnInMemoryStore(String storeName) {
        this.store = InMemoryLockBackend.builder().store(storeName).build();
    }

    /** What the flaw's backend leaves out of the store's capabilities, besides shared locks. */
    Set<Capability> withheld() {
        return Set.of();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        return store.tryAcquire(name, leaseId, ttl, metadata);
    }

    @Override
    public boolean release(String name, String leaseId) {
        return store.release(name, leaseId);
    }

    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        return store.handOver(name, fromLeaseId, leaseId, ttl, metadata);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        return store.renew(requests);
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return store.inspect(name);
    }

    @Override
    public List<LockInfo> list(String prefix) {
        return store.list(prefix);
    }

    @Override
    public int purgeFree(Duration freeFor) {
        return store.purgeFree(freeFor);
    }

    @Override
    public Set<Capability> capabilities() {
        Set<Capability> capabilities = EnumSet.copyOf(store.capabilities());
        capabilities.remove(Capability.SHARED_LOCKS);
        capabilities.remove(Capability.FAIR_ORDER);
        capabilities.removeAll(withheld());
        return capabilities;
    }

    @Override
    public void close() {
        store.close();
    }
}
