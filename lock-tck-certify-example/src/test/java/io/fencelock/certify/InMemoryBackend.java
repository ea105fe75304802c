package io.fencelock.certify;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A stand-in for the engine's in-memory backend until it lands in lock-api: the smallest honest
 * {@link LockBackend} (expiry on a monotonic clock, one token counter that never goes back,
 * owner-checked release, batched renew with the token period, purge of free records), so that this
 * module shows what certifying one's own backend takes. Each instance is one client of a shared
 * {@link Store}, the "server".
 */
final class InMemoryBackend implements LockBackend {
    /**
     * Each call first waits this long, as a call to a server on loopback takes: the TCK's history
     * checker compares operations pairwise per name, and a backend answering in nanoseconds would
     * fill a timed race with more operations than it can judge in reasonable time.
     */
    private static final long ROUND_TRIP_NANOS = 200_000;

    /** The shared state: every lock record and the token counter, behind one lock (no I/O is done under it). */
    static final class Store {
        private final ReentrantLock lock = new ReentrantLock();
        private final Map<String, Lease> records = new HashMap<>();
        private final long originNanos = System.nanoTime();
        private final Instant origin = Instant.now();
        private long lastToken;
    }

    /** One name's record; {@code leaseId == null} when free. Times are {@link System#nanoTime()} values. */
    private static final class Lease {
        String leaseId;
        long token;
        long expiresAt;
        long tokenIssuedAt;
        long freeSince;
    }

    private final Store store;

    InMemoryBackend(Store store) {
        this.store = store;
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            Lease record = store.records.computeIfAbsent(name, n -> new Lease());
            if (held(record, now) && !record.leaseId.equals(leaseId)) {
                return AcquireResult.held(Duration.ofNanos(record.expiresAt - now));
            }
            record.leaseId = leaseId;
            record.token = ++store.lastToken;
            record.tokenIssuedAt = now;
            record.expiresAt = now + ttl.toNanos();
            return AcquireResult.granted(record.token, instant(record.expiresAt));
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            List<RenewResult> results = new ArrayList<>(requests.size());
            for (RenewRequest r : requests) {
                Lease record = store.records.get(r.name());
                if (record == null || !held(record, now) || !record.leaseId.equals(r.leaseId())) {
                    results.add(RenewResult.rejected());
                    continue;
                }
                if (r.tokenPeriod() != null && now - record.tokenIssuedAt >= r.tokenPeriod().toNanos()) {
                    record.token = ++store.lastToken;
                    record.tokenIssuedAt = now;
                }
                record.expiresAt = now + r.ttl().toNanos();
                results.add(RenewResult.renewed(record.token, instant(record.expiresAt)));
            }
            return results;
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public boolean release(String name, String leaseId) {
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            Lease record = store.records.get(name);
            if (record == null || !held(record, now) || !record.leaseId.equals(leaseId)) {
                return false;
            }
            record.leaseId = null;
            record.freeSince = now;
            return true;
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            Lease record = store.records.get(name);
            return record == null ? Optional.empty() : Optional.of(info(name, record, now));
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public List<LockInfo> list(String prefix) {
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            return store.records.entrySet().stream()
                    .filter(e -> e.getKey().startsWith(prefix) && held(e.getValue(), now))
                    .map(e -> info(e.getKey(), e.getValue(), now))
                    .sorted((a, b) -> a.name().compareTo(b.name()))
                    .toList();
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public int purgeFree(Duration freeFor) {
        if (freeFor == null || freeFor.isNegative()) {
            throw new IllegalArgumentException("freeFor " + freeFor + " must be zero or positive");
        }
        roundTrip();
        store.lock.lock();
        try {
            long now = System.nanoTime();
            int before = store.records.size();
            // the token counter is global, so a purged name's next token still exceeds every earlier one
            store.records.values().removeIf(r -> !held(r, now) && now - freeSince(r) >= freeFor.toNanos());
            return before - store.records.size();
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.FENCING, Capability.SERVER_TIME, Capability.BATCH_RENEW, Capability.TOKEN_PERIOD,
                Capability.LINEARIZABLE, Capability.PURGE_FREE);
    }

    @Override
    public void close() {
        // one client of the store: nothing of its own to let go
    }

    private static void roundTrip() {
        LockSupport.parkNanos(ROUND_TRIP_NANOS);
    }

    private static boolean held(Lease record, long now) {
        return record.leaseId != null && now - record.expiresAt < 0;
    }

    private static long freeSince(Lease record) {
        return record.leaseId == null ? record.freeSince : record.expiresAt;
    }

    private LockInfo info(String name, Lease record, long now) {
        boolean held = held(record, now);
        return new LockInfo(name, held, held ? record.leaseId : null, record.token, held ? instant(record.expiresAt) : null,
                instant(now));
    }

    private Instant instant(long nanos) {
        return store.origin.plusNanos(nanos - store.originNanos);
    }
}
