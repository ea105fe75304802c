package io.fencelock.zookeeper;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * One ZooKeeper session: a client handle, its negotiated timeout, and whether it is still usable.
 * A session is dead once it expired, was closed, or was abandoned ({@link #abandon()}: the client
 * stops without telling the server, which then expires the session after its timeout).
 */
final class Session implements Watcher {
    final long requestedMillis;
    final Handle zk;
    final CompletableFuture<Session> connected = new CompletableFuture<>();
    private final Consumer<Session> onDeath;
    private final BiConsumer<Session, WatchedEvent> onState;
    private final AtomicBoolean live = new AtomicBoolean(true);
    private final long lagNanos;
    private final long asked = System.nanoTime();
    private volatile boolean isConnected;
    /** Known once connected: the timeout is negotiated then. */
    private volatile LeaderView view;
    /** Open once {@link #zk} is assigned: the client's event thread may deliver the connection before that. */
    private final CountDownLatch handleAssigned = new CountDownLatch(1);

    Session(
            String connectString,
            long requestedMillis,
            long lagNanos,
            ZKClientConfig config,
            Consumer<Session> onDeath,
            BiConsumer<Session, WatchedEvent> onState)
            throws IOException {
        this.requestedMillis = requestedMillis;
        this.lagNanos = lagNanos;
        this.onDeath = onDeath;
        this.onState = onState;
        // ZooKeeper negotiates a session timeout no longer than its maxSessionTimeout; a longer request is capped to an
        // int
        try {
            this.zk = new Handle(connectString, (int) Math.min(Integer.MAX_VALUE, requestedMillis), this, config);
        } finally {
            handleAssigned.countDown();
        }
    }

    /** The client handle; subclassed only to stop it without a closeSession request. */
    static final class Handle extends ZooKeeper {
        Handle(String connectString, int sessionTimeout, Watcher watcher, ZKClientConfig config) throws IOException {
            super(connectString, sessionTimeout, watcher, config);
        }

        /** Stops the client's threads and socket without ending the session on the server. */
        void disconnectOnly() {
            cnxn.disconnect();
        }
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() != Event.EventType.None) {
            return;
        }
        // The handle's constructor starts the client's threads before it returns, so its first event (the
        // connection, whose negotiated timeout is read from the handle) can come before the handle is assigned:
        // wait for it, or the connection would be lost and the session's opening would wait out its timeout.
        try {
            handleAssigned.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the client is stopping: nothing waits for its events any more
            return;
        }
        switch (event.getState()) {
            case SyncConnected, ConnectedReadOnly -> {
                if (view == null) {
                    long timeoutNanos = negotiatedMillis() * 1_000_000L;
                    // lag unknown (-1): half the timeout, no less than the tick (the timeout is at least two)
                    LeaderView v = new LeaderView(timeoutNanos, lagNanos >= 0 ? lagNanos : timeoutNanos / 2);
                    v.opened(asked, System.nanoTime()); // the leader itself opened the session
                    view = v;
                }
                isConnected = true;
                connected.complete(this);
            }
            case Disconnected -> isConnected = false;
            case Expired, Closed, AuthFailed -> die();
            default -> {}
        }
        onState.accept(this, event);
    }

    /** Whether the session may still exist on the server and this client can use it. */
    boolean live() {
        return live.get();
    }

    /** Whether the client is connected to a server right now. */
    boolean isConnected() {
        return live.get() && isConnected;
    }

    long id() {
        return zk.getSessionId();
    }

    /** What the leader has surely heard of this session; null until it is connected. */
    LeaderView view() {
        return view;
    }

    /** The timeout the server granted (known once connected). */
    long negotiatedMillis() {
        return zk.getSessionTimeout();
    }

    /**
     * Stops using this session without ending it on the server: its ephemeral znodes live until the
     * server expires it, at least its timeout after the last request it received, so no lock on it
     * ends before the deadline its holder was given. Returns at once, the session dead: its client closes
     * its socket on a thread of its own and then sleeps there (below), not on the caller's (a renewal, an
     * acquire, the backend's one timer thread, whose give-backs and heartbeats would wait behind it). The
     * server may hear a last ping meanwhile, which only makes the session live a moment longer.
     */
    void abandon() {
        endOnItsOwnThread(true);
    }

    /** Ends the session on the server at once (its ephemeral znodes are deleted); only for a session that holds none. */
    void close() {
        if (die()) {
            end(false);
        }
    }

    /**
     * Ends the session as {@link #abandon()} or {@link #close()} does, on a short-lived thread of its own,
     * started now; the session is dead at once. Null when it had already ended. ZooKeeper's NIO client
     * sleeps 100 ms while it tears its socket down: a probe (which holds nothing, and which nothing else
     * uses) then costs its caller nothing, and a backend's sessions end side by side when it closes.
     */
    Thread endOnItsOwnThread(boolean abandoned) {
        if (!die()) {
            return null;
        }
        Thread ender = new Thread(() -> end(abandoned), "fencelock-zookeeper-session-end");
        ender.setDaemon(true);
        ender.start();
        return ender;
    }

    /** Stops the client of a session that has died: abandoned (nothing more reaches the server) or ended there. */
    private void end(boolean abandoned) {
        if (abandoned) {
            zk.disconnectOnly();
            return;
        }
        try {
            zk.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean die() {
        boolean was = live.getAndSet(false);
        isConnected = false;
        connected.completeExceptionally(new IllegalStateException("the ZooKeeper session ended before it connected"));
        if (was) {
            onDeath.accept(this);
        }
        return was;
    }

    @Override
    public String toString() {
        // the ZooKeeper constructor logs its watcher (this session) before the handle is assigned
        Handle handle = zk;
        return handle == null
                ? "session not yet opened (" + requestedMillis + " ms asked)"
                : "session 0x" + Long.toHexString(handle.getSessionId()) + " (" + requestedMillis + " ms asked)";
    }
}
