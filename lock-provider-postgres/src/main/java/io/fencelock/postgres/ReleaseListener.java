package io.fencelock.postgres;

import io.fencelock.spi.Redaction;
import io.fencelock.spi.WakeUpSubscription;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Hears releases of one lock table: one connection, held for the backend's life (opened directly,
 * or borrowed from the application's DataSource), LISTENs on the table's channel, and one daemon
 * thread waits for notifications and calls the subscribers of the released name. Started by the
 * first subscription. A lost connection is re-opened with backoff; signals sent meanwhile are
 * missed, which is safe because the engine also polls, and after a reconnect every subscriber is
 * woken once so that nobody waits for a missed signal.
 */
final class ReleaseListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReleaseListener.class);
    private static final int IDLE_CHECK_MILLIS = 10_000; // check a quiet connection is still alive this often
    private static final int VALIDATION_SECONDS = 5;
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 5_000;
    private static final long JOIN_MILLIS = 5_000;

    private final DataSource connections;
    private final boolean pooled;
    private final String channel;
    private final String where;
    private final ConcurrentHashMap<String, Set<Subscription>> subscribers = new ConcurrentHashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition closing = lock.newCondition();
    private Thread thread; // guarded by lock
    private volatile Connection connection; // set by the subscriber that starts us, then only by the thread
    private volatile boolean closed;

    /**
     * @param connections where the listening connection comes from (pgjdbc, or a pool that unwraps to it)
     * @param pooled      whether that is the application's pool, which must get its connection back clean
     * @param where       the server for log lines, without credentials
     */
    ReleaseListener(DataSource connections, boolean pooled, String channel, String where) {
        this.connections = connections;
        this.pooled = pooled;
        this.channel = channel;
        this.where = where;
    }

    WakeUpSubscription subscribe(String name, Runnable onRelease) {
        Subscription subscription = new Subscription(name, onRelease);
        subscribers.compute(name, (n, set) -> {
            Set<Subscription> s = set == null ? ConcurrentHashMap.newKeySet() : set;
            s.add(subscription);
            return s;
        });
        startIfNeeded();
        return subscription;
    }

    private void startIfNeeded() {
        lock.lock();
        try {
            if (thread != null || closed) {
                return;
            }
            // LISTEN before the first subscribe() returns, so a release right after it is heard
            connect(false);
            thread = new Thread(this::run, "fencelock-postgres-listener");
            thread.setDaemon(true);
            thread.start();
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        long backoff = MIN_BACKOFF_MILLIS;
        while (!closed) {
            Connection c = connection;
            if (c == null) {
                if (!awaitBackoff(backoff)) {
                    break;
                }
                if (connect(true)) {
                    backoff = MIN_BACKOFF_MILLIS;
                    subscribers.values().forEach(set -> set.forEach(Subscription::fire));
                } else {
                    backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
                }
                continue;
            }
            try {
                PGNotification[] notifications = c.unwrap(PGConnection.class).getNotifications(IDLE_CHECK_MILLIS);
                if (notifications == null || notifications.length == 0) {
                    if (!c.isValid(VALIDATION_SECONDS)) {
                        throw new SQLException("the connection no longer answers", "08006");
                    }
                    continue;
                }
                for (PGNotification notification : notifications) {
                    Set<Subscription> set = subscribers.get(notification.getParameter());
                    if (set != null) {
                        set.forEach(Subscription::fire);
                    }
                }
            } catch (SQLException e) {
                if (!closed) {
                    log.warn("fencelock: lost the release listener connection to {} ({}: {}); reconnecting, waiters poll meanwhile",
                            where, e.getSQLState(), Redaction.message(e.getMessage()));
                }
                connection = null;
                closeQuietly(c);
            }
        }
        Connection last = connection;
        connection = null;
        giveBack(last);
    }

    /** Opens the listening connection; failures are logged, the thread tries again later. */
    private boolean connect(boolean reconnecting) {
        Connection c = null;
        try {
            c = connections.getConnection();
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // LISTEN in an open transaction would wait for a commit
            }
            c.unwrap(PGConnection.class); // fail now, not in the loop, if this is not pgjdbc
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN \"" + channel + "\""); // built from validated identifiers
            }
            if (closed) {
                closeQuietly(c);
                return false;
            }
            connection = c;
            if (reconnecting) {
                log.info("fencelock: release listener reconnected to {}", where);
            }
            return true;
        } catch (SQLException e) {
            closeQuietly(c);
            if (reconnecting) {
                log.debug("fencelock: cannot reconnect the release listener to {} ({}: {})", where, e.getSQLState(), Redaction.message(e.getMessage()));
            } else {
                log.warn("fencelock: cannot listen for releases on {} ({}: {}); waiters poll until it reconnects",
                        where, e.getSQLState(), Redaction.message(e.getMessage()));
            }
            return false;
        }
    }

    /** Waits before a reconnect attempt; returns false when closed meanwhile. */
    private boolean awaitBackoff(long millis) {
        lock.lock();
        try {
            long nanos = TimeUnit.MILLISECONDS.toNanos(millis);
            while (!closed && nanos > 0) {
                nanos = closing.awaitNanos(nanos);
            }
            return !closed;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        Thread running;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            closing.signalAll();
            running = thread;
        } finally {
            lock.unlock();
        }
        // The thread is blocked reading its connection. Our own connection is simply aborted; a
        // connection of the application's pool is woken with a notification instead, so that the
        // thread can UNLISTEN and return it in a usable state.
        Connection listening = connection;
        boolean exited = listening == null ? awaitExit(running) // between reconnects: the signal ends its wait
                : pooled && wakeUp() && awaitExit(running);
        if (!exited && listening != null) {
            try {
                listening.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                log.debug("fencelock: aborting the release listener connection failed: {}", e.toString());
            }
            awaitExit(running);
        }
        closeQuietly(connection); // only if the thread could not do it
        subscribers.clear();
    }

    /** Sends an empty notification on the channel: no lock has an empty name, so it only wakes listeners. */
    private boolean wakeUp() {
        try (Connection c = connections.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, '')")) {
                ps.setString(1, channel);
                ps.execute();
            }
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private static boolean awaitExit(Thread running) {
        if (running == null) {
            return true;
        }
        try {
            running.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !running.isAlive();
    }

    /** Closes the listening connection, first leaving the channel if it goes back to the application's pool. */
    private void giveBack(Connection c) {
        if (c != null && pooled) {
            try (Statement s = c.createStatement()) {
                s.execute("UNLISTEN *");
            } catch (SQLException e) {
                log.debug("fencelock: UNLISTEN before returning the connection failed: {}", e.toString());
            }
        }
        closeQuietly(c);
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException | RuntimeException e) {
                log.debug("fencelock: closing the release listener connection failed: {}", e.toString());
            }
        }
    }

    private final class Subscription implements WakeUpSubscription {
        private final String name;
        private final Runnable onRelease;

        Subscription(String name, Runnable onRelease) {
            this.name = name;
            this.onRelease = onRelease;
        }

        void fire() {
            try {
                onRelease.run();
            } catch (RuntimeException e) {
                log.warn("fencelock: a release callback for '{}' failed", name, e);
            }
        }

        @Override
        public void close() {
            subscribers.computeIfPresent(name, (n, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
