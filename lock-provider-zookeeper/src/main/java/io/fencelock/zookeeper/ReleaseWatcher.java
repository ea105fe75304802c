package io.fencelock.zookeeper;

import io.fencelock.spi.WakeUpSubscription;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Hears releases for one backend: one persistent watch per lock znode a waiter of this backend waits
 * for, on the backend's control session (which holds no locks). A {@code NodeDeleted} event is a
 * release, a holder's session expiring, or a lock given back by its own backend after its TTL.
 *
 * <p>The engine subscribes before its first attempt, and registering a watch is asynchronous, on
 * another session than the attempt's: a delete between the refused attempt and the registration
 * would be missed. So the registration is followed on the same session (FIFO) by an {@code exists}:
 * if the znode is gone by then, the waiter is woken at once; if it is there, its deletion comes after
 * the watch in that server's order and fires it. After a disconnection the watch is re-registered by
 * the client, but events in between are not replayed: every waiter is woken (a spurious wake costs
 * one attempt). When the control session expires, every waiter is woken and the watches move to a
 * new session.
 */
final class ReleaseWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatcher.class);

    private final Supplier<Session> control;
    private final Executor background;
    private final String where;
    private final ConcurrentHashMap<String, PathWatch> watches = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ReleaseWatcher(Supplier<Session> control, Executor background, String where) {
        this.control = control;
        this.background = background;
        this.where = where;
    }

    WakeUpSubscription subscribe(String name, String path, Runnable onRelease) {
        Subscriber s = new Subscriber(path, onRelease);
        PathWatch[] created = new PathWatch[1];
        watches.compute(path, (p, w) -> {
            PathWatch watch = w == null ? (created[0] = new PathWatch(name, p)) : w;
            watch.subscribers.add(s);
            return watch;
        });
        if (created[0] != null) {
            created[0].register();
        }
        return s;
    }

    /** Whether the server has confirmed the watch of {@code path} (for tests). */
    boolean confirmed(String path) {
        PathWatch w = watches.get(path);
        return w != null && w.confirmed;
    }

    /** The control session reconnected after a disconnection, or expired: every waiter is woken, watches re-registered on expiry. */
    void sessionEvent(Session session, WatchedEvent event) {
        switch (event.getState()) {
            case SyncConnected -> watches.values().forEach(w -> {
                if (w.session == session && w.confirmed) {
                    w.fire(); // events while disconnected are not replayed
                }
            });
            case Expired, Closed -> watches.values().forEach(w -> {
                if (w.session == session) {
                    w.fire();
                    if (!closed) {
                        background.execute(w::register);
                    }
                }
            });
            default -> { }
        }
    }

    @Override
    public void close() {
        closed = true;
        watches.clear();
    }

    private final class PathWatch implements Watcher {
        private final String name;
        private final String path;
        final Set<Subscriber> subscribers = ConcurrentHashMap.newKeySet();
        volatile Session session;
        volatile boolean confirmed;

        PathWatch(String name, String path) {
            this.name = name;
            this.path = path;
        }

        void register() {
            Session s;
            try {
                s = control.get();
            } catch (RuntimeException e) {
                log.debug("fencelock: cannot watch '{}' on {} ({}); its waiters poll", name, where, e.toString());
                fire();
                return;
            }
            session = s;
            confirmed = false;
            s.zk.addWatch(path, this, AddWatchMode.PERSISTENT, (rc, p, ctx) -> {
                if (rc != Code.OK.intValue()) {
                    log.debug("fencelock: the watch of '{}' on {} failed: {}", name, where, Code.get(rc));
                    fire();
                }
            }, null);
            s.zk.exists(path, false, (rc, p, ctx, stat) -> {
                confirmed = rc == Code.OK.intValue() || rc == Code.NONODE.intValue();
                if (rc != Code.OK.intValue()) {
                    fire(); // gone before the watch was in place, or unknown: wake the waiters
                }
            }, null);
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.NodeDeleted) {
                fire();
            }
        }

        void fire() {
            for (Subscriber s : subscribers) {
                s.fire();
            }
        }

        void remove(Subscriber s) {
            boolean[] last = new boolean[1];
            watches.computeIfPresent(path, (p, w) -> {
                w.subscribers.remove(s);
                last[0] = w.subscribers.isEmpty();
                return last[0] ? null : w;
            });
            Session current = session;
            if (last[0] && current != null && current.live()) {
                current.zk.removeWatches(path, this, WatcherType.Any, true, (rc, p, ctx) -> { }, null);
            }
        }
    }

    private final class Subscriber implements WakeUpSubscription {
        private final String path;
        private final Runnable onRelease;
        private volatile boolean done;

        Subscriber(String path, Runnable onRelease) {
            this.path = path;
            this.onRelease = onRelease;
        }

        void fire() {
            if (done) {
                return;
            }
            try {
                onRelease.run();
            } catch (RuntimeException e) {
                log.warn("fencelock: a release callback for '{}' failed", path, e);
            }
        }

        @Override
        public void close() {
            if (done) {
                return;
            }
            done = true;
            PathWatch w = watches.get(path);
            if (w != null) {
                w.remove(this);
            }
        }
    }
}
