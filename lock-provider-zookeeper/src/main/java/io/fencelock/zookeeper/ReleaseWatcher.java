package io.fencelock.zookeeper;

import io.fencelock.LockBackendException;
import io.fencelock.spi.ReleaseFeed;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend: one persistent watch per lock znode with waiters, on the
 * backend's control session (which holds no locks). A {@code NodeDeleted} event is a release, a
 * holder's session expiring, or a lock given back by its own backend after its TTL.
 *
 * <p>The engine watches a name before its first attempt, but it waits only after a refusal (see
 * {@link ReleaseFeed}), so the znode's watch is registered by the first refused attempt
 * ({@link #refused}), not by {@link #watch}: an acquire that is granted at once costs no watch
 * (registering, confirming and removing one per acquire cost three requests of the control session,
 * and the engine hundreds of µs of p50). Registering is asynchronous, on another session than the
 * attempt's: a delete between a refused attempt and the registration would be missed. So the
 * registration is followed on the same session (FIFO) by an {@code exists}:
 * if the znode is gone by then, the name is signalled at once (a spurious wake costs one attempt); if
 * it is there, its deletion comes after the watch in that server's order and fires it. After a
 * disconnection the client re-registers the watches by itself, but events in between are not
 * replayed: the feed says it {@linkplain Sink#resumed() resumed}. When the control session expires
 * the feed is {@linkplain Sink#broken broken}, and the engine reopens it on a new session.
 */
final class ReleaseWatcher implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Supplier<Session> control;
    private final Function<String, String> pathOf;
    private final String where;
    private final ConcurrentHashMap<String, NameWatch> watches = new ConcurrentHashMap<>();
    private volatile Sink sink;
    private volatile Session session;
    private volatile boolean disconnected;
    private volatile boolean closed;

    /**
     * @param control the backend's control session, opened (one round trip) if it has none live;
     *                throws {@link LockBackendException} when no server answers
     */
    ReleaseWatcher(Supplier<Session> control, Function<String, String> pathOf, String where) {
        this.control = control;
        this.pathOf = pathOf;
        this.where = where;
    }

    /** Takes the control session, connected, on which the watches of this opening are placed. */
    @Override
    public void open(Sink sink) {
        requireOpen();
        Session s = control.get();
        dropWatches(); // a reopening: the engine watches its names again
        this.sink = sink;
        this.disconnected = false;
        this.session = s;
        requireOpen();
        if (!s.live()) {
            throw new LockBackendException(
                    "the control session of " + where + " ended while the release feed opened", true);
        }
    }

    @Override
    public void watch(String name) {
        Session s = session;
        if (s == null || !s.live()) {
            throw new LockBackendException(
                    "the control session of " + where + " ended; the release feed reopens", true);
        }
        NameWatch w = new NameWatch(name, pathOf.apply(name), s);
        NameWatch previous = watches.put(name, w);
        if (previous != null) {
            previous.remove();
        }
    }

    /** An attempt on {@code name} was refused (its znode exists): registers the name's watch if a waiter asked for it. */
    void refused(String name) {
        NameWatch w = watches.get(name);
        if (w != null) {
            w.register();
        }
    }

    @Override
    public void unwatch(String name) {
        NameWatch w = watches.remove(name);
        if (w != null) {
            w.remove();
        }
    }

    /** Whether the watch of {@code name} was registered (for tests). */
    boolean registered(String name) {
        NameWatch w = watches.get(name);
        return w != null && w.registered.get();
    }

    /** Whether the server has confirmed the watch of {@code name} (for tests). */
    boolean confirmed(String name) {
        NameWatch w = watches.get(name);
        return w != null && w.confirmed;
    }

    /** A state change of the control session {@code s}: a reconnection resumes the feed, an expiry breaks it. */
    void sessionEvent(Session s, WatchedEvent event) {
        Sink target = sink;
        if (s != session || closed || target == null) {
            return; // not this opening's session (a first connect, or one replaced already)
        }
        switch (event.getState()) {
            case Disconnected -> disconnected = true;
            case SyncConnected, ConnectedReadOnly -> {
                if (disconnected) {
                    disconnected = false;
                    target.resumed(); // the watches are back, but deletes while disconnected are not replayed
                }
            }
            case Expired, Closed, AuthFailed -> {
                session = null;
                target.broken(new LockBackendException(
                        "the control session of " + where + " ended (" + event.getState() + ")", true));
            }
            default -> {}
        }
    }

    /** Stops listening for good: the watches are dropped and the sink is called no more. */
    @Override
    public void close() {
        closed = true;
        dropWatches();
        session = null;
        sink = null;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the release watcher of " + where + " is closed");
        }
    }

    private void dropWatches() {
        for (String name : watches.keySet()) {
            unwatch(name);
        }
    }

    @Override
    public String toString() {
        return where;
    }

    private final class NameWatch implements Watcher {
        private final String name;
        private final String path;
        private final Session on;
        volatile boolean confirmed;
        private volatile boolean done;
        private final AtomicBoolean registered = new AtomicBoolean();

        NameWatch(String name, String path, Session on) {
            this.name = name;
            this.path = path;
            this.on = on;
        }

        /** Once: the persistent watch, then an {@code exists} that catches a delete before it. */
        void register() {
            if (done || !registered.compareAndSet(false, true)) {
                return;
            }
            on.zk.addWatch(
                    path,
                    this,
                    AddWatchMode.PERSISTENT,
                    (rc, p, ctx) -> {
                        if (rc != Code.OK.intValue()) {
                            log.debug("fencelock: the watch of '{}' on {} failed: {}", name, where, Code.get(rc));
                            signal(); // its waiters try again, and poll
                        }
                    },
                    null);
            on.zk.exists(
                    path,
                    false,
                    (rc, p, ctx, stat) -> {
                        confirmed = rc == Code.OK.intValue() || rc == Code.NONODE.intValue();
                        if (rc != Code.OK.intValue()) {
                            signal(); // gone before the watch was in place, or unknown: a spurious wake at worst
                        }
                    },
                    null);
            if (done) {
                remove(); // unwatched while registering: this removal follows the registration on the session
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.NodeDeleted) {
                signal();
            }
        }

        private void signal() {
            Sink s = sink;
            if (!done && !closed && s != null) {
                s.released(name);
            }
        }

        void remove() {
            done = true;
            if (registered.get() && on.live()) {
                on.zk.removeWatches(path, this, WatcherType.Any, true, (rc, p, ctx) -> {}, null);
            }
        }
    }
}
