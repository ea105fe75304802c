package io.fencelock.bench.jmh;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A backend that grants every attempt at once and frees every release, with no store behind it: what
 * an acquire + release costs through the engine on it is the engine's own cost, with nothing of a
 * store's (the in-memory backend's lock and map) mixed in. Not a lock: two holders of one name both
 * get it.
 */
public final class GrantingBackend implements LockBackend {
    /** The server expiry it reports: fixed, since building an Instant per grant would be a store's cost. */
    private static final Instant FAR = Instant.parse("2100-01-01T00:00:00Z");

    private final AtomicLong tokens = new AtomicLong();

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return AcquireResult.granted(tokens.incrementAndGet(), FAR);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        List<RenewResult> results = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            results.add(RenewResult.renewed(tokens.get(), FAR));
        }
        return results;
    }

    @Override
    public boolean release(String name, String leaseId) {
        return true;
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return Optional.empty();
    }

    @Override
    public List<LockInfo> list(String prefix) {
        return List.of();
    }

    @Override
    public Set<Capability> capabilities() {
        return Set.of(Capability.FENCING);
    }

    @Override
    public void close() {}
}
