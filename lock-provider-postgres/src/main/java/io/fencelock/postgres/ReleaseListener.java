package io.fencelock.postgres;

import io.fencelock.LockBackendException;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.ReleaseFeed;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one lock table: one connection (opened directly, or borrowed from the
 * application's DataSource) that {@code LISTEN}s on the table's channel, read by the engine; each
 * notification carries a released name, for every listener, or a name and the one waiter it wakes
 * ({@code "name waiter"}). The engine reopens it when it breaks.
 *
 * <p>The waiter is this listener's random id: while the engine watches a name (a waiter of this
 * client waits for it) and the connection listens, the backend's attempts on that name name it, so
 * that a refusal queues it on the lock's row and a release can wake this client alone. The
 * connection holds an advisory lock keyed by the id while it listens (a new id for every connection
 * it opens), so that a release skips the queued id of a client that crashed. When the
 * engine unwatches a name the client still queues for, or a wake-up arrives for a name nobody here
 * waits for any more, the client leaves the queue and passes the wake-up on (the backend's leave
 * statement, run on a thread of its own that lives only while there is leaving to do), so that no
 * wake-up is lost with a waiter that left.
 */
final class ReleaseListener implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseListener.class);
    private static final int VALIDATION_SECONDS = 5;
    private static final long JOIN_MILLIS = 5_000;
    private static final long LEAVER_IDLE_SECONDS = 5;
    /** Holds the waiter id's key for as long as the connection listens (Statements.listenerKey). */
    private static final String LISTENING = "SELECT pg_try_advisory_lock(" + Statements.listenerKey("?") + ")";

    private static final String NOT_LISTENING = "SELECT pg_advisory_unlock(" + Statements.listenerKey("?") + ")";
    /** Queues a closing client leaves, one round trip each; any more are left to the releases and polls. */
    private static final int MAX_LEAVES_ON_CLOSE = 64;

    private final DataSource connections;
    private final boolean pooled;
    private final String channel;
    private final String where;
    /** Held by a read in progress, so that close() can wait for it before it gives the connection back. */
    private final Semaphore reading = new Semaphore(1);
    /**
     * This listener in the waiter queues of lock rows, unguessable and unique among the table's clients; a
     * new one with every connection, whose advisory lock of the id tells releases that it listens.
     */
    private volatile String waiterId = UUID.randomUUID().toString();
    /** The names a waiter of this client waits for (the engine's watch and unwatch). */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    /** The names whose queue a refusal of this client's waiter put it in, until a grant took it out. */
    private final Set<String> queued = ConcurrentHashMap.newKeySet();
    /** Runs the backend's leave statement for a name (one round trip; never on the engine's threads). */
    private final Consumer<String> leave;
    /** One thread, started when there is a leave to run and gone after a few idle seconds. */
    private final ThreadPoolExecutor leaving;

    private volatile Connection connection;
    private volatile Sink sink;
    private volatile boolean closed;

    /**
     * @param connections where the listening connection comes from (pgjdbc, or a pool that unwraps to it)
     * @param pooled      whether that is the application's pool, which must get its connection back clean
     * @param leave       runs the leave statement for this listener's waiter and a name
     * @param where       the server for log lines, without credentials
     */
    ReleaseListener(DataSource connections, boolean pooled, String channel, Consumer<String> leave, String where) {
        this.connections = connections;
        this.pooled = pooled;
        this.channel = channel;
        this.leave = leave;
        this.where = where;
        this.leaving =
                new ThreadPoolExecutor(0, 1, LEAVER_IDLE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "fencelock-postgres-leave");
                    t.setDaemon(true);
                    return t;
                });
    }

    @Override
    public void open(Sink sink) {
        requireOpen();
        Connection c = null;
        try {
            c = connections.getConnection();
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // LISTEN in an open transaction would wait for a commit
            }
            c.unwrap(PGConnection.class); // fail now, not in a read, if this is not pgjdbc
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN \"" + channel + "\""); // built from validated identifiers
            }
            String id = UUID.randomUUID().toString();
            try (PreparedStatement ps = c.prepareStatement(LISTENING)) {
                ps.setString(1, id);
                ps.execute(); // a fresh id's key is free (held elsewhere, it would only read as listening)
            }
            queued.clear(); // the previous connection's id is gone with it: releases skip it
            waiterId = id;
        } catch (SQLException e) {
            closeQuietly(c);
            throw failure("cannot listen for releases on", e);
        }
        this.sink = sink;
        watched.clear(); // the engine watches them again once the feed is open
        connection = c;
        if (closed) {
            closeQuietly(connection);
            connection = null;
            requireOpen();
        }
    }

    @Override
    public void watch(String name) {
        watched.add(name);
    }

    @Override
    public void unwatch(String name) {
        watched.remove(name);
        if (queued.remove(name)) {
            leaveLater(name, false);
        }
    }

    /** This listener's id when a waiter of this client waits for {@code name} and the connection listens, else null. */
    String waiterFor(String name) {
        return connection != null && !watched.isEmpty() && watched.contains(name) ? waiterId : null;
    }

    /** This listener's id, as the leave statement names it. */
    String waiterId() {
        return waiterId;
    }

    /** An attempt that named this listener's waiter was refused: the refusal queued it on the name's row. */
    void refused(String name) {
        queued.add(name);
    }

    /** An attempt that named this listener's waiter was granted: the grant took it out of the queue. */
    void granted(String name) {
        queued.remove(name);
    }

    /**
     * Leaves {@code name}'s queue on the leaving thread, unless a waiter of this client waits for the name
     * again by then: it keeps the place, and takes a wake-up this client was sent ({@code woken}) itself.
     */
    private void leaveLater(String name, boolean woken) {
        try {
            leaving.execute(() -> {
                if (closed) {
                    return;
                }
                if (watched.contains(name)) {
                    Sink s = sink;
                    if (woken && s != null) {
                        s.released(name);
                    }
                    return;
                }
                leave.accept(name);
            });
        } catch (RejectedExecutionException e) {
            log.debug("fencelock: not leaving the queue of '{}' on {}: the listener is closed", name, where);
        }
    }

    @Override
    public boolean needsReading() {
        return true;
    }

    @Override
    public void read(Duration max) {
        requireOpen();
        if (!reading.tryAcquire()) {
            throw new IllegalStateException("one reader at a time");
        }
        Connection c = connection;
        try {
            if (closed || c == null) {
                return;
            }
            // at least 2 ms: a 1 ms wait is the driver's peek, which ListenerSocketFactory answers at once
            PGNotification[] notifications =
                    c.unwrap(PGConnection.class).getNotifications((int) Math.max(2, max.toMillis()));
            if (notifications == null || notifications.length == 0) {
                if (!closed && !c.isValid(VALIDATION_SECONDS)) {
                    throw new SQLException("the connection no longer answers", "08006");
                }
                return;
            }
            for (PGNotification notification : notifications) {
                heard(notification.getParameter());
            }
        } catch (SQLException e) {
            if (closed) {
                return;
            }
            connection = null;
            closeQuietly(c);
            throw failure("lost the release listener connection to", e);
        } finally {
            reading.release();
        }
    }

    /**
     * One payload: a released name (every waiter of it), {@code "name waiter"} (this client's waiter woken
     * alone), or {@code "name waiter lease token expiry-µs"} (a release granted the lease this client queued).
     */
    private void heard(String payload) {
        int space = payload.indexOf(' ');
        if (space < 0) {
            sink.released(payload); // every waiter of the name
            return;
        }
        int end = space + 1 + waiterId.length();
        if (!payload.startsWith(waiterId, space + 1) || payload.length() != end && payload.charAt(end) != ' ') {
            return; // another client's
        }
        String name = payload.substring(0, space);
        if (payload.length() > end) {
            queued.remove(name); // the release took this client out of the queue, granting it
            String[] grant = payload.substring(end + 1).split(" ");
            if (grant.length == 3) {
                // the engine gives it to the waiter queued under the lease, or, when none is, releases it
                long micros = Long.parseLong(grant[2]);
                sink.granted(
                        name,
                        grant[0],
                        Long.parseLong(grant[1]),
                        Instant.ofEpochSecond(
                                Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000));
            }
        } else if (watched.contains(name)) {
            // this client's waiter, woken alone; it stays "queued": should it stop waiting without a grant, its
            // leave passes the wake-up on
            sink.released(name);
        } else {
            queued.remove(name); // the release took this client out of the queue
            leaveLater(name, true); // woken after its waiters stopped waiting: pass the wake-up on
        }
    }

    private LockBackendException failure(String what, SQLException e) {
        return new LockBackendException(
                what + " " + where + " (" + e.getSQLState() + ": " + Redaction.message(e.getMessage()) + ")", true);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the release listener of " + where + " is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        leaving.shutdown();
        // a client that closes while queued leaves now, so that a release does not wake it in vain
        queued.stream().limit(MAX_LEAVES_ON_CLOSE).forEach(leave);
        queued.clear();
        Connection listening = connection;
        if (listening == null) {
            return;
        }
        // A read may be blocked on the connection. Our own connection is simply aborted; a connection
        // of the application's pool is woken with a notification instead, so that it goes back to the
        // pool usable, without the LISTEN.
        if (pooled && wakeUp() && awaitNoRead()) {
            giveBack(listening);
        } else {
            try {
                listening.abort(Runnable::run);
            } catch (SQLException | RuntimeException e) {
                log.debug("fencelock: aborting the release listener connection failed: {}", e.toString());
            }
            awaitNoRead();
            closeQuietly(listening);
        }
        connection = null;
    }

    private boolean awaitNoRead() {
        try {
            if (reading.tryAcquire(JOIN_MILLIS, TimeUnit.MILLISECONDS)) {
                reading.release();
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** Sends an empty notification on the channel: no lock has an empty name, so it only ends a read. */
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

    /** Leaves the channel and closes the connection (it goes back to the application's pool). */
    private void giveBack(Connection c) {
        try (Statement s = c.createStatement();
                PreparedStatement ps = c.prepareStatement(NOT_LISTENING)) {
            s.execute("UNLISTEN *");
            ps.setString(1, waiterId);
            ps.execute();
        } catch (SQLException e) {
            log.debug("fencelock: UNLISTEN before returning the connection failed: {}", e.toString());
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

    @Override
    public String toString() {
        return where;
    }
}
