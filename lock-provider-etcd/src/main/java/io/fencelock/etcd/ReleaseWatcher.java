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
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend, on its client's watch service: each name with a waiter is one
 * etcd watch of its keys (the mutex key and the shared range, {@link EtcdRecords}) for deletes (a
 * release, a revocation of the holder's lease, an expiry, a withdrawn writer's intent) and for
 * downgrades (readers may enter), opened without a start revision, so it is a <i>synced</i> watcher
 * and etcd delivers the event at once, not on its 100 ms catch-up of unsynced watchers. Other puts
 * (grants, waiters, the guard) reach the client too (etcd filters puts only all or none) and are
 * ignored.
 *
 * <p>The engine asks to watch a name before its first attempt, but it waits only after a refusal
 * (see {@link ReleaseFeed}), so the etcd watch is opened by the first refused attempt, not by
 * {@link #watch}: an acquire that is granted at once costs no watch (opening and cancelling one per
 * acquire cost a third of the throughput at 8 clients). Opening is asynchronous, so a delete between
 * a refusal at revision {@code r} and the watch's creation at {@code c > r} would be missed: then,
 * if the refusal saw a plain mutex holder (no shared keys), one read of the mutex key tells whether
 * that holder's key still stands (same create revision: nothing was released); otherwise, or if it
 * is gone, the name is signalled once (a spurious wake costs one attempt). A watch that fails (lost
 * leader, closed stream) signals its name too; the engine also polls.
 *
 * <p>It also keeps this client's places in the mutexes' queues ({@link EtcdRecords}: one per watched
 * name, under {@link #listenerId}): the lease each was written for, so that a put of the mutex key that
 * grants one of those leases (a release's grant, {@link EtcdSharedGrants#release}) is passed on as a
 * grant, and a delete of a queue key wakes nobody. The place is taken out when the name is unwatched.
 */
final class ReleaseWatcher implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Watch watch;
    private final KV kv;
    private final Function<String, ByteSequence> keyOf;
    private final EtcdRecords records;
    private final String where;
    private final ConcurrentHashMap<String, KeyWatch> watches = new ConcurrentHashMap<>();
    /** Names this client's queue places: random, so a restarted client never takes an old place for its own. */
    private final String listenerId = UUID.randomUUID().toString();

    /** This client's place in a name's queue as last written: for which lease, when (nanoTime), for which TTL. */
    record Place(String leaseId, long writtenAt, Duration ttl) {}

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

    /** Unwatched: the name's etcd watch closes, and this client's place in its queue is taken out (owner-checked). */
    @Override
    public void unwatch(String name) {
        KeyWatch w = watches.remove(name);
        if (w != null) {
            w.close();
            leave(w);
        }
    }

    /** Takes {@code w}'s place out of its name's queue if it has one, in the background; null if none. */
    private CompletableFuture<?> leave(KeyWatch w) {
        Place p = w.place;
        if (p == null) {
            return null;
        }
        ByteSequence entry = records.queueEntry(w.name, listenerId);
        return kv.txn()
                .If(EtcdRecords.heldBy(entry, p.leaseId()))
                .Then(Op.delete(entry, DeleteOption.DEFAULT))
                .commit()
                .whenComplete((r, e) -> {
                    if (e != null) {
                        log.debug("fencelock: leaving the queue of '{}' on {} failed: {}", w.name, where, e.toString());
                    }
                });
    }

    String listenerId() {
        return listenerId;
    }

    /** Whether a waiter of this client waits for {@code name}: its refusals queue it. */
    boolean waits(String name) {
        return watches.containsKey(name);
    }

    /** This client's place in {@code name}'s queue, or null. */
    Place place(String name) {
        KeyWatch w = watches.get(name);
        return w == null ? null : w.place;
    }

    /**
     * This client's place in {@code name}'s queue is about to be written for {@code leaseId}: from now on a
     * put granting that lease is this client's grant (its watch event may come before the write's answer).
     */
    void queuing(String name, String leaseId, Duration ttl) {
        KeyWatch w = watches.get(name);
        if (w != null) {
            w.queuedLeases.put(leaseId, ttl);
        }
    }

    /** This client's place in {@code name}'s queue was written for {@code leaseId}, at {@code writtenAt}. */
    void queued(String name, String leaseId, long writtenAt, Duration ttl) {
        KeyWatch w = watches.get(name);
        if (w != null) {
            w.place = new Place(leaseId, writtenAt, ttl);
        }
    }

    /** This client's place in {@code name}'s queue is gone: taken out by its own grant. */
    void placeGone(String name) {
        KeyWatch w = watches.get(name);
        if (w != null) {
            w.place = null;
        }
    }

    /** The lease of this client's queue that holds the mutex key read as {@code held}, or null. */
    String queuedHolder(String name, KeyValue held) {
        KeyWatch w = watches.get(name);
        return w == null ? null : w.queuedHolder(held);
    }

    /**
     * A failed attempt on {@code name} saw it held at {@code revision}, by a plain mutex key created at
     * {@code holder} (0: shared keys, or a waiter's own record): opens the name's etcd watch if a
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

    /**
     * Closes every watch and takes this client's places out of the queues, waiting up to {@link #LEAVING}
     * for that (a place left behind lives until its etcd lease expires, and a release may grant it meanwhile).
     */
    @Override
    public void close() {
        closed = true;
        List<CompletableFuture<?>> leaving = new ArrayList<>();
        watches.values().forEach(w -> {
            w.close();
            CompletableFuture<?> left = leave(w);
            if (left != null) {
                leaving.add(left);
            }
        });
        watches.clear();
        try {
            CompletableFuture.allOf(leaving.toArray(CompletableFuture[]::new))
                    .get(LEAVING.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            log.debug("fencelock: leaving the queues on {} failed: {}", where, e.toString());
        }
    }

    /** How long closing waits for this client's places to be taken out of the queues. */
    static final Duration LEAVING = Duration.ofSeconds(1);

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
        private long lastHolder; // guarded by lock; the plain mutex holder's create revision it saw, or 0
        private volatile boolean done;
        /** This client's place in the name's queue, as last written (null: none, or taken out). */
        volatile Place place;
        /** Every lease this client's place was written for while the name is watched, with its TTL. */
        final ConcurrentHashMap<String, Duration> queuedLeases = new ConcurrentHashMap<>();

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
         * refusal's plain mutex holder ({@code holder}, a create revision) still holds the key, which
         * means nothing was released in between.
         */
        private void recheck(long holder) {
            if (holder == 0) {
                signal();
                return;
            }
            kv.get(keyOf.apply(name)).whenComplete((r, e) -> {
                List<KeyValue> kvs = e == null ? null : r.getKvs();
                if (kvs == null || kvs.isEmpty() || kvs.get(0).getCreateRevision() != holder) {
                    signal();
                } else {
                    grantedIf(kvs.get(0)); // a release's grant keeps the key: one to this client's queue?
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
            boolean released = false;
            for (WatchEvent e : r.getEvents()) {
                KeyValue v = e.getKeyValue();
                if (records.queueKey(v.getKey())) {
                    if (e.getEventType() == WatchEvent.EventType.DELETE
                            && v.getKey().equals(records.queueEntry(name, listenerId))) {
                        place = null; // granted, or left: the next refusal queues afresh
                    }
                    continue; // nothing was released
                }
                if (e.getEventType() == WatchEvent.EventType.DELETE || records.downgraded(v)) {
                    released = true;
                } else {
                    grantedIf(v);
                }
            }
            if (released) {
                signal();
            }
        }

        /** The lease of this client's queue that holds the mutex key read as {@code held}, or null. */
        String queuedHolder(KeyValue held) {
            if (queuedLeases.isEmpty() || !held.getKey().equals(keyOf.apply(name))) {
                return null;
            }
            String v = held.getValue().toString(StandardCharsets.UTF_8);
            int lf = v.indexOf(HeldValue.SEPARATOR);
            String lease = lf < 0 ? null : v.substring(0, lf);
            return lease != null && queuedLeases.containsKey(lease) ? lease : null;
        }

        /** Passes on a put of the mutex key that grants a lease of this client's queue. */
        private void grantedIf(KeyValue v) {
            String lease = queuedHolder(v);
            Sink s = sink;
            if (lease != null && !done && s != null) {
                s.granted(
                        name,
                        lease,
                        EtcdRecords.mutexToken(v),
                        Instant.now().plus(queuedLeases.getOrDefault(lease, Duration.ZERO)));
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
