package io.fencelock.tck.broken;

import io.fencelock.Capability;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.ReleaseFeed;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The in-memory backend with wake-ups of its own: a release wakes only the client that was refused
 * first (a queue of clients per name, in order of their first refusal, as PostgreSQL's and Redis's
 * providers keep one). The seeded flaw: a client woken after its waiters stopped waiting drops the
 * wake-up, so the next client in the queue hears of the release only by its poll. The sound variant
 * passes the wake-up on to the next queued client.
 */
final class QueuedWakeUpBackend extends OnInMemoryStore {
    /** The queues of every backend of a store, by store and name: the clients of one server share them. */
    private static final ConcurrentHashMap<String, ConcurrentLinkedDeque<Feed>> QUEUES = new ConcurrentHashMap<>();

    private final String storeName;
    private final boolean passesOn;
    private final Feed feed = new Feed();

    QueuedWakeUpBackend(String storeName, boolean passesOn) {
        super(storeName);
        this.storeName = storeName;
        this.passesOn = passesOn;
    }

    private ConcurrentLinkedDeque<Feed> queue(String name) {
        return QUEUES.computeIfAbsent(storeName + "\n" + name, k -> new ConcurrentLinkedDeque<>());
    }

    /** Wakes the first queued client; where it no longer waits, the flawed variant stops there. */
    private void wakeNext(String name) {
        Feed next;
        while ((next = queue(name).pollFirst()) != null) {
            if (next.wake(name) || !passesOn) {
                return;
            }
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        AcquireResult result = store.tryAcquire(name, leaseId, ttl, metadata);
        ConcurrentLinkedDeque<Feed> queue = queue(name);
        if (result.acquired()) {
            queue.remove(feed);
        } else if (feed.watched.contains(name) && !queue.contains(feed)) {
            queue.addLast(feed);
        }
        return result;
    }

    @Override
    public boolean release(String name, String leaseId) {
        boolean freed = store.release(name, leaseId);
        if (freed) {
            wakeNext(name);
        }
        return freed;
    }

    /** The store's queued grants are not this backend's wake-up queue. */
    @Override
    Set<Capability> withheld() {
        return Set.of(Capability.GRANT_ON_RELEASE);
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(feed);
    }

    @Override
    public void close() {
        feed.close();
        super.close();
    }

    @Override
    public String toString() {
        return "QueuedWakeUpBackend[" + (passesOn ? "passes wake-ups on" : "drops wake-ups") + "]";
    }

    /** This client's wake-ups. */
    private static final class Feed implements ReleaseFeed {
        final Set<String> watched = ConcurrentHashMap.newKeySet();
        private volatile Sink sink;

        @Override
        public void open(Sink sink) {
            this.sink = sink;
        }

        @Override
        public void watch(String name) {
            watched.add(name);
        }

        @Override
        public void unwatch(String name) {
            watched.remove(name);
        }

        /** Whether a waiter of this client heard it. */
        boolean wake(String name) {
            Sink s = sink;
            if (s == null || !watched.contains(name)) {
                return false;
            }
            s.released(name);
            return true;
        }

        @Override
        public void close() {
            sink = null;
            watched.clear();
        }
    }
}
