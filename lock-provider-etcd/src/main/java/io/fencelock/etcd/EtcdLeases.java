package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.fencelock.LockBackendException;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One backend's etcd leases and the locks it holds on them. Locks of one TTL share one etcd lease,
 * granted on first use and kept alive by the renewals of any of them, so an acquire costs no grant
 * and a renewal one keep-alive per lease, not per lock. The price is bookkeeping: every grant this
 * backend made (or may have made) is a <i>hold</i> with the time its holder asked for, and a hold
 * that fell due without being renewed is deleted (owner-checked) the next time its lease is kept
 * alive, so that a lock nobody renews does not live on through its siblings.
 */
final class EtcdLeases {
    private static final Logger log = LoggerFactory.getLogger(EtcdLeases.class);

    private final Lease leases;
    private final KV kv;
    private final EtcdCalls calls;
    private final Function<String, ByteSequence> keyOf;
    private final String where;
    private final ConcurrentHashMap<Long, SharedLease> leaseBySeconds = new ConcurrentHashMap<>();
    /** By fencelock lease id: every grant this backend made or may have made (an acquire of unknown outcome). */
    private final ConcurrentHashMap<String, Hold> holds = new ConcurrentHashMap<>();

    private final ReentrantLock granting = new ReentrantLock();

    /** An etcd lease shared by the locks of one TTL; {@code validUntil} is a lower bound of its server-side expiry. */
    static final class SharedLease {
        final long id;
        /** The TTL class it carries: {@link #seconds(Duration)} of its locks' TTL. */
        final long carries;
        /** How long it lives: etcd may have raised {@link #carries} to its minimum. */
        final long seconds;

        volatile long validUntil; // System.nanoTime() scale
        volatile boolean dead;
        /** The latest keep-alive sent, answered or not: an acquire that began before it was sent may count on it. */
        volatile KeepAlive latest;

        SharedLease(long id, long carries, long seconds, long validUntil) {
            this.id = id;
            this.carries = carries;
            this.seconds = seconds;
            this.validUntil = validUntil;
        }
    }

    /** A keep-alive of a shared lease, sent after {@code sent} (nanoTime). */
    private record KeepAlive(long sent, CompletableFuture<LeaseKeepAliveResponse> answer) {}

    /**
     * A key this backend wrote for a grant or a waiter: on which etcd lease, and until when its holder
     * asked for it (nanoTime). A mutex key is dropped owner-checked; a shared key holds its id in its
     * name, so it is dropped as it is. {@code value}: a shared holder's value as written (for a downgrade).
     */
    private record Hold(
            String name,
            String id,
            ByteSequence key,
            boolean ownerChecked,
            SharedLease lease,
            long due,
            ByteSequence value) {}

    EtcdLeases(Lease leases, KV kv, EtcdCalls calls, Function<String, ByteSequence> keyOf, String where) {
        this.leases = leases;
        this.kv = kv;
        this.calls = calls;
        this.keyOf = keyOf;
        this.where = where;
    }

    /**
     * What a crashed holder's lock may outlive its TTL by, besides the headroom: etcd revokes expired
     * leases in a 500 ms loop, and the revocation, its watch event and the waiter's transaction take
     * a little more.
     */
    static final Duration REVOCATION = Duration.ofMillis(600);

    /**
     * The TTL of the etcd lease that carries locks of {@code ttl}: whole seconds (etcd's unit), at
     * least {@code ceil(ttl)}, and longer only where the longer lease still frees a crashed holder's
     * lock within {@code 1.25 x ttl}: {@code max(ceil(ttl), floor(1.25 x ttl - 600 ms))}. So a lock
     * of 2 to 5 s rides a lease of exactly its TTL (every acquire keeps the lease alive, in parallel),
     * and a lock of 30 s one of 36 s: a lease kept alive within the last 6 s covers a new lock's whole
     * TTL, so most acquires need no keep-alive. A TTL that is not a whole number of seconds is freed
     * late by the rounding up; etcd raises a TTL below its minimum ({@code 1.5 x election timeout}
     * rounded up, 2 s with default settings).
     */
    static long seconds(Duration ttl) {
        long atLeast = ttl.getSeconds() + (ttl.getNano() > 0 ? 1 : 0);
        long withinTarget = ttl.plus(ttl.dividedBy(4)).minus(REVOCATION).getSeconds(); // floor, >= 0 for ttl > 480 ms
        return Math.max(1, Math.max(atLeast, withinTarget));
    }

    /** This backend's live lease for locks of {@code ttl}, granted now (one round trip) if there is none or it may have expired. */
    SharedLease leaseFor(Duration ttl, long now) {
        long seconds = seconds(ttl);
        SharedLease l = leaseBySeconds.get(seconds);
        if (l != null && !l.dead && l.validUntil - now > 0) {
            return l;
        }
        granting.lock();
        try {
            l = leaseBySeconds.get(seconds);
            if (l != null && !l.dead && l.validUntil - System.nanoTime() > 0) {
                return l;
            }
            long sent = System.nanoTime();
            LeaseGrantResponse g = calls.await("grant of an etcd lease of ", seconds + " s", leases.grant(seconds));
            long lives = Math.max(seconds, g.getTTL()); // etcd raises a TTL below its minimum, never lowers one
            SharedLease fresh = new SharedLease(
                    g.getID(), seconds, lives, sent + TimeUnit.SECONDS.toNanos(g.getTTL() > 0 ? g.getTTL() : seconds));
            leaseBySeconds.put(seconds, fresh);
            return fresh;
        } finally {
            granting.unlock();
        }
    }

    /** Records that {@code leaseId} holds {@code name} on {@code lease} until {@code due} (nanoTime), or may. */
    void hold(String name, String leaseId, SharedLease lease, long due) {
        holds.put(leaseId, new Hold(name, leaseId, keyOf.apply(name), true, lease, due, null));
    }

    /** Records a shared key of {@code name} (a holder's, with its value, or a waiter's) written under {@code id}. */
    void holdShared(String name, String id, ByteSequence key, SharedLease lease, long due, ByteSequence value) {
        holds.put(id, new Hold(name, id, key, false, lease, due, value));
    }

    /** Records the hold of the key read back as {@code v}: the name's mutex key or a shared holder's key. */
    void hold(String name, String leaseId, KeyValue v, SharedLease lease, long due) {
        if (v.getKey().equals(keyOf.apply(name))) {
            hold(name, leaseId, lease, due);
        } else {
            holdShared(name, leaseId, v.getKey(), lease, due, v.getValue());
        }
    }

    /** The value this backend last wrote or read for {@code leaseId}'s shared grant of {@code name}, if it keeps one. */
    ByteSequence written(String name, String leaseId) {
        Hold h = holds.get(leaseId);
        return h != null && h.name.equals(name) ? h.value : null;
    }

    /** Whether {@code leaseId} holds (or may hold) a mutex of this backend's grants. */
    boolean holdsMutex(String leaseId) {
        Hold h = holds.get(leaseId);
        return h != null && h.ownerChecked;
    }

    /** Forgets the hold of {@code leaseId}: released, lost, or never granted. */
    void drop(String leaseId) {
        holds.remove(leaseId);
    }

    /**
     * The shared leases that the requests' locks were granted on by this backend, by etcd lease id;
     * a request for another TTL than its lease carries (or held elsewhere) has none: keeping a lock
     * renewed to a shorter TTL on its longer lease would outlive the new TTL when its holder stops.
     */
    Map<Long, SharedLease> leasesOf(List<RenewRequest> requests) {
        Map<Long, SharedLease> known = new LinkedHashMap<>();
        for (RenewRequest q : requests) {
            Hold h = holds.get(q.leaseId());
            if (h != null && h.name.equals(q.name()) && h.lease.carries == seconds(q.ttl())) {
                known.putIfAbsent(h.lease.id, h.lease);
            }
        }
        return known;
    }

    /**
     * What a grant of {@code ttl} on {@code l}, begun at {@code t0}, must wait for: nothing when the
     * lease is known to live {@code ttl} past {@code t0}; else a keep-alive sent after {@code t0} minus
     * the lease's headroom over {@code ttl}, which then gives it at least {@code ttl} past {@code t0}.
     * One in flight that was sent late enough serves every grant that asks, so concurrent acquires
     * on a lease of exactly their TTL share one keep-alive instead of sending one each.
     */
    CompletableFuture<LeaseKeepAliveResponse> keepAliveFor(SharedLease l, long t0, Duration ttl) {
        if (l.validUntil - t0 >= ttl.toNanos()) {
            return null;
        }
        KeepAlive k = l.latest;
        if (k != null
                && k.sent - t0 >= ttl.toNanos() - TimeUnit.SECONDS.toNanos(l.seconds)
                && !k.answer.isCompletedExceptionally()) {
            return k.answer;
        }
        return keepAlive(l, t0, Set.of());
    }

    /**
     * Sends one keep-alive for {@code l}; first gives back the holds on it that were due before
     * {@code sent} and are not being renewed now (by lease id), so that a lock nobody renews, or a
     * grant whose answer was lost, is not carried on by its siblings' renewals.
     */
    CompletableFuture<LeaseKeepAliveResponse> keepAlive(SharedLease l, long sent, Set<String> renewing) {
        for (Hold h : holds.values()) {
            if (h.lease == l && h.due - sent < 0 && !renewing.contains(h.id) && holds.remove(h.id, h)) {
                kv.txn()
                        .If(h.ownerChecked ? EtcdRecords.heldBy(h.key, h.id) : new Cmp[0])
                        .Then(Op.delete(h.key, DeleteOption.DEFAULT))
                        .commit()
                        .whenComplete((r, e) -> {
                            if (e != null) {
                                log.debug(
                                        "fencelock: dropping the expired hold of '{}' on {} failed: {}",
                                        h.name,
                                        where,
                                        e.toString());
                            }
                        });
            }
        }
        CompletableFuture<LeaseKeepAliveResponse> answer = leases.keepAliveOnce(l.id)
                .thenApply(r -> {
                    if (r.getTTL() > 0) {
                        long until = sent + TimeUnit.SECONDS.toNanos(r.getTTL());
                        if (until - l.validUntil > 0) {
                            l.validUntil = until;
                        }
                    } else {
                        l.dead = true;
                    }
                    return r;
                });
        l.latest = new KeepAlive(sent, answer);
        return answer;
    }

    /**
     * Moves the locks {@code which} of a renewal onto this backend's lease for their TTL (held on a
     * lease of another TTL, or of another backend), each in a transaction that puts back the value
     * read (lease id, grant time, metadata) only if value and revisions are unchanged, so the token
     * stays: a created key keeps its create revision, and a handed-over key, whose token is the mod
     * revision this put raises, carries that token in its value from now on
     * ({@link EtcdRecords#movedValue}); fills in their results.
     */
    void rebind(List<RenewRequest> requests, KeyValue[] found, List<Integer> which, RenewResult[] results, long t0) {
        Map<Integer, CompletableFuture<TxnResponse>> puts = new HashMap<>();
        Map<Integer, SharedLease> onto = new HashMap<>();
        for (int i : which) {
            RenewRequest q = requests.get(i);
            SharedLease l = leaseFor(q.ttl(), t0);
            CompletableFuture<LeaseKeepAliveResponse> keepAlive = keepAliveFor(l, t0, q.ttl());
            if (keepAlive != null && !kept(l, keepAlive)) {
                results[i] = RenewResult.rejected();
                continue;
            }
            ByteSequence key = found[i].getKey();
            onto.put(i, l);
            puts.put(
                    i,
                    kv.txn()
                            .If(
                                    // the value read (lease id, grant time, metadata) is put back as it was
                                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(found[i].getValue())),
                                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(found[i].getCreateRevision())),
                                    new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(found[i].getModRevision())))
                            .Then(Op.put(
                                    key,
                                    EtcdRecords.movedValue(found[i], q.leaseId()),
                                    PutOption.builder().withLeaseId(l.id).build()))
                            .commit());
        }
        for (Map.Entry<Integer, CompletableFuture<TxnResponse>> e : puts.entrySet()) {
            int i = e.getKey();
            RenewRequest q = requests.get(i);
            boolean moved = calls.await("renew of '", q.name(), e.getValue()).isSucceeded();
            SharedLease l = onto.get(i);
            if (moved) {
                hold(q.name(), q.leaseId(), found[i], l, t0 + q.ttl().toNanos());
            }
            results[i] = moved
                    ? RenewResult.renewed(EtcdRecords.token(found[i], q.leaseId()), expiry(l))
                    : RenewResult.rejected();
        }
    }

    /** Whether the keep-alive succeeded; marks the lease dead when etcd no longer knows it. */
    boolean kept(SharedLease l, CompletableFuture<LeaseKeepAliveResponse> keepAlive) {
        try {
            return calls.await("keep-alive of etcd lease ", Long.toHexString(l.id), keepAlive)
                            .getTTL()
                    > 0;
        } catch (LockBackendException e) {
            if (leaseGone(e)) {
                l.dead = true;
            }
            log.debug(
                    "fencelock: keep-alive of etcd lease {} on {} failed: {}",
                    Long.toHexString(l.id),
                    where,
                    e.toString());
            return false;
        }
    }

    /** The lower bound of the lease's expiry, on this client's clock. */
    static Instant expiry(SharedLease l) {
        return Instant.now().plusNanos(Math.max(0, l.validUntil - System.nanoTime()));
    }

    /** Whether a failure says the etcd lease does not exist (any more); jetcd reports it as NOT_FOUND or UNKNOWN. */
    static boolean leaseGone(LockBackendException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && m.toLowerCase(Locale.ROOT).contains("lease not found")) {
                return true;
            }
        }
        return false;
    }
}
