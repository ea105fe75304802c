package io.fencelock.zookeeper;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the leader of the ensemble has surely heard of one session, judged from this backend's own
 * requests that a server answered: whether a grant or renewal sent at {@code t0} may count on its session
 * living at least until {@code t0 + ttl}, its holder's deadline.
 *
 * <p><b>Why.</b> Only the leader expires sessions. A member touches a session when a request of it
 * arrives, but tells the leader only in its answer to the leader's next ping (every half tick). A write
 * the member forwards is checked against the session at the leader, not counted as a touch there. So a
 * session the leader last heard of nearly a timeout ago (its client stalled between two heartbeats) can
 * be granted a create and expired a moment later, before the leader hears of the create: the lock ends
 * long before its holder's deadline, and another client takes it. A standalone server touches on
 * arrival and cannot do this; the rule below costs it nothing.
 *
 * <p><b>The rule.</b> Assume the leader hears of a member's touch within {@code lag}. A request sent at
 * {@code s} and answered at {@code a} touched the session between the two, so the leader counts the session
 * alive over {@code [a + lag, s + timeout)}. A grant sent at {@code t0} keeps its lock until {@code t0 +
 * timeout} (at least its TTL) once the leader has heard of the grant itself, which it has by its answer
 * plus {@code lag}; before that, the session must live on what the leader heard earlier. So a grant is
 * proven when the spans of the answered requests cover {@code [t0, t0 + ttl)} without a gap. The leader
 * opens a session itself: the open covers {@code [connected, asked + timeout)}. Heartbeats keep the cover
 * unbroken while the process runs; a grant that is not covered (after a stall) is proven by a write the
 * leader checks, sent {@code lag} after the grant's answer ({@link Sessions#proven}).
 */
final class LeaderView {
    private final long timeoutNanos;
    private final long lagNanos;
    private final ReentrantLock lock = new ReentrantLock();
    /** The latest unbroken run of covered time, nanoTime; empty until the session is open. */
    private long coverStart;

    private long coverEnd;
    private boolean covering;
    private final AtomicLong lastSent = new AtomicLong(System.nanoTime());

    LeaderView(long timeoutNanos, long lagNanos) {
        this.timeoutNanos = timeoutNanos;
        this.lagNanos = lagNanos;
    }

    /** The session was opened by a request sent at {@code asked} and reported connected at {@code connected}. */
    void opened(long asked, long connected) {
        cover(connected, asked + timeoutNanos);
    }

    /** A request of this session is about to be sent. */
    void sending(long sent) {
        lastSent.accumulateAndGet(sent, (a, b) -> b - a > 0 ? b : a);
    }

    /** A server answered a request of this session sent at {@code sent}, at {@code answered}. */
    void heard(long sent, long answered) {
        cover(answered + lagNanos, sent + timeoutNanos);
    }

    /**
     * Whether the session surely lives through {@code [from, to)} at the leader, from what it has heard so far
     * (a holder's deadline lies before its send plus its TTL).
     */
    boolean covers(long from, long to) {
        lock.lock();
        try {
            return covering && coverStart - from <= 0 && coverEnd - to >= 0;
        } finally {
            lock.unlock();
        }
    }

    /** When a request of this session was last sent (nanoTime): a heartbeat is due only after a quiet spell. */
    long lastSent() {
        return lastSent.get();
    }

    long lagNanos() {
        return lagNanos;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    private void cover(long from, long until) {
        if (until - from <= 0) {
            return; // answered too late to say anything about the leader's view
        }
        lock.lock();
        try {
            if (!covering || from - coverEnd > 0) {
                // a gap: the leader may have expired the session in it, so a proven run starts anew
                coverStart = from;
                coverEnd = until;
                covering = true;
            } else if (until - coverStart >= 0) { // overlaps the run (answers may come out of order)
                coverStart = from - coverStart < 0 ? from : coverStart;
                coverEnd = until - coverEnd > 0 ? until : coverEnd;
            } // else: wholly before the run, older news
        } finally {
            lock.unlock();
        }
    }
}
