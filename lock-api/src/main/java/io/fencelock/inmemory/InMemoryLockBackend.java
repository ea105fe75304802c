package io.fencelock.inmemory;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A lock backend in this JVM's memory, for unit tests and single-process use: the same contract as
 * the server backends (the TCK certifies it), without a server. Expiry runs on a monotonic clock
 * ({@link System#nanoTime()}, or one the test controls); tokens come from one counter per store, so
 * they never regress, also after a purge; release is owner-checked; all renewals of a call are one
 * step; releases are signalled to waiters. Semaphores, read-write locks and fair waiting
 * ({@link Capability#SHARED_LOCKS}, {@link Capability#FAIR_ORDER}) keep a name's shared grants and
 * waiters beside its mutex record ({@link SharedGrants}).
 *
 * <p>Backends opened on the same {@linkplain Builder#store named store} share its locks, as clients of
 * one server do (the provider opens {@code inmemory:<store name>} that way). A store lives as long as
 * the JVM; nothing survives it, so tokens are not durable.
 *
 * <pre>{@code
 * LockClient locks = LockClient.create(InMemoryLockBackend.builder().build(), LockOptions.defaults());
 * }</pre>
 */
public final class InMemoryLockBackend implements LockBackend {
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(EnumSet.of(
            Capability.FENCING,
            Capability.SERVER_TIME,
            Capability.WAKE_ON_RELEASE,
            Capability.BATCH_RENEW,
            Capability.TOKEN_PERIOD,
            Capability.LINEARIZABLE,
            Capability.PURGE_FREE,
            Capability.METADATA,
            Capability.EXTENDABLE_TTL,
            Capability.SHARED_LOCKS,
            Capability.FAIR_ORDER,
            Capability.HAND_OVER,
            Capability.GRANT_ON_RELEASE));
    private static final Map<String, Store> NAMED = new ConcurrentHashMap<>();

    private final Store store;
    private final Feed feed = new Feed();
    private volatile boolean closed;

    private InMemoryLockBackend(Store store) {
        this.store = store;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a backend: which store, and which clock. */
    public static final class Builder {
        private String store;
        private LongSupplier clock;

        private Builder() {}

        /**
         * Shares the store of this name with every backend of this JVM opened on it (the store is made
         * on first use); without it, the backend has a private store of its own.
         */
        public Builder store(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("store name " + (name == null ? "null" : "'" + name + "'")
                        + " must have at least one non-blank character");
            }
            this.store = name;
            return this;
        }

        /**
         * The monotonic clock in nanoseconds that decides expiry ({@link System#nanoTime()} by default),
         * for tests that move time themselves. A named store keeps the clock it was made with.
         */
        public Builder clock(LongSupplier nanoTime) {
            this.clock = Objects.requireNonNull(nanoTime, "clock");
            return this;
        }

        public InMemoryLockBackend build() {
            LongSupplier c = clock != null ? clock : System::nanoTime;
            if (store == null) {
                return new InMemoryLockBackend(new Store(c));
            }
            Store shared = NAMED.computeIfAbsent(store, n -> new Store(c));
            if (clock != null && shared.clock != clock) {
                throw new IllegalArgumentException("store '" + store
                        + "' already runs on another clock: a named store keeps the clock it was made with");
            }
            return new InMemoryLockBackend(shared);
        }
    }

    /** One name's record; kept after release, so that the name's history (its last token) stays. */
    private static final class Entry {
        String leaseId; // null when released
        long token;
        long expiresAt;
        long tokenIssuedAt;
        long grantedAt;
        LockMetadata metadata = LockMetadata.NONE;
        final SharedGrants shared = new SharedGrants();
        /** Clients waiting for the mutex, in order of their first refusal, each under one lease (GRANT_ON_RELEASE). */
        final ArrayDeque<Queued> queue = new ArrayDeque<>();
        /** The client whose queued lease the last release granted, while that grant stands; else null. */
        Feed grantedTo;

        Queued queuedBy(Feed feed) {
            for (Queued q : queue) {
                if (q.feed == feed) {
                    return q;
                }
            }
            return null;
        }
    }

    /** A waiting client's place in a name's queue: the lease, TTL and metadata a release grants it, and since when. */
    private static final class Queued {
        final Feed feed;
        String leaseId;
        long ttlNanos;
        LockMetadata metadata;
        long queuedAt;

        Queued(Feed feed) {
            this.feed = feed;
        }

        void set(String leaseId, Duration ttl, LockMetadata metadata, long now) {
            this.leaseId = leaseId;
            this.ttlNanos = ttl.toNanos();
            this.metadata = metadata;
            this.queuedAt = now;
        }
    }

    /** Locks, the token counter and the listening feeds of one store; every step under one lock, never across a call out. */
    private static final class Store {
        final LongSupplier clock;
        final long nanoBase;
        final Instant wallBase = Instant.now();
        final ReentrantLock lock = new ReentrantLock();
        final TreeMap<String, Entry> entries = new TreeMap<>(); // guarded by lock; Java's order of names
        long lastToken; // guarded by lock
        final Set<Feed> feeds = new CopyOnWriteArraySet<>();

        Store(LongSupplier clock) {
            this.clock = clock;
            this.nanoBase = clock.getAsLong();
        }

        Instant wall(long nanos) {
            return wallBase.plusNanos(nanos - nanoBase);
        }

        static boolean held(Entry e, long now) {
            return e.leaseId != null && e.expiresAt - now > 0;
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        requireOpen();
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            Entry e = store.entries.get(name);
            if (e != null && Store.held(e, now)) {
                return refused(e, name, leaseId, ttl, metadata, now);
            }
            if (e != null) {
                e.shared.requireKind(name, LockMode.EXCLUSIVE, 0, now);
                Duration fairHolder = e.shared.holderRemaining(now);
                if (fairHolder != null) {
                    return AcquireResult.held(fairHolder); // a fair mutex's holder: the same kind, held
                }
            }
            if (e == null) {
                e = new Entry();
                store.entries.put(name, e);
            }
            grant(e, leaseId, ttl, metadata, now);
            return AcquireResult.granted(e.token, store.wall(e.expiresAt));
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        requireOpen();
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            Entry e = store.entries.get(name);
            if (e == null || !Store.held(e, now) || !fromLeaseId.equals(e.leaseId)) {
                return AcquireResult.held(e != null && Store.held(e, now) ? Duration.ofNanos(e.expiresAt - now) : null);
            }
            grant(e, leaseId, ttl, metadata, now);
            return AcquireResult.granted(e.token, store.wall(e.expiresAt));
        } finally {
            store.lock.unlock();
        }
    }

    /**
     * A refusal by a live holder. A client that waits for the name (its feed watches it) is queued under this
     * attempt's lease, or stays queued under its earlier one; a place older than a quarter of its TTL takes the
     * new lease, so that a grant's validity, counted by the client from the queuing attempt, is not mostly gone.
     */
    private AcquireResult refused(Entry e, String name, String leaseId, Duration ttl, LockMetadata metadata, long now) {
        Duration remaining = Duration.ofNanos(e.expiresAt - now);
        if (!feed.watches(name)) {
            return AcquireResult.held(remaining);
        }
        if (e.grantedTo == feed) {
            return AcquireResult.queuedGrant(e.leaseId, e.token, store.wall(e.expiresAt));
        }
        Queued q = e.queuedBy(feed);
        if (q == null) {
            q = new Queued(feed);
            e.queue.addLast(q);
            q.set(leaseId, ttl, metadata, now);
        } else if (now - q.queuedAt > q.ttlNanos / 4) {
            q.set(leaseId, ttl, metadata, now);
        }
        return AcquireResult.queued(remaining, q.leaseId);
    }

    /** A grant takes its client out of the name's queue. */
    private void grant(Entry e, String leaseId, Duration ttl, LockMetadata metadata, long now) {
        e.queue.removeIf(q -> q.feed == feed);
        e.grantedTo = null;
        e.leaseId = leaseId;
        e.token = ++store.lastToken;
        e.tokenIssuedAt = now;
        e.grantedAt = now;
        e.metadata = metadata;
        e.expiresAt = now + ttl.toNanos();
    }

    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        requireOpen();
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            Entry e = store.entries.computeIfAbsent(name, n -> new Entry());
            LockMode kind = SharedGrants.kindOf(request.mode());
            Duration mutexHeld = null;
            if (Store.held(e, now)) { // a mutex holder
                if (kind != LockMode.EXCLUSIVE) {
                    throw new IllegalArgumentException("lock '" + name + "' is a mutex; a request for "
                            + SharedGrants.describe(kind, request.limit()) + " is refused");
                }
                mutexHeld = Duration.ofNanos(e.expiresAt - now); // a fair mutex request still takes its place
            }
            e.shared.requireKind(name, kind, request.limit(), now);
            SharedGrants.Outcome out = e.shared.tryGrant(
                    leaseId, ttl.toNanos(), request, metadata, now, () -> ++store.lastToken, mutexHeld);
            if (out.granted() == null) {
                return AcquireResult.held(out.remaining());
            }
            e.token = out.granted().token;
            e.expiresAt = Math.max(e.expiresAt, out.granted().expiresAt);
            return AcquireResult.granted(out.granted().token, store.wall(out.granted().expiresAt));
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        requireOpen();
        RenewResult result;
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            Entry e = store.entries.get(name);
            SharedGrants.Holder h = e == null ? null : e.shared.holder(leaseId, now);
            if (h == null || h.mode != LockMode.WRITE && h.mode != LockMode.READ) {
                return RenewResult.rejected();
            }
            h.mode = LockMode.READ; // one step: the name is never free, so no writer slips in
            h.expiresAt = now + ttl.toNanos();
            e.expiresAt = Math.max(e.expiresAt, h.expiresAt);
            result = RenewResult.renewed(h.token, store.wall(h.expiresAt));
        } finally {
            store.lock.unlock();
        }
        store.feeds.forEach(f -> f.released(name)); // readers may enter
        return result;
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        requireOpen();
        List<RenewResult> results = new ArrayList<>(requests.size());
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            for (RenewRequest r : requests) {
                Entry e = store.entries.get(r.name());
                SharedGrants.Holder h = e == null ? null : e.shared.holder(r.leaseId(), now);
                if (h != null) {
                    h.expiresAt = now + r.ttl().toNanos();
                    e.expiresAt = Math.max(e.expiresAt, h.expiresAt);
                    if (r.tokenPeriod() != null
                            && now - h.tokenIssuedAt >= r.tokenPeriod().toNanos()) {
                        h.token = e.token = ++store.lastToken;
                        h.tokenIssuedAt = now;
                    }
                    results.add(RenewResult.renewed(h.token, store.wall(h.expiresAt)));
                    continue;
                }
                if (e == null || !r.leaseId().equals(e.leaseId) || !Store.held(e, now)) {
                    results.add(RenewResult.rejected());
                    continue;
                }
                e.expiresAt = now + r.ttl().toNanos();
                if (r.tokenPeriod() != null
                        && now - e.tokenIssuedAt >= r.tokenPeriod().toNanos()) {
                    e.token = ++store.lastToken;
                    e.tokenIssuedAt = now;
                }
                results.add(RenewResult.renewed(e.token, store.wall(e.expiresAt)));
            }
        } finally {
            store.lock.unlock();
        }
        return results;
    }

    @Override
    public boolean release(String name, String leaseId) {
        requireOpen();
        boolean freed;
        Granted next = null;
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            Entry e = store.entries.get(name);
            if (e != null && (e.shared.isWaiter(leaseId) || e.shared.holder(leaseId, now) != null)) {
                // a shared grant, or a withdrawn intent or queue place (false: nothing freed, but readers may enter)
                freed = e.shared.remove(leaseId, now);
            } else if (e == null || !leaseId.equals(e.leaseId) || !Store.held(e, now)) {
                if (e != null) {
                    e.queue.removeIf(q -> leaseId.equals(q.leaseId)); // a queue place, withdrawn
                }
                return false;
            } else {
                e.leaseId = null;
                e.metadata = LockMetadata.NONE;
                e.expiresAt = now;
                e.grantedTo = null;
                freed = true;
                next = grantQueued(e, name, now);
            }
        } finally {
            store.lock.unlock();
        }
        if (next != null) {
            next.feed().granted(name, next.leaseId(), next.token(), next.expiresAt()); // a waiting client holds it
        } else {
            store.feeds.forEach(f -> f.released(name));
        }
        return freed;
    }

    /** The first queued client still waiting for the name gets the grant; the places of clients gone are dropped. */
    private record Granted(Feed feed, String leaseId, long token, Instant expiresAt) {}

    private Granted grantQueued(Entry e, String name, long now) {
        Queued q;
        while ((q = e.queue.pollFirst()) != null) {
            if (store.feeds.contains(q.feed) && q.feed.watches(name)) {
                e.leaseId = q.leaseId;
                e.token = ++store.lastToken;
                e.tokenIssuedAt = now;
                e.grantedAt = now;
                e.metadata = q.metadata;
                e.expiresAt = now + q.ttlNanos;
                e.grantedTo = q.feed;
                return new Granted(q.feed, q.leaseId, e.token, store.wall(e.expiresAt));
            }
        }
        return null;
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        requireOpen();
        store.lock.lock();
        try {
            Entry e = store.entries.get(name);
            return e == null ? Optional.empty() : Optional.of(info(name, e, store.clock.getAsLong()));
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public List<LockInfo> list(String prefix) {
        requireOpen();
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            List<LockInfo> out = new ArrayList<>();
            for (Map.Entry<String, Entry> e :
                    store.entries.tailMap(prefix, true).entrySet()) {
                if (!e.getKey().startsWith(prefix)) {
                    break;
                }
                if (Store.held(e.getValue(), now)
                        || !e.getValue().shared.holders(now, store::wall).isEmpty()) {
                    out.add(info(e.getKey(), e.getValue(), now));
                }
            }
            return out;
        } finally {
            store.lock.unlock();
        }
    }

    private LockInfo info(String name, Entry e, long now) {
        List<LockHolder> shared = e.shared.holders(now, store::wall);
        if (!shared.isEmpty()) {
            LockHolder latest = shared.stream()
                    .max(java.util.Comparator.comparingLong(LockHolder::token))
                    .orElseThrow();
            return new LockInfo(
                    name,
                    true,
                    latest.leaseId(),
                    e.token,
                    latest.expiresAt(),
                    store.wall(now),
                    latest.metadata(),
                    latest.heldSince(),
                    e.shared.shownKind(now),
                    e.shared.limit(),
                    shared);
        }
        boolean held = Store.held(e, now);
        return new LockInfo(
                name,
                held,
                held ? e.leaseId : null,
                e.token,
                held ? store.wall(e.expiresAt) : null,
                store.wall(now),
                held ? e.metadata : LockMetadata.NONE,
                held ? store.wall(e.grantedAt) : null);
    }

    /** Deletes records free for at least {@code freeFor}; tokens come from the store's counter, so a later grant still exceeds them. */
    @Override
    public int purgeFree(Duration freeFor) {
        requireOpen();
        store.lock.lock();
        try {
            long now = store.clock.getAsLong();
            long min = freeFor.toNanos();
            int before = store.entries.size();
            store.entries
                    .values()
                    .removeIf(e -> !Store.held(e, now) && !e.shared.live(now) && now - e.expiresAt >= min);
            return before - store.entries.size();
        } finally {
            store.lock.unlock();
        }
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(feed);
    }

    @Override
    public void close() {
        closed = true;
        feed.close();
    }

    private void requireOpen() {
        if (closed) {
            throw new LockBackendException("this in-memory lock backend is closed", false);
        }
    }

    @Override
    public String toString() {
        return "InMemoryLockBackend"
                + NAMED.entrySet().stream()
                        .filter(e -> e.getValue() == store)
                        .map(e -> "[store " + e.getKey() + "]")
                        .findFirst()
                        .orElse("[private store]");
    }

    /** Hears the store's releases, on the releasing thread. */
    private final class Feed implements ReleaseFeed {
        private volatile Sink sink;
        /** The names a waiter of this client waits for: its refusals queue it there. */
        private final Set<String> watched = ConcurrentHashMap.newKeySet();

        boolean watches(String name) {
            return watched.contains(name);
        }

        @Override
        public void watch(String name) {
            watched.add(name);
        }

        /** Nobody here waits for the name any more: the client leaves its queue. */
        @Override
        public void unwatch(String name) {
            watched.remove(name);
            store.lock.lock();
            try {
                Entry e = store.entries.get(name);
                if (e != null) {
                    e.queue.removeIf(q -> q.feed == this);
                }
            } finally {
                store.lock.unlock();
            }
        }

        void granted(String name, String leaseId, long token, Instant expiresAt) {
            Sink s = sink;
            if (s != null) {
                s.granted(name, leaseId, token, expiresAt);
            }
        }

        @Override
        public void open(Sink sink) {
            requireOpen();
            this.sink = sink;
            store.feeds.add(this);
        }

        void released(String name) {
            Sink s = sink;
            if (s != null) {
                s.released(name);
            }
        }

        @Override
        public void close() {
            store.feeds.remove(this);
            sink = null;
        }

        @Override
        public String toString() {
            return InMemoryLockBackend.this.toString();
        }
    }
}
