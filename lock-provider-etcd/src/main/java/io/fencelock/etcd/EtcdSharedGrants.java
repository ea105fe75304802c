package io.fencelock.etcd;

import static io.fencelock.etcd.EtcdLockBackend.bytes;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.fencelock.LockBackendException;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.etcd.EtcdLeases.SharedLease;
import io.fencelock.etcd.EtcdRecords.Shared;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grants on etcd that must see the name's other keys: shared grants (semaphores, readers, writers,
 * the fair mutex) and the ordinary mutex on a name that has shared keys (key layout in
 * {@link EtcdRecords}). etcd cannot count keys in a compare, so a grant reads the name (its mutex key
 * and its shared range, at one revision) and decides as the in-memory reference does; the write
 * commits only if the mutex key is as read and the guard key was not rewritten since, which every
 * transaction that adds a holder or a waiter does. Deletions (releases, expiry) only free room and
 * need not fail it.
 *
 * <p>Each transaction reads the name in its {@code else} branch, so a lost compare costs no extra
 * read: the attempt decides again on that newer state, at most {@link #MAX_DECISIONS} times (each
 * lost compare means another client's grant or waiter just got in), then reports the name as held
 * with no time left, and the engine tries again at once. It never sleeps.
 */
final class EtcdSharedGrants {
    private static final Logger log = LoggerFactory.getLogger(EtcdSharedGrants.class);
    private static final int MAX_DECISIONS = 3;
    private static final ByteSequence GUARD = bytes("guard");

    private final KV kv;
    private final EtcdCalls calls;
    private final EtcdLeases leases;
    private final EtcdRecords records;
    private final ReleaseWatcher watcher;
    private final String where;

    EtcdSharedGrants(
            KV kv, EtcdCalls calls, EtcdLeases leases, EtcdRecords records, ReleaseWatcher watcher, String where) {
        this.kv = kv;
        this.calls = calls;
        this.leases = leases;
        this.records = records;
        this.watcher = watcher;
        this.where = where;
    }

    // ------------------------------------------------------------------ the ordinary mutex

    /**
     * The mutex's acquire: {@code if mutex key and guard absent then put(mutex key) else read the name}
     * (one round trip, as before shared locks: a name never used shared has no guard). With a guard,
     * the read decides: another kind is refused, a fair mutex's holder holds the name, and with only
     * fair mutex waiters (an ordinary mutex does not queue) or nothing left the mutex is put if the
     * guard is unchanged, deleting a guard that guards nothing. Granted: the token, expiry unset.
     */
    AcquireResult mutex(String name, ByteSequence value, SharedLease lease) {
        ByteSequence key = records.mutexKey(name);
        ByteSequence guard = records.guard(name);
        Op put = Op.put(key, value, PutOption.builder().withLeaseId(lease.id).build());
        TxnResponse r = txn(name, new Cmp[] {absent(key), absent(guard)}, new Op[] {put});
        for (int round = 1; !r.isSucceeded(); round++) {
            NameSnapshot s = NameSnapshot.of(r, guard, records);
            if (s.mutex() != null) {
                if (s.mutex().getValue().equals(value) && s.mutex().getLease() == lease.id) {
                    return AcquireResult.granted(
                            s.mutex().getCreateRevision(), null); // ours, from an attempt jetcd retried
                }
                return refused(
                        name, s, null); // the holder's lease TTL would cost another round trip: the watch wakes us
            }
            s.requireFairMutexOnly(name);
            if (!s.holders().isEmpty() || round > MAX_DECISIONS) {
                return refused(name, s, s.holders().isEmpty() ? Duration.ZERO : null); // a fair mutex holds
            }
            Op[] then = s.waiters().isEmpty() && s.guard() != null
                    ? new Op[] {put, Op.delete(guard, DeleteOption.DEFAULT)}
                    : new Op[] {put};
            r = txn(name, new Cmp[] {absent(key), guardAt(guard, s)}, then);
        }
        return AcquireResult.granted(r.getHeader().getRevision(), null);
    }

    /**
     * The mutex's hand-over: {@code if the mutex key holds fromLeaseId's grant then put the new grant's
     * value on the lease else read the key} (one round trip). The put keeps the key, so nothing is
     * deleted (no watcher wakes: the name was not released) and the name is never free; the put's
     * revision is the new token, above every earlier one ({@link EtcdRecords#mutexToken}). A name whose
     * mutex key is held has no shared holders (they need the key absent), so nothing else is checked.
     * Granted: the token, expiry unset.
     */
    AcquireResult handOver(String name, String fromLeaseId, ByteSequence value, SharedLease lease) {
        ByteSequence key = records.mutexKey(name);
        TxnResponse r = calls.await(
                "handOver of '",
                name,
                kv.txn()
                        .If(EtcdRecords.heldBy(key, fromLeaseId))
                        .Then(Op.put(
                                key,
                                value,
                                PutOption.builder().withLeaseId(lease.id).build()))
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit());
        if (r.isSucceeded()) {
            return AcquireResult.granted(r.getHeader().getRevision(), null);
        }
        List<KeyValue> now = r.getGetResponses().get(0).getKvs();
        if (!now.isEmpty() && now.get(0).getValue().equals(value) && now.get(0).getLease() == lease.id) {
            return AcquireResult.granted(
                    EtcdRecords.mutexToken(now.get(0)), null); // ours, from an attempt jetcd retried
        }
        return AcquireResult.held(null);
    }

    // ------------------------------------------------------------------ shared grants

    /**
     * One attempt of a shared request (see {@link io.fencelock.spi.LockBackend#tryAcquireShared}):
     * {@code if mutex key and guard absent then put(holder, guard) else read the name}, so a free name
     * is one round trip; otherwise the read decides: a grant is a second transaction (put the holder
     * and the guard, delete the request's waiter key, if the mutex key is absent and the guard as
     * read), a waiter's first record too (put its key and the guard, if the mutex key is as read and
     * the newest key of the name still lives, so the name's kind cannot have changed), and a refusal
     * whose waiter key already stands on this lease writes nothing: its hold is extended here and
     * dropped once due, so the key expires a TTL after the last attempt. Granted: token, expiry unset.
     */
    AcquireResult grant(
            String name,
            String leaseId,
            Duration ttl,
            SharedRequest q,
            LockMetadata metadata,
            SharedLease lease,
            long t0) {
        ByteSequence key = records.mutexKey(name);
        ByteSequence guard = records.guard(name);
        ByteSequence holder = records.holderKey(name, leaseId);
        ByteSequence waiter = records.waiterKey(name, q.waiterId(), q.mode() == LockMode.EXCLUSIVE);
        ByteSequence value = EtcdRecords.holderValue(q, leaseId, System.currentTimeMillis(), metadata);
        PutOption onLease = PutOption.builder().withLeaseId(lease.id).build();
        Op[] take = {
            Op.put(holder, value, onLease),
            Op.put(guard, GUARD, PutOption.DEFAULT),
            Op.delete(waiter, DeleteOption.DEFAULT)
        };
        long due = t0 + ttl.toNanos();
        leases.holdShared(name, leaseId, holder, lease, due, value);
        TxnResponse r = txn(name, new Cmp[] {absent(key), absent(guard)}, take);
        for (int round = 1; !r.isSucceeded(); round++) {
            NameSnapshot s = NameSnapshot.of(r, guard, records);
            Shared mine = s.holder(leaseId);
            if (mine != null) {
                return AcquireResult.granted(
                        mine.kv().getCreateRevision(), null); // ours, from an attempt jetcd retried
            }
            s.requireKind(name, q);
            if (round > MAX_DECISIONS) {
                return refused(name, s, Duration.ZERO);
            }
            if (s.room(q)) {
                r = txn(name, new Cmp[] {absent(key), guardAt(guard, s)}, take);
                continue;
            }
            if (!q.waits() || q.mode() != LockMode.WRITE && !q.fair()) {
                return refused(name, s, null);
            }
            Shared own = s.waiter(q.waiterId());
            leases.holdShared(name, q.waiterId(), waiter, lease, due, null);
            if (own != null && own.kv().getLease() == lease.id) {
                return refused(name, s, null); // its intent or place stands, now until a TTL from this attempt
            }
            Shared youngest = s.youngest();
            Cmp kind = youngest == null
                    ? guardAt(guard, s)
                    : new Cmp(
                            youngest.kv().getKey(),
                            Cmp.Op.EQUAL,
                            CmpTarget.createRevision(youngest.kv().getCreateRevision()));
            long mutexAt = s.mutex() == null ? 0 : s.mutex().getCreateRevision();
            r = txn(name, new Cmp[] {new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(mutexAt)), kind}, new Op[] {
                Op.put(waiter, EtcdRecords.waiterValue(q), onLease), Op.put(guard, GUARD, PutOption.DEFAULT)
            });
            if (r.isSucceeded()) {
                watcher.heldAt(name, r.getHeader().getRevision(), 0);
                return AcquireResult.held(null);
            }
        }
        leases.drop(q.waiterId()); // its waiter key went with the grant
        return AcquireResult.granted(r.getHeader().getRevision(), null);
    }

    // ------------------------------------------------------------------ downgrade

    /**
     * {@code if value(holder) == the value this backend wrote then put(holder, that value as a reader,
     * on this TTL's etcd lease) else get(holder)}: one round trip for a lease this backend granted or
     * renewed (it keeps the value), one more after a read otherwise. A put keeps the key's create
     * revision, the token; the holder is never deleted, so the name is never free in between. A value
     * that changed since (a downgrade retried after a lost answer: the lease already reads) is put once
     * more from the read, which renews it; a holder that is gone is rejected.
     */
    RenewResult downgrade(String name, String leaseId, Duration ttl, boolean mayRetry) {
        long t0 = System.nanoTime();
        SharedLease lease = leases.leaseFor(ttl, t0);
        CompletableFuture<LeaseKeepAliveResponse> keepAlive = leases.keepAliveFor(lease, t0, ttl);
        ByteSequence holder = records.holderKey(name, leaseId);
        ByteSequence value = leases.written(name, leaseId);
        if (value == null) {
            List<KeyValue> kvs =
                    calls.await("downgrade of '", name, kv.get(holder)).getKvs();
            value = kvs.isEmpty() ? null : kvs.get(0).getValue();
        }
        long token = 0;
        for (int round = 0; token == 0; round++) {
            String v = value == null ? "" : value.toString(StandardCharsets.UTF_8);
            if (round == 2 || !v.startsWith(LockMode.WRITE.name() + ' ') && !v.startsWith(LockMode.READ.name() + ' ')) {
                leases.drop(leaseId);
                return RenewResult.rejected();
            }
            TxnResponse r;
            try {
                r = calls.await(
                        "downgrade of '",
                        name,
                        kv.txn()
                                .If(new Cmp(holder, Cmp.Op.EQUAL, CmpTarget.value(value)))
                                .Then(Op.put(
                                        holder,
                                        EtcdRecords.asReader(value),
                                        PutOption.builder()
                                                .withLeaseId(lease.id)
                                                .withPrevKV()
                                                .build()))
                                .Else(Op.get(holder, GetOption.DEFAULT))
                                .commit());
            } catch (LockBackendException e) {
                if (mayRetry && EtcdLeases.leaseGone(e)) {
                    lease.dead = true; // expired between our last keep-alive and this put: grant a new one
                    return downgrade(name, leaseId, ttl, false);
                }
                throw e;
            }
            if (r.isSucceeded()) {
                token = r.getPutResponses().get(0).getPrevKv().getCreateRevision();
            } else {
                List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
                value = kvs.isEmpty() ? null : kvs.get(0).getValue();
            }
        }
        if (keepAlive != null && !leases.kept(lease, keepAlive)) {
            // the holder may outlive the lease's last keep-alive by less than the TTL asked: give it back
            try {
                release(name, leaseId);
            } catch (LockBackendException e) {
                log.debug("fencelock: giving back '{}' on {} failed: {}", name, where, e.toString());
            }
            return RenewResult.rejected();
        }
        leases.holdShared(name, leaseId, holder, lease, t0 + ttl.toNanos(), EtcdRecords.asReader(value));
        return RenewResult.renewed(token, EtcdLeases.expiry(lease));
    }

    // ------------------------------------------------------------------ release

    /**
     * One transaction: {@code if the mutex key is held by id then delete it, else delete the holder and
     * waiter keys of id and read how many keys the name has left and its guard}. When only the guard is
     * left, it is deleted in the background if nobody rewrote it (a free name keeps no key); a guard left
     * behind by holders that expired instead goes with the name's next release or mutex grant.
     */
    boolean release(String name, String id) {
        ByteSequence key = records.mutexKey(name);
        ByteSequence guard = records.guard(name);
        TxnResponse r = calls.await(
                "release of '",
                name,
                kv.txn()
                        .If(EtcdRecords.heldBy(key, id))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .Else(
                                Op.delete(records.holderKey(name, id), DeleteOption.DEFAULT),
                                Op.delete(records.waiterKey(name, id, false), DeleteOption.DEFAULT),
                                Op.delete(records.waiterKey(name, id, true), DeleteOption.DEFAULT),
                                Op.get(
                                        records.sharedStart(name),
                                        GetOption.builder()
                                                .withRange(records.end(name))
                                                .withCountOnly(true)
                                                .build()),
                                Op.get(guard, GetOption.DEFAULT))
                        .commit());
        if (r.isSucceeded()) {
            return true;
        }
        List<GetResponse> gets = r.getGetResponses();
        if (gets.get(0).getCount() == 1 && !gets.get(1).getKvs().isEmpty()) {
            long at = gets.get(1).getKvs().get(0).getModRevision();
            kv.txn()
                    .If(new Cmp(guard, Cmp.Op.EQUAL, CmpTarget.modRevision(at)))
                    .Then(Op.delete(guard, DeleteOption.DEFAULT))
                    .commit()
                    .whenComplete((done, e) -> {
                        if (e != null) {
                            log.debug(
                                    "fencelock: deleting the guard of '{}' on {} failed: {}",
                                    name,
                                    where,
                                    e.toString());
                        }
                    });
        }
        return r.getDeleteResponses().get(0).getDeleted() > 0;
    }

    // ------------------------------------------------------------------ machinery

    /** {@code if cmps then ops else read the name}, awaited. */
    private TxnResponse txn(String name, Cmp[] cmps, Op[] then) {
        return calls.await(
                "tryAcquire of '",
                name,
                kv.txn()
                        .If(cmps)
                        .Then(then)
                        .Else(Op.get(records.mutexKey(name), GetOption.DEFAULT), records.sharedRange(name))
                        .commit());
    }

    private AcquireResult refused(String name, NameSnapshot s, Duration remaining) {
        watcher.heldAt(name, s.revision(), s.plainHolder());
        return AcquireResult.held(remaining);
    }

    private static Cmp absent(ByteSequence key) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
    }

    /** The guard as the snapshot saw it: not rewritten since (a missing key compares as revision 0). */
    private static Cmp guardAt(ByteSequence guard, NameSnapshot s) {
        return new Cmp(guard, Cmp.Op.EQUAL, CmpTarget.modRevision(s.guardRevision()));
    }
}
