package io.fencelock.zookeeper;

import io.fencelock.spi.RenewRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locks a backend granted or tried to grant, by lease id, and their expiry.
 *
 * <p><b>Why this provider schedules</b>, when the SPI says a provider does not: a ZooKeeper lock ends
 * only with its session or by a delete, and the client keeps its sessions alive by itself (heartbeats,
 * without any call of the engine's). A lock whose holder stopped renewing would ride on its session as
 * long as the process runs, and no engine call comes when its TTL runs out (etcd's shared leases, by
 * contrast, live only through keep-alives sent with the engine's renewals, which drop the due holds).
 * So one timer thread per backend gives back each hold whose TTL ran out without a renewal, at that
 * moment, on the monotonic clock; an acquire or release whose outcome is unknown is settled the same
 * way (a give-back ends only this hold's own grant: its znode with its lease marker, {@link Znodes}).
 * When the delete cannot be sent (no connection) or fails, the session is abandoned instead: the
 * client stops without ending it, so the server expires it after its timeout, never before the
 * deadline of another lock on it (each was granted or renewed before the session's last request).
 * The same thread re-registers the wake-up watches.
 */
final class Holds {
    private static final Logger log = LoggerFactory.getLogger(Holds.class);

    /**
     * A lock this backend granted or tried to grant. {@code certain}: the create succeeded, so
     * {@code token} is its znode's czxid. {@code due}: when its TTL runs out without a renewal
     * (nanoTime). {@code renewing}: renewals in flight, during which it is not given back. {@code sent}:
     * when the grant or the renewal that set {@code due} was sent (nanoTime).
     */
    record Hold(
            String name,
            String leaseId,
            Session session,
            long due,
            boolean certain,
            int renewing,
            long token,
            long sent) {
        Hold renewing(int delta) {
            return new Hold(name, leaseId, session, due, certain, renewing + delta, token, sent);
        }

        /** The due time on the wall clock, for the engine's view of the expiry. */
        Instant expiresAt() {
            return Instant.now().plusNanos(Math.max(0, due - System.nanoTime()));
        }
    }

    private final ConcurrentHashMap<String, Hold> byLease = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor timer;
    /** Deletes a hold's znode in its session; completes with whether it did. */
    private final Function<Hold, CompletableFuture<Boolean>> giveBack;

    private final Duration timeout;
    private final String where;

    Holds(Function<Hold, CompletableFuture<Boolean>> giveBack, Duration timeout, String where) {
        this.giveBack = giveBack;
        this.timeout = timeout;
        this.where = where;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "fencelock-zookeeper-expiry");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Records a grant of {@code ttl} about to be sent in {@code s} (an acquire's create, a hand-over's
     * {@code multi}), due from now: given back at its due time unless confirmed and renewed. Null when its
     * lease id is known here.
     */
    Hold begin(String name, String leaseId, Session s, Duration ttl) {
        long t0 = System.nanoTime();
        Hold pending = new Hold(name, leaseId, s, t0 + ttl.toNanos(), false, 0, 0, t0);
        if (byLease.putIfAbsent(leaseId, pending) != null) {
            return null;
        }
        expireAt(pending);
        return pending;
    }

    /** The create succeeded; false when the hold was given back meanwhile. */
    boolean confirm(Hold pending, Hold held) {
        return byLease.replace(pending.leaseId(), pending, held);
    }

    Hold get(String leaseId) {
        return byLease.get(leaseId);
    }

    boolean remove(Hold h) {
        return byLease.remove(h.leaseId(), h);
    }

    /**
     * Takes out the hold of {@code leaseId} on {@code name} for a release or a hand-over, whatever renewal of
     * it is in flight: a renewal replaces the hold (marked renewing, then renewed), so taking out the one
     * read a moment before could miss it and leave a held lock reported as not freed. The renewal then
     * finds it gone. With {@code onlyBeforeDue}, a hold past its TTL or on an ended session stays (its
     * give-back at its due time settles it). Null when nothing was taken.
     */
    Hold take(String leaseId, String name, boolean onlyBeforeDue) {
        Hold[] taken = new Hold[1];
        byLease.computeIfPresent(leaseId, (k, h) -> {
            if (!h.name().equals(name)
                    || onlyBeforeDue
                            && (System.nanoTime() - h.due() >= 0 || !h.session().live())) {
                return h;
            }
            taken[0] = h;
            return null;
        });
        return taken[0];
    }

    /** A release whose outcome is unknown: the hold comes back, uncertain, settled at its due time or by the next release. */
    void unsure(Hold h) {
        Hold unsure = new Hold(h.name(), h.leaseId(), h.session(), h.due(), false, 0, h.token(), h.sent());
        if (byLease.putIfAbsent(h.leaseId(), unsure) == null) {
            expireAt(unsure);
        }
    }

    /** The hold {@code q} renews, marked as renewing; null when it is not granted here, past its TTL, or its session ended. */
    Hold takeForRenewal(RenewRequest q, long t0) {
        Hold[] taken = new Hold[1];
        byLease.computeIfPresent(q.leaseId(), (k, h) -> {
            if (!h.name().equals(q.name())
                    || !h.certain()
                    || !h.session().live()
                    || t0 - h.due() >= 0
                    || q.ttl().toMillis() > h.session().negotiatedMillis()) {
                return h;
            }
            taken[0] = h.renewing(1);
            return taken[0];
        });
        if (taken[0] == null) {
            Hold h = byLease.get(q.leaseId());
            if (h != null && !h.session().live()) {
                byLease.remove(q.leaseId(), h);
            }
        }
        return taken[0];
    }

    /**
     * The renewal of {@code q} sent at {@code t0} is over: {@code alive} true (its znode was there, its
     * TTL runs from {@code t0}), false (gone: nothing of ours to give back) or null (unknown: it stays
     * due as before). The hold after it, or null. The latest renewal sent sets the due time, shorter
     * or longer: a renewal to a shorter TTL is given back when that TTL ends, not the old one (the
     * engine's deadline never passes it: it caps itself before sending a shortening).
     */
    Hold renewed(RenewRequest q, Boolean alive, long t0) {
        Hold next = byLease.computeIfPresent(
                q.leaseId(),
                (k, h) -> Boolean.FALSE.equals(alive)
                        ? null
                        : Boolean.TRUE.equals(alive)
                                ? t0 - h.sent() >= 0
                                        ? new Hold(
                                                h.name(),
                                                h.leaseId(),
                                                h.session(),
                                                t0 + q.ttl().toNanos(),
                                                true,
                                                h.renewing() - 1,
                                                h.token(),
                                                t0)
                                        : h.renewing(-1) // a later renewal was applied first: it decides
                                : h.renewing(-1));
        if (next != null) {
            expireAt(next);
        }
        return next;
    }

    /** The sessions some hold rides on. */
    Set<Session> sessions() {
        Set<Session> carrying = Collections.newSetFromMap(new IdentityHashMap<>());
        byLease.values().forEach(h -> carrying.add(h.session()));
        return carrying;
    }

    /** The expiry timer, shared with the sessions' heartbeats: one thread for the backend's timed work. */
    ScheduledExecutorService timer() {
        return timer;
    }

    void close() {
        timer.shutdownNow();
    }

    /** Gives back {@code h} at its due time unless it was renewed or released by then. */
    private void expireAt(Hold h) {
        try {
            timer.schedule(
                    () -> expire(h.leaseId(), h.due()), Math.max(0, h.due() - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void expire(String leaseId, long due) {
        Hold[] taken = new Hold[1];
        byLease.computeIfPresent(leaseId, (k, h) -> {
            if (h.due() != due || h.renewing() > 0 || System.nanoTime() - due < 0) {
                return h; // renewed, or a renewal is in flight (which reschedules it when done)
            }
            taken[0] = h;
            return null;
        });
        Hold h = taken[0];
        if (h == null || !h.session().live()) {
            return;
        }
        if (!h.session().isConnected()) {
            abandonFor(h);
            return;
        }
        giveBack.apply(h).orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((deleted, e) -> {
            if (e != null) {
                abandonFor(h);
            }
        });
    }

    /** A lock past its TTL that cannot be deleted now: its session must not carry it on, so the server is left to expire it. */
    private void abandonFor(Hold h) {
        log.debug(
                "fencelock: cannot give back '{}' on {}; abandoning {} so that the server expires it",
                h.name(),
                where,
                h.session());
        h.session().abandon();
    }
}
