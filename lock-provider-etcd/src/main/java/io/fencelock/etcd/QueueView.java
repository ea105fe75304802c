package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.fencelock.etcd.EtcdRecords.Place;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queues of every name ({@code GRANT_ON_RELEASE}) as one etcd watch per backend over the places' range sees
 * them ({@link EtcdRecords#placeKey}, {@link EtcdRecords#queueMark}), so that a release grants the first waiting
 * client in its one transaction without reading the queue first: on this machine a read before the release cost
 * what the waiter's own attempt after a plain release costs, so a grant on release that read first bought nothing.
 *
 * <p>The view is a cache the server checks, never trusted: a release's transaction holds only if the queue's mark
 * is as seen (no place was written since the view's) and the head's place is as seen, and a release whose view was
 * wrong reads the queue and decides again ({@link EtcdSharedGrants#release}). A watch that fails leaves an empty
 * view (mark unseen, which holds only while the name has no queue) until it is open again. Every place write reaches
 * every backend of the prefix: a waiting client's first refusal, its rewrite once a quarter of its TTL, and the
 * delete of a grant or a withdrawal.
 */
final class QueueView {
    private static final Logger log = LoggerFactory.getLogger(QueueView.class);
    /** What a view that saw nothing holds (for tests: {@link #forget}); never written to. */
    private static final Queues NOTHING = new Queues();

    private final Watch watch;
    private final KV kv;
    private final EtcdRecords records;
    private final String where;
    /** Set while a watch is open or being opened; cleared when it fails, so the next release opens it again. */
    private final AtomicBoolean watching = new AtomicBoolean();

    private volatile Queues queues = new Queues();
    private volatile Watch.Watcher watcher;
    private volatile boolean closed;
    private volatile boolean blind;

    /**
     * What one watch has seen. Each revision's places are taken in before its mark ({@link #onNext}), and a reader
     * reads the mark before the places: one that sees a mark new sees the places written with it, and one that sees
     * it old fails its condition on the server. So a mark as seen vouches for the places as seen.
     */
    private static final class Queues {
        /** Name, then place key, then the place as last put. */
        final ConcurrentHashMap<String, ConcurrentHashMap<ByteSequence, Place>> places = new ConcurrentHashMap<>();
        /** Name, then its queue mark's mod revision as last put. */
        final ConcurrentHashMap<String, Long> marks = new ConcurrentHashMap<>();
    }

    /**
     * A queue as seen: its head, the first place by when it was first written whose client still asks ({@link
     * Place#current}), on an etcd lease (null: none); the mark's mod revision (0: absent); whether the head is the
     * queue's only place.
     */
    record Seen(Place head, long mark, boolean alone) {
        static Seen of(Collection<Place> queue, long mark) {
            long now = System.currentTimeMillis();
            Place head = null;
            for (Place p : queue) {
                if (p.kv().getLease() != 0
                        && p.current(now)
                        && (head == null
                                || p.kv().getCreateRevision() < head.kv().getCreateRevision())) {
                    head = p;
                }
            }
            return new Seen(head, mark, head != null && queue.size() == 1);
        }
    }

    QueueView(Watch watch, KV kv, EtcdRecords records, String where) {
        this.watch = watch;
        this.kv = kv;
        this.records = records;
        this.where = where;
    }

    /** What a release of {@code name} may grant, as seen. Opens the view's watch if it is not open. */
    Seen seen(String name) {
        open();
        Queues q = blind ? NOTHING : queues;
        long mark = q.marks.getOrDefault(name, 0L); // before the places: see Queues
        ConcurrentHashMap<ByteSequence, Place> queue = q.places.get(name);
        return Seen.of(queue == null ? List.of() : queue.values(), mark);
    }

    /**
     * The mark's mod revision as seen when the view knows no place of {@code name} but {@code own}: a grant that
     * deletes {@code own} may delete the mark with it if it is still as seen (no place was written since). -1 when
     * the view knows another place.
     */
    long markIfAlone(String name, ByteSequence own) {
        Queues q = blind ? NOTHING : queues;
        long mark = q.marks.getOrDefault(name, 0L); // before the places: see Queues
        ConcurrentHashMap<ByteSequence, Place> queue = q.places.get(name);
        return queue == null || queue.size() == 1 && queue.containsKey(own) ? mark : -1;
    }

    /**
     * Reads every place and mark, then watches the range from the revision after that read, so no write between
     * the two is missed; asynchronous: until the read is in, the view is empty.
     */
    void open() {
        // a plain read first: every release calls this, and the view is nearly always open
        if (closed || watching.get() || !watching.compareAndSet(false, true)) {
            return;
        }
        kv.get(
                        records.placesStart(),
                        GetOption.builder().withRange(records.placesEnd()).build())
                .whenComplete((r, e) -> {
                    if (e != null) {
                        failed(e);
                        return;
                    }
                    Queues q = new Queues();
                    queues = q;
                    take(q, r.getKvs(), false);
                    take(q, r.getKvs(), true);
                    watcher = watch.watch(
                            records.placesStart(),
                            WatchOption.builder()
                                    .withRange(records.placesEnd())
                                    .withRevision(r.getHeader().getRevision() + 1)
                                    .build(),
                            Watch.listener(response -> onNext(q, response), this::failed));
                    if (closed) {
                        close();
                    }
                });
    }

    private void take(Queues q, List<KeyValue> kvs, boolean marks) {
        for (KeyValue v : kvs) {
            if ((records.markName(v.getKey()) != null) == marks) {
                put(q, v);
            }
        }
    }

    /** A revision's events come in one response: its places first, then its mark (see {@link Queues}). */
    private void onNext(Queues q, WatchResponse r) {
        for (boolean marks : new boolean[] {false, true}) {
            for (WatchEvent e : r.getEvents()) {
                KeyValue v = e.getKeyValue();
                if ((records.markName(v.getKey()) != null) != marks) {
                    continue;
                }
                if (e.getEventType() == WatchEvent.EventType.DELETE) {
                    remove(q, v.getKey());
                } else {
                    put(q, v);
                }
            }
        }
    }

    private void put(Queues q, KeyValue v) {
        String marked = records.markName(v.getKey());
        if (marked != null) {
            q.marks.put(marked, v.getModRevision());
            return;
        }
        String name = records.placeName(v.getKey());
        Place p = name == null ? null : Place.of(v);
        if (p != null) {
            q.places.compute(name, (n, queue) -> {
                ConcurrentHashMap<ByteSequence, Place> places = queue == null ? new ConcurrentHashMap<>() : queue;
                places.put(v.getKey(), p);
                return places;
            });
        }
    }

    private void remove(Queues q, ByteSequence key) {
        String marked = records.markName(key);
        if (marked != null) {
            q.marks.remove(marked);
            return;
        }
        String name = records.placeName(key);
        if (name != null) {
            q.places.computeIfPresent(name, (n, queue) -> {
                queue.remove(key);
                return queue.isEmpty() ? null : queue;
            });
        }
    }

    /** The read or the watch failed (a compaction, a lost leader, a closed client): the next release opens it again. */
    private void failed(Throwable t) {
        if (closed) {
            return;
        }
        log.debug("fencelock: the queue watch on {} failed: {}", where, t.toString());
        queues = new Queues();
        Watch.Watcher w = watcher;
        watcher = null;
        if (w != null) {
            closeQuietly(w);
        }
        watching.set(false);
    }

    void close() {
        closed = true;
        Watch.Watcher w = watcher;
        if (w != null) {
            closeQuietly(w);
        }
    }

    private static void closeQuietly(Watch.Watcher w) {
        try {
            w.close();
        } catch (RuntimeException e) {
            log.debug("fencelock: closing the queue watch failed: {}", e.toString());
        }
    }

    /** From now on sees nothing, as a view that missed every write (for tests). */
    void forget() {
        blind = true;
    }

    /** How many places of {@code name} the view knows, for tests. */
    int known(String name) {
        ConcurrentHashMap<ByteSequence, Place> queue = queues.places.get(name);
        return queue == null ? 0 : queue.size();
    }
}
