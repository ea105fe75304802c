package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.fencelock.spi.WakeUpSubscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hears releases for one backend on its client's watch service: each subscription is one etcd watch
 * of its key for deletes (a delete is a release, a revocation of the holder's lease or an expiry),
 * opened without a start revision, so it is a <i>synced</i> watcher and etcd delivers the delete at
 * once, not on its 100 ms catch-up of unsynced watchers.
 *
 * <p>The engine subscribes before its first attempt, but opening a watch is asynchronous: a delete
 * between a failed attempt and the watch's creation would be missed. So every failed attempt records
 * the revision it saw, and when the watch's creation is confirmed at revision {@code c}, a waiter
 * whose attempt saw an older revision is woken once (a spurious wake costs one attempt). A watch that
 * fails (lost leader, closed stream) wakes its waiter too; the engine also polls.
 */
final class ReleaseWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Watch watch;
    private final String where;
    private final ConcurrentHashMap<String, Set<Subscription>> subscribers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ReleaseWatcher(Watch watch, String where) {
        this.watch = watch;
        this.where = where;
    }

    WakeUpSubscription subscribe(String name, ByteSequence key, Runnable onRelease) {
        Subscription s = new Subscription(name, onRelease);
        subscribers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(s);
        try {
            s.watcher = watch.watch(key, WatchOption.builder().withNoPut(true).withCreateNotify(true)
                    .withRequireLeader(true).build(), Watch.listener(s::onNext, s::onError));
        } catch (RuntimeException e) {
            log.warn("fencelock: cannot watch '{}' on {} ({}); its waiters poll", name, where, e.toString());
        }
        return s;
    }

    /** A failed attempt on {@code name} saw the key held at {@code revision}. */
    void heldAt(String name, long revision) {
        Set<Subscription> set = subscribers.get(name);
        if (set != null) {
            set.forEach(s -> s.heldAt(revision));
        }
    }

    /** Whether every watch of {@code name} has been confirmed by the server (for tests). */
    boolean confirmed(String name) {
        Set<Subscription> set = subscribers.get(name);
        return set != null && !set.isEmpty() && set.stream().allMatch(Subscription::confirmed);
    }

    @Override
    public void close() {
        closed = true;
        subscribers.values().forEach(set -> set.forEach(Subscription::close));
        subscribers.clear();
    }

    private final class Subscription implements WakeUpSubscription {
        private final String name;
        private final Runnable onRelease;
        volatile Watch.Watcher watcher;
        private final ReentrantLock lock = new ReentrantLock();
        private long createdAt; // guarded by lock; 0 until the watch is confirmed
        private long lastHeld; // guarded by lock; the newest revision a failed attempt saw before that
        private volatile boolean done;

        Subscription(String name, Runnable onRelease) {
            this.name = name;
            this.onRelease = onRelease;
        }

        void heldAt(long revision) {
            lock.lock();
            try {
                if (createdAt == 0) {
                    lastHeld = Math.max(lastHeld, revision);
                }
            } finally {
                lock.unlock();
            }
        }

        boolean confirmed() {
            lock.lock();
            try {
                return createdAt != 0;
            } finally {
                lock.unlock();
            }
        }

        void onNext(WatchResponse r) {
            if (r.isCreatedNotify()) {
                boolean missed;
                lock.lock();
                try {
                    createdAt = r.getHeader().getRevision();
                    missed = lastHeld != 0 && lastHeld < createdAt;
                } finally {
                    lock.unlock();
                }
                if (missed) {
                    fire();
                }
                return;
            }
            for (WatchEvent e : r.getEvents()) {
                if (e.getEventType() == WatchEvent.EventType.DELETE) {
                    fire();
                    return;
                }
            }
        }

        void onError(Throwable t) {
            if (!done && !closed) {
                log.debug("fencelock: the watch of '{}' on {} failed: {}", name, where, t.toString());
                fire();
            }
        }

        void fire() {
            if (done) {
                return;
            }
            try {
                onRelease.run();
            } catch (RuntimeException e) {
                log.warn("fencelock: a release callback for '{}' failed", name, e);
            }
        }

        @Override
        public void close() {
            done = true;
            subscribers.computeIfPresent(name, (n, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
            Watch.Watcher w = watcher;
            if (w != null) {
                try {
                    w.close();
                } catch (RuntimeException e) {
                    log.debug("fencelock: closing the watch of '{}' failed: {}", name, e.toString());
                }
            }
        }
    }
}
