package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.fencelock.spi.ReleaseFeed;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend, on its client's watch service: each name with waiters is one
 * etcd watch of its keys (the mutex key and the shared range, {@link EtcdRecords}) for deletes (a
 * release, a revocation of the holder's lease, an expiry, a withdrawn writer's intent) and for
 * downgrades (readers may enter), opened without a start revision, so it is a <i>synced</i> watcher
 * and etcd delivers the event at once, not on its 100 ms catch-up of unsynced watchers. Other puts
 * (grants, waiters, the guard) reach the client too (etcd filters puts only all or none) and are
 * ignored.
 *
 * <p>The engine watches a name before its first attempt, but opening a watch is asynchronous: a
 * delete between a failed attempt and the watch's creation would be missed. So every failed attempt
 * records the revision it saw, and when the watch's creation is confirmed at revision {@code c}, a
 * name whose attempt saw an older revision is signalled once (a spurious wake costs one attempt). A
 * watch that fails (lost leader, closed stream) signals its name too; the engine also polls.
 */
final class ReleaseWatcher implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Watch watch;
    private final Function<String, ByteSequence> keyOf;
    private final EtcdRecords records;
    private final String where;
    private final ConcurrentHashMap<String, KeyWatch> watches = new ConcurrentHashMap<>();
    private volatile Sink sink;
    private volatile boolean closed;

    ReleaseWatcher(Watch watch, Function<String, ByteSequence> keyOf, EtcdRecords records, String where) {
        this.watch = watch;
        this.keyOf = keyOf;
        this.records = records;
        this.where = where;
    }

    @Override
    public void open(Sink sink) {
        if (closed) {
            throw new IllegalStateException("the release watcher of " + where + " is closed");
        }
        this.sink = sink;
    }

    @Override
    public void watch(String name) {
        KeyWatch w = new KeyWatch(name);
        KeyWatch previous = watches.put(name, w);
        if (previous != null) {
            previous.close();
        }
        w.watcher = watch.watch(
                keyOf.apply(name),
                WatchOption.builder()
                        .withRange(records.end(name))
                        .withCreateNotify(true)
                        .withRequireLeader(true)
                        .build(),
                Watch.listener(w::onNext, w::onError));
        if (w.done) {
            w.close(); // unwatched or closed while the watch was being made
        }
    }

    @Override
    public void unwatch(String name) {
        KeyWatch w = watches.remove(name);
        if (w != null) {
            w.close();
        }
    }

    /** A failed attempt on {@code name} saw the key held at {@code revision}. */
    void heldAt(String name, long revision) {
        KeyWatch w = watches.get(name);
        if (w != null) {
            w.heldAt(revision);
        }
    }

    /** Whether the server has confirmed the watch of {@code name} (for tests). */
    boolean confirmed(String name) {
        KeyWatch w = watches.get(name);
        return w != null && w.confirmed();
    }

    @Override
    public void close() {
        closed = true;
        watches.values().forEach(KeyWatch::close);
        watches.clear();
    }

    @Override
    public String toString() {
        return where;
    }

    private final class KeyWatch {
        private final String name;
        volatile Watch.Watcher watcher;
        private final ReentrantLock lock = new ReentrantLock();
        private long createdAt; // guarded by lock; 0 until the watch is confirmed
        private long lastHeld; // guarded by lock; the newest revision a failed attempt saw before that
        private volatile boolean done;

        KeyWatch(String name) {
            this.name = name;
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
                    signal();
                }
                return;
            }
            for (WatchEvent e : r.getEvents()) {
                if (e.getEventType() == WatchEvent.EventType.DELETE || records.downgraded(e.getKeyValue())) {
                    signal();
                    return;
                }
            }
        }

        void onError(Throwable t) {
            if (!done && !closed) {
                log.debug("fencelock: the watch of '{}' on {} failed: {}", name, where, t.toString());
                signal();
            }
        }

        private void signal() {
            Sink s = sink;
            if (!done && s != null) {
                s.released(name);
            }
        }

        void close() {
            done = true;
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
