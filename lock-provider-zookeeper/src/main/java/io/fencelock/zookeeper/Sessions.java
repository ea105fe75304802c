package io.fencelock.zookeeper;

import io.fencelock.LockBackendException;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * A backend's ZooKeeper sessions. A lock rides on a session whose timeout is its TTL rounded up to
 * three significant bits (at most 12.5% more), one session per such class, opened on first use and
 * kept. The server keeps a session at least its timeout after the last request it received from it,
 * so a lock granted or renewed by a request sent at {@code t0} lives at least until {@code t0 + ttl};
 * a crashed, frozen or cut-off holder's session expires at most one timeout and one tick after the
 * last request that reached the server. A control session, for watches and reads, carries no lock.
 * The server's {@code maxSessionTimeout} bounds the TTLs.
 */
final class Sessions {
    /** The control session holds no locks: its timeout only bounds how fast it notices a dead server. */
    private static final long CONTROL_SESSION_MILLIS = 10_000;

    private final String connectString;
    private final ZKClientConfig config;
    private final Duration timeout;
    private final BiConsumer<Session, WatchedEvent> controlEvents;
    private final ConcurrentHashMap<Long, Session> byClass = new ConcurrentHashMap<>();
    private final ReentrantLock opening = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The longest session timeout the server granted when asked for more (0 until one was clamped). */
    private final AtomicLong serverMaxMillis = new AtomicLong();

    private volatile Session control;

    /** {@code controlEvents} hears the control session's state changes (for the watches on it). */
    Sessions(ZooKeeperSettings settings, BiConsumer<Session, WatchedEvent> controlEvents) {
        this.connectString = settings.connectString();
        this.config = settings.clientConfig();
        this.timeout = settings.requestTimeout;
        this.controlEvents = controlEvents;
    }

    /**
     * The session timeout for locks of {@code ttl}: the TTL in milliseconds rounded up to three
     * significant bits ({@code m x 2^e}, {@code m} in 8..15), so at most 12.5% longer, and a handful
     * of classes per factor of two however many TTLs are used.
     */
    static long sessionMillis(Duration ttl) {
        long ms = Math.max(1, ttl.toMillis() + (ttl.toNanos() % 1_000_000 == 0 ? 0 : 1));
        if (ms <= 16) {
            return ms;
        }
        long unit = Long.highestOneBit(ms) >> 3; // an eighth of the leading power of two
        return (ms + unit - 1) / unit * unit;
    }

    /** The live session for locks of {@code ttl}, opened now (one round trip) if there is none. */
    Session forTtl(Duration ttl) {
        long millis = sessionMillis(ttl);
        long max = serverMaxMillis.get();
        if (max > 0 && ttl.toMillis() > max) {
            throw tooLong(ttl, max);
        }
        Session s = byClass.get(millis);
        if (s != null && s.live()) {
            return s;
        }
        opening.lock();
        try {
            s = byClass.get(millis);
            if (s != null && s.live()) {
                return s;
            }
            Session fresh = open(millis);
            long granted = fresh.negotiatedMillis();
            if (granted < millis) {
                serverMaxMillis.set(granted);
                if (granted < ttl.toMillis()) {
                    fresh.close();
                    throw tooLong(ttl, granted);
                }
            }
            byClass.put(millis, fresh);
            return fresh;
        } finally {
            opening.unlock();
        }
    }

    /** The server's maxSessionTimeout, asked once with a session that requests the longest timeout there is. */
    Duration maxTtl() {
        long max = serverMaxMillis.get();
        if (max == 0) {
            Session probe = open(Integer.MAX_VALUE);
            try {
                max = probe.negotiatedMillis();
                serverMaxMillis.set(max);
            } finally {
                probe.close();
            }
        }
        return Duration.ofMillis(max);
    }

    private LockBackendException tooLong(Duration ttl, long max) {
        return new LockBackendException(
                "ttl " + ttl + " is longer than the longest session " + connectString + " grants ("
                        + max
                        + " ms, its maxSessionTimeout): a lock could outlive its session's guarantee; use a shorter ttl"
                        + " or raise maxSessionTimeout",
                false);
    }

    /** The control session, for watches and reads; it carries no locks. */
    Session control() {
        Session c = control;
        if (c != null && c.live()) {
            return c;
        }
        requireOpen();
        opening.lock();
        try {
            c = control;
            if (c != null && c.live()) {
                return c;
            }
            control = open(CONTROL_SESSION_MILLIS);
            return control;
        } finally {
            opening.unlock();
        }
    }

    /** A new session, connected; a retryable failure when no server answers within the request timeout. */
    private Session open(long millis) {
        Session s;
        try {
            s = new Session(connectString, millis, config, this::ended, this::stateChanged);
        } catch (IOException | RuntimeException e) {
            throw new LockBackendException(
                    "cannot open a ZooKeeper session on " + connectString + ": " + e.getMessage(), e, true);
        }
        try {
            return s.connected.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            s.close();
            Thread.currentThread().interrupt();
            throw new LockBackendException("opening a ZooKeeper session on " + connectString + " interrupted", e, true);
        } catch (TimeoutException | ExecutionException e) {
            s.abandon(); // never carried a lock
            throw new LockBackendException(
                    "no ZooKeeper server of " + connectString + " answered within " + timeout, e, true);
        }
    }

    private void ended(Session s) {
        byClass.remove(s.requestedMillis, s);
    }

    private void stateChanged(Session s, WatchedEvent event) {
        // every session's events go to the release feed, which follows only the control session it watches on:
        // a control session replaced between its death and its event must not leave the feed silently dead
        if (!closed.get()) {
            controlEvents.accept(s, event);
        }
    }

    void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this ZooKeeper lock backend is closed");
        }
    }

    /** Marks the backend closed, once: false when it already was. */
    boolean markClosed() {
        return closed.compareAndSet(false, true);
    }

    /**
     * Closes every session. A session that still carries locks is abandoned rather than ended, so its
     * locks stay held until the server expires it (their TTL at most, rounded up to the session class);
     * the others, and the control session, are ended at once.
     */
    void closeAll(Predicate<Session> carriesLocks) {
        for (Session s : List.copyOf(byClass.values())) {
            if (carriesLocks.test(s)) {
                s.abandon();
            } else {
                s.close();
            }
        }
        Session c = control;
        if (c != null) {
            c.close();
        }
    }

    /** For tests: the sessions that carry locks, by session class (ms). */
    Map<Long, Session> byClass() {
        return new HashMap<>(byClass);
    }
}
