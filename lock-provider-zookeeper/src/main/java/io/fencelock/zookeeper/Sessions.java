package io.fencelock.zookeeper;

import io.fencelock.LockBackendException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
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
 *
 * <p>On an ensemble the leader, which expires sessions, hears of a member's requests up to a
 * {@code lag} late ({@link LeaderView}): a grant or renewal counts only once the session is proven
 * alive at the leader from its send to its TTL's end ({@link #proven}). Each lock session sends a
 * heartbeat of its own after a quiet spell, so that proof is at hand while the process runs.
 */
final class Sessions {
    /** The control session holds no locks: its timeout only bounds how fast it notices a dead server. */
    private static final long CONTROL_SESSION_MILLIS = 10_000;
    /** What the session that learns the server's minimum timeout asks for, per server. */
    private static final long PROBE_MILLIS_PER_SERVER = 50;
    /** Connections tried by the session that learns the server's maximum timeout, each given a share of the request timeout. */
    private static final int LONGEST_PROBE_ATTEMPTS = 3;

    private final String connectString;
    private final ZKClientConfig config;
    private final Duration timeout;
    private final BiConsumer<Session, WatchedEvent> controlEvents;
    private final ConcurrentHashMap<Long, Session> byClass = new ConcurrentHashMap<>();
    private final ReentrantLock opening = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The longest session timeout the server granted when asked for more (0 until one was clamped). */
    private final AtomicLong serverMaxMillis = new AtomicLong();
    /** How late the leader may hear of a member's request (nanos); -1 until learned. */
    private volatile long lagNanos;

    private final ScheduledExecutorService scheduler;
    private final ConcurrentHashMap<Session, ScheduledFuture<?>> heartbeats = new ConcurrentHashMap<>();
    private final AtomicLong proofs = new AtomicLong();

    private volatile boolean heartbeatsPaused;

    private volatile Session control;

    /**
     * {@code controlEvents} hears the control session's state changes (for the watches on it); the
     * heartbeats run on {@code scheduler} (the backend's one timer thread).
     */
    Sessions(
            ZooKeeperSettings settings,
            BiConsumer<Session, WatchedEvent> controlEvents,
            ScheduledExecutorService scheduler) {
        this.connectString = settings.connectString();
        this.config = settings.clientConfig();
        this.timeout = settings.requestTimeout;
        this.controlEvents = controlEvents;
        this.scheduler = scheduler;
        this.lagNanos = settings.leaderLag == null ? -1 : settings.leaderLag.toNanos();
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
            Session fresh = open(millis, leaderLagNanos());
            long granted = fresh.negotiatedMillis();
            if (granted < millis) {
                serverMaxMillis.set(granted);
                if (granted < ttl.toMillis()) {
                    fresh.close();
                    throw tooLong(ttl, granted);
                }
            }
            byClass.put(millis, fresh);
            startHeartbeats(fresh);
            return fresh;
        } finally {
            opening.unlock();
        }
    }

    /** The server's maxSessionTimeout, asked once with a session that requests the longest timeout there is. */
    Duration maxTtl() {
        long max = serverMaxMillis.get();
        if (max == 0) {
            Session probe = openLongestProbe();
            try {
                max = probe.negotiatedMillis();
                serverMaxMillis.set(max);
            } finally {
                probe.endOnItsOwnThread(false); // nobody waits for it
            }
        }
        return Duration.ofMillis(max);
    }

    /**
     * The session that asks for the longest timeout there is. The client's connect timeout is the asked
     * timeout over the servers, weeks here, so unlike every other session's client it would never give up a
     * connection whose handshake went unanswered: each attempt waits a share of the request timeout, and the
     * next one opens a new connection.
     */
    private Session openLongestProbe() {
        Duration share = timeout.dividedBy(LONGEST_PROBE_ATTEMPTS);
        for (int attempt = 1; ; attempt++) {
            try {
                return open(Integer.MAX_VALUE, 0, share);
            } catch (LockBackendException e) {
                if (attempt == LONGEST_PROBE_ATTEMPTS || Thread.currentThread().isInterrupted()) {
                    throw e;
                }
            }
        }
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
            control = open(CONTROL_SESSION_MILLIS, 0); // carries no lock: nothing to prove
            return control;
        } finally {
            opening.unlock();
        }
    }

    /**
     * Whether a grant or renewal sent at {@code sent} in {@code s} may count on the session until {@code until}
     * (its send plus its TTL): at once when what the leader heard of the session covers that stretch ({@link LeaderView}), else
     * after one write the leader checks, sent {@code lag} after now. By then the leader has heard of the
     * grant, which reached a member before its answer; a session still alive then was never expired before,
     * so it lives one timeout past the grant. False when the session expired (with the grant's lock).
     */
    boolean proven(Session s, long sent, long until, ZooKeeperCalls calls, String operation, String subject) {
        LeaderView view = s.view();
        if (view.covers(sent, until)) {
            return true;
        }
        proofs.incrementAndGet();
        long checkAt = System.nanoTime() + view.lagNanos();
        boolean interrupted = false;
        for (long left; (left = checkAt - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left); // a grant is made: an interrupt does not undo it, it waits on
            interrupted |= Thread.interrupted();
        }
        try {
            Code code = calls.await(operation, subject, ZooKeeperCalls.multi(s, List.of(Op.check("/", -1))))
                    .code();
            if (code == Code.SESSIONEXPIRED) {
                s.abandon();
                return false;
            }
            if (code != Code.OK) {
                throw calls.failure(operation, subject, code);
            }
            return true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * How late the leader may hear of a member's request: as configured, else half the server's
     * {@code minSessionTimeout}, which is one {@code tickTime} at ZooKeeper's defaults (members report
     * every half tick). That is learned once, by a session that asks for {@value #PROBE_MILLIS_PER_SERVER} ms
     * per server (the client's connect timeout is the asked timeout over the servers, so it cannot ask for
     * less): the server raises it to its minimum, or grants it when its minimum is lower, and half of it is
     * then still no shorter than the tick. -1 when no server answered: each session then takes half its
     * own timeout, no shorter either.
     */
    long leaderLagNanos() {
        long lag = lagNanos;
        if (lag >= 0) {
            return lag;
        }
        Session probe;
        try {
            probe = open(PROBE_MILLIS_PER_SERVER * servers(connectString), 0);
        } catch (LockBackendException e) {
            return -1;
        }
        try {
            lag = TimeUnit.MILLISECONDS.toNanos(probe.negotiatedMillis()) / 2;
            lagNanos = lag;
            return lag;
        } finally {
            probe.endOnItsOwnThread(false); // nobody waits for it
        }
    }

    private static int servers(String connectString) {
        int chroot = connectString.indexOf('/');
        String hosts = chroot < 0 ? connectString : connectString.substring(0, chroot);
        return hosts.split(",", -1).length;
    }

    /**
     * A heartbeat (an {@code exists} of the root) whenever the session sent nothing for a third of
     * {@code timeout - lag}: the spans the leader surely heard then overlap, so grants are proven at once.
     * The ZooKeeper client's own pings keep the session alive too, but their answers are not seen here.
     */
    private void startHeartbeats(Session s) {
        LeaderView view = s.view();
        long every = (view.timeoutNanos() - view.lagNanos()) / 3;
        if (every < TimeUnit.MILLISECONDS.toNanos(1)) {
            return; // a lag as long as the timeout: no span can be proven, every grant is checked after the lag
        }
        try {
            heartbeats.put(
                    s,
                    scheduler.scheduleAtFixedRate(
                            () -> {
                                if (!heartbeatsPaused
                                        && s.isConnected()
                                        && System.nanoTime() - view.lastSent() >= every) {
                                    ZooKeeperCalls.exists(s, "/");
                                }
                            },
                            every,
                            every,
                            TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            // the backend is closing
        }
        if (!s.live()) {
            stopHeartbeats(s);
        }
    }

    private void stopHeartbeats(Session s) {
        ScheduledFuture<?> beat = heartbeats.remove(s);
        if (beat != null) {
            beat.cancel(false);
        }
    }

    /** A new session, connected; a retryable failure when no server answers within the request timeout. */
    private Session open(long millis, long lagNanos) {
        return open(millis, lagNanos, timeout);
    }

    /** A new session, connected; a retryable failure when no server answers within {@code wait}. */
    private Session open(long millis, long lagNanos, Duration wait) {
        Session s;
        try {
            s = new Session(connectString, millis, lagNanos, config, this::ended, this::stateChanged);
        } catch (IOException | RuntimeException e) {
            throw new LockBackendException(
                    "cannot open a ZooKeeper session on " + connectString + ": " + e.getMessage(), e, true);
        }
        try {
            return s.connected.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            s.close();
            Thread.currentThread().interrupt();
            throw new LockBackendException("opening a ZooKeeper session on " + connectString + " interrupted", e, true);
        } catch (TimeoutException | ExecutionException e) {
            s.abandon(); // never carried a lock
            throw new LockBackendException(
                    "no ZooKeeper server of " + connectString + " answered within " + wait, e, true);
        }
    }

    private void ended(Session s) {
        byClass.remove(s.requestedMillis, s);
        stopHeartbeats(s);
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
        List<Thread> enders = new ArrayList<>();
        for (Session s : List.copyOf(byClass.values())) {
            enders.add(s.endOnItsOwnThread(carriesLocks.test(s)));
        }
        Session c = control;
        if (c != null) {
            enders.add(c.endOnItsOwnThread(false));
        }
        boolean interrupted = false;
        for (Thread ender : enders) {
            while (ender != null && ender.isAlive()) {
                try {
                    ender.join();
                } catch (InterruptedException e) {
                    interrupted = true; // a close finishes: the sessions' clients end in any case
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** For tests: the sessions that carry locks, by session class (ms). */
    Map<Long, Session> byClass() {
        return new HashMap<>(byClass);
    }

    /** For tests: how many grants and renewals needed the leader's check after the lag. */
    long proofsByCheck() {
        return proofs.get();
    }

    /** For tests: stops (or restarts) the heartbeats, as a stalled process would. */
    void pauseHeartbeats(boolean paused) {
        heartbeatsPaused = paused;
    }
}
