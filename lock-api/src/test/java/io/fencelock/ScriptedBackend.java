package io.fencelock;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** The in-memory backend with counters, and failures the engine's tests switch on. */
final class ScriptedBackend implements LockBackend {
    final InMemoryLockBackend delegate;
    final List<Integer> renewBatches = new CopyOnWriteArrayList<>();
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger grants = new AtomicInteger();
    final AtomicInteger releases = new AtomicInteger();
    /** The lease ids of every release asked, in order. */
    final List<String> releasedLeases = new CopyOnWriteArrayList<>();
    /** Which call granted each lease, as renewals and releases said it: lease id to kind. */
    final Map<String, GrantKind> renewedAs = new ConcurrentHashMap<>();

    final Map<String, GrantKind> releasedAs = new ConcurrentHashMap<>();
    /** The lease ids of refused attempts, in order. */
    final List<String> refusedLeases = new CopyOnWriteArrayList<>();
    /** The lease ids of refused attempts whose refusal queued the client under that lease, in order. */
    final List<String> queuedLeases = new CopyOnWriteArrayList<>();
    /** Names the engine told the feed it waits for ({@code watch}), each time. */
    final AtomicInteger watches = new AtomicInteger();

    final AtomicInteger failingRenews = new AtomicInteger();
    final AtomicInteger failingReleases = new AtomicInteger();
    /** The next acquire is applied, and then its answer is lost. */
    final AtomicBoolean loseNextAcquireAnswer = new AtomicBoolean();
    /** Hand-overs asked (each also counts as an attempt: it asks the backend for a grant). */
    final AtomicInteger handOvers = new AtomicInteger();
    /** The next hand-over is applied, and then its answer is lost. */
    final AtomicBoolean loseNextHandOverAnswer = new AtomicBoolean();
    /** The next renewal is applied, and then its answer is lost. */
    final AtomicBoolean loseNextRenewAnswer = new AtomicBoolean();
    /** Runs inside a hand-over before the backend applies it: the hand-over is slow. */
    volatile Runnable duringHandOver = () -> {};
    /** Runs inside an acquire attempt before the backend answers: the attempt is slow. */
    volatile Runnable duringAcquire = () -> {};
    /** Runs inside an acquire attempt after the backend applied it, before the answer: the answer is slow. */
    volatile Runnable beforeAcquireAnswer = () -> {};
    /** Runs inside a renewal after the backend applied it: the answer is slow. */
    volatile Runnable beforeRenewAnswer = () -> {};

    /** The feed's grants are kept back until {@link #tellLateGrants()}: a grant heard late. */
    volatile boolean grantsLate;

    private final List<Runnable> lateGrants = new CopyOnWriteArrayList<>();
    private final boolean signals;

    ScriptedBackend(InMemoryLockBackend delegate, boolean signals) {
        this.delegate = delegate;
        this.signals = signals;
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        attempts.incrementAndGet();
        duringAcquire.run();
        AcquireResult r = delegate.tryAcquire(name, leaseId, ttl, metadata);
        beforeAcquireAnswer.run();
        if (loseNextAcquireAnswer.getAndSet(false)) {
            throw new LockBackendException("answer lost (the request was applied)", true);
        }
        if (r.acquired()) {
            grants.incrementAndGet();
        } else {
            refusedLeases.add(leaseId);
            if (leaseId.equals(r.queuedAs()) && !r.queuedGrant()) {
                queuedLeases.add(leaseId);
            }
        }
        return r;
    }

    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, io.fencelock.spi.SharedRequest request, LockMetadata metadata) {
        attempts.incrementAndGet();
        AcquireResult r = delegate.tryAcquireShared(name, leaseId, ttl, request, metadata);
        if (r.acquired()) {
            grants.incrementAndGet();
        }
        return r;
    }

    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        attempts.incrementAndGet();
        handOvers.incrementAndGet();
        if (failingReleases.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new LockBackendException("connection lost", true);
        }
        duringHandOver.run();
        AcquireResult r = delegate.handOver(name, fromLeaseId, leaseId, ttl, metadata);
        if (loseNextHandOverAnswer.getAndSet(false)) {
            throw new LockBackendException("answer lost (the hand-over was applied)", true);
        }
        if (r.acquired()) {
            grants.incrementAndGet();
        }
        return r;
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        return delegate.downgrade(name, leaseId, ttl);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        renewBatches.add(requests.size());
        requests.forEach(r -> renewedAs.put(r.leaseId(), r.grant()));
        if (failingRenews.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new LockBackendException("connection lost", true);
        }
        List<RenewResult> results = delegate.renew(requests);
        if (loseNextRenewAnswer.getAndSet(false)) {
            throw new LockBackendException("answer lost (the renewal was applied)", true);
        }
        beforeRenewAnswer.run();
        return results;
    }

    @Override
    public boolean release(String name, String leaseId, GrantKind grant) {
        releasedAs.put(leaseId, grant);
        return release(name, leaseId);
    }

    @Override
    public boolean release(String name, String leaseId) {
        releases.incrementAndGet();
        releasedLeases.add(leaseId);
        if (failingReleases.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new LockBackendException("connection lost", true);
        }
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

    /** Capabilities of the in-memory backend this one does not declare (set before a client is made). */
    final Set<Capability> withheld = java.util.EnumSet.noneOf(Capability.class);

    @Override
    public Set<Capability> capabilities() {
        return delegate.capabilities().stream()
                .filter(c -> signals || c != Capability.WAKE_ON_RELEASE)
                .filter(c -> !withheld.contains(c))
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return signals ? delegate.releaseFeed().map(LateGrants::new) : Optional.empty();
    }

    /** Tells the grants kept back, on the caller's thread. */
    void tellLateGrants() {
        lateGrants.forEach(Runnable::run);
        lateGrants.clear();
    }

    /** The in-memory feed, its grants kept back while {@link #grantsLate}. */
    private final class LateGrants implements ReleaseFeed {
        private final ReleaseFeed feed;

        LateGrants(ReleaseFeed feed) {
            this.feed = feed;
        }

        @Override
        public void open(Sink engine) {
            feed.open(new Sink() {
                @Override
                public void released(String name) {
                    engine.released(name);
                }

                @Override
                public void granted(String name, String leaseId, long token, java.time.Instant expiresAt) {
                    if (grantsLate) {
                        lateGrants.add(() -> engine.granted(name, leaseId, token, expiresAt));
                    } else {
                        engine.granted(name, leaseId, token, expiresAt);
                    }
                }

                @Override
                public void broken(Throwable cause) {
                    engine.broken(cause);
                }

                @Override
                public void resumed() {
                    engine.resumed();
                }
            });
        }

        @Override
        public boolean needsReading() {
            return feed.needsReading();
        }

        @Override
        public void read(Duration max) {
            feed.read(max);
        }

        @Override
        public void watch(String name) {
            watches.incrementAndGet();
            feed.watch(name);
        }

        @Override
        public void unwatch(String name) {
            feed.unwatch(name);
        }

        @Override
        public void close() {
            feed.close();
        }
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
