package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.ReleaseFeed;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend, on its client's watch service: each name with a waiter is one
 * etcd watch of its keys (the mutex key and the shared range, {@link EtcdRecords}) for deletes (a
 * release, a revocation of the holder's lease, an expiry, a withdrawn writer's intent) and for
 * downgrades (readers may enter), and for a put of the mutex key with the lease this backend's queue
 * place was written with (a release granted it: {@code GRANT_ON_RELEASE}), opened without a start
 * revision, so it is a <i>synced</i> watcher and etcd delivers the event at once, not on its 100 ms
 * catch-up of unsynced watchers. Other puts (grants, waiters, the guard) reach the client too (etcd
 * filters puts only all or none) and are ignored.
 *
 * <p>The engine asks to watch a name before its first attempt, but it waits only after a refusal
 * (see {@link ReleaseFeed}), so the etcd watch is opened by the first refused attempt, not by
 * {@link #watch}: an acquire that is granted at once costs no watch (opening and cancelling one per
 * acquire cost a third of the throughput at 8 clients). Opening is asynchronous, so a delete between
 * a refusal at revision {@code r} and the watch's creation at {@code c > r} would be missed: then,
 * if the refusal saw a plain mutex holder (no shared keys), one read of the mutex key tells whether
 * that holder's key still stands as it was (same mod revision: nothing was released, handed over or granted
 * to a queued client); otherwise, or if it
 * is gone, the name is signalled once (a spurious wake costs one attempt). A watch that fails (lost
 * leader, closed stream) signals its name too; the engine also polls.
 */
final class ReleaseWatcher implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Watch watch;
    private final KV kv;
    private final Function<String, ByteSequence> keyOf;
    private final EtcdRecords records;
    private final String where;
    private final ConcurrentHashMap<String, KeyWatch> watches = new ConcurrentHashMap<>();
    /** This backend's id in the names' queues. */
    final String clientId = UUID.randomUUID().toString();
    /** Names whose queue holds this backend's place, as this backend last wrote it. */
    private final ConcurrentHashMap<String, Placed> places = new ConcurrentHashMap<>();

    /**
     * This backend's place in a name's queue as written: a release grants {@code leaseId}; {@code granted} once
     * one did (the place is gone, but an attempt still learns of the grant by its lease).
     */
    record Placed(String leaseId, long writtenAt, Duration ttl, boolean granted) {
        /** Whether a refusal at {@code now} (nanoTime) rewrites it: granted, another TTL, or a quarter of its TTL old. */
        boolean stale(Duration asked, long now) {
            return granted || !ttl.equals(asked) || now - writtenAt >= ttl.toNanos() / 4;
        }
    }

    private volatile Sink sink;
    private volatile boolean closed;

    ReleaseWatcher(Watch watch, KV kv, Function<String, ByteSequence> keyOf, EtcdRecords records, String where) {
        this.watch = watch;
        this.kv = kv;
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

    /** Registers the name; its etcd watch is opened by the first refused attempt ({@link #heldAt}). */
    @Override
    public void watch(String name) {
        KeyWatch previous = watches.put(name, new KeyWatch(name));
        if (previous != null) {
            previous.close();
        }
    }

    @Override
    public void unwatch(String name) {
        KeyWatch w = watches.remove(name);
        if (w != null) {
            w.close();
        }
        Placed p = places.remove(name);
        if (p != null && !p.granted()) {
            withdraw(name, p.leaseId()); // the engine also releases the lease it was queued under; this one may race it
        }
    }

    /** Whether a waiter of this backend waits for {@code name}: its refusals write a place. */
    boolean waitsFor(String name) {
        return watches.containsKey(name);
    }

    /** This backend's place in {@code name}'s queue as last written, or null. */
    Placed placed(String name) {
        return places.get(name);
    }

    /** A waiter's refusal wrote this backend's place for {@code name} with {@code leaseId}. */
    void placed(String name, String leaseId, long writtenAt, Duration ttl) {
        if (watches.containsKey(name)) {
            places.put(name, new Placed(leaseId, writtenAt, ttl, false));
        }
    }

    /** An attempt was granted: the grant deleted this backend's place. */
    void granted(String name) {
        places.remove(name);
    }

    /**
     * A release granted the place written with {@code leaseId}: returns whether this is the first this backend
     * learns of it (a later put of the same grant, such as a move to another TTL's etcd lease, is no new grant).
     */
    boolean grantedTo(String name, String leaseId) {
        Placed p = places.get(name);
        return p != null
                && p.leaseId().equals(leaseId)
                && !p.granted()
                && places.replace(name, p, new Placed(leaseId, p.writtenAt(), p.ttl(), true));
    }

    /** The release of {@code leaseId} withdrew this backend's place in {@code name}'s queue if it was written with it. */
    void withdrawn(String name, String leaseId) {
        Placed p = places.get(name);
        if (p != null && p.leaseId().equals(leaseId)) {
            places.remove(name, p);
        }
    }

    /** Deletes this backend's place in {@code name}'s queue if {@code leaseId} still has it, in the background. */
    private void withdraw(String name, String leaseId) {
        ByteSequence place = records.placeKey(name, clientId);
        kv.txn()
                .If(EtcdRecords.heldBy(place, leaseId))
                .Then(Op.delete(place, DeleteOption.DEFAULT))
                .commit()
                .whenComplete((r, e) -> {
                    if (e != null) {
                        log.debug("fencelock: leaving the queue of '{}' on {} failed: {}", name, where, e.toString());
                    }
                });
    }

    /**
     * A failed attempt on {@code name} saw it held at {@code revision}, by a plain mutex key created at
     * {@code holder}, its mod revision (0: shared keys, or a waiter's own record): opens the name's etcd watch if a
     * waiter registered it and it is not open yet.
     */
    void heldAt(String name, long revision, long holder) {
        KeyWatch w = watches.get(name);
        if (w != null) {
            w.heldAt(revision, holder);
            w.open();
        }
    }

    /** Whether the server has confirmed the watch of {@code name} (for tests). */
    boolean confirmed(String name) {
        KeyWatch w = watches.get(name);
        return w != null && w.confirmed();
    }

    /** Whether the etcd watch of {@code name} was opened (for tests). */
    boolean opened(String name) {
        KeyWatch w = watches.get(name);
        return w != null && w.opened.get();
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
        private final AtomicBoolean opened = new AtomicBoolean();
        private final ReentrantLock lock = new ReentrantLock();
        private long createdAt; // guarded by lock; 0 until the watch is confirmed
        private long lastHeld; // guarded by lock; the newest revision a failed attempt saw before that
        private long lastHolder; // guarded by lock; the plain mutex holder's mod revision it saw, or 0
        private volatile boolean done;

        KeyWatch(String name) {
            this.name = name;
        }

        void open() {
            if (done || !opened.compareAndSet(false, true)) {
                return;
            }
            watcher = watch.watch(
                    keyOf.apply(name),
                    WatchOption.builder()
                            .withRange(records.end(name))
                            .withCreateNotify(true)
                            .withRequireLeader(true)
                            .build(),
                    Watch.listener(this::onNext, this::onError));
            if (done) {
                close(); // unwatched or closed while the watch was being made
            }
        }

        void heldAt(long revision, long holder) {
            boolean missed = false;
            lock.lock();
            try {
                if (createdAt == 0) {
                    if (revision > lastHeld) {
                        lastHeld = revision;
                        lastHolder = holder;
                    }
                } else {
                    missed = revision < createdAt; // answered after the watch was confirmed, seen before it began
                }
            } finally {
                lock.unlock();
            }
            if (missed) {
                recheck(holder);
            }
        }

        /**
         * A release between a refusal and the watch's creation would be missed: signal, unless the
         * refusal's plain mutex holder ({@code holder}, a mod revision) still holds the key as it was, which
         * means nothing was released in between.
         */
        private void recheck(long holder) {
            if (holder == 0) {
                signal();
                return;
            }
            kv.get(keyOf.apply(name)).whenComplete((r, e) -> {
                List<KeyValue> kvs = e == null ? null : r.getKvs();
                if (kvs == null || kvs.isEmpty() || kvs.get(0).getModRevision() != holder) {
                    signal();
                }
            });
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
                long holder;
                lock.lock();
                try {
                    createdAt = r.getHeader().getRevision();
                    missed = lastHeld != 0 && lastHeld < createdAt;
                    holder = lastHolder;
                } finally {
                    lock.unlock();
                }
                if (missed) {
                    recheck(holder);
                }
                return;
            }
            for (WatchEvent e : r.getEvents()) {
                KeyValue v = e.getKeyValue();
                if (e.getEventType() == WatchEvent.EventType.DELETE) {
                    signal();
                    return;
                } else if (records.downgraded(v)) {
                    signal();
                    return;
                } else if (grant(v)) {
                    return;
                }
            }
        }

        /** Whether {@code v} is the mutex key put with this backend's place's lease: a release granted it. */
        private boolean grant(KeyValue v) {
            Placed p = places.get(name);
            if (p == null || !v.getKey().equals(keyOf.apply(name))) {
                return false;
            }
            String value = v.getValue().toString(StandardCharsets.UTF_8);
            if (!HeldValue.heldBy(value, p.leaseId()) || !grantedTo(name, p.leaseId())) {
                return false;
            }
            Sink s = sink;
            if (!done && s != null) {
                s.granted(
                        name,
                        p.leaseId(),
                        EtcdRecords.mutexToken(v),
                        Instant.now().plus(p.ttl()));
            }
            return true;
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
