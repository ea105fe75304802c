package io.fencelock.etcd;

import static io.fencelock.etcd.EtcdLockBackend.bytes;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Txn;
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
import io.fencelock.etcd.EtcdRecords.Place;
import io.fencelock.etcd.EtcdRecords.Shared;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
     * How an attempt of a waiting client takes part in the name's queue ({@code GRANT_ON_RELEASE}): the client's
     * place key, the queue's mark ({@link EtcdRecords#queueMark}) and its mod revision as seen when this client's
     * place is the only one it knows (-1 otherwise, {@link QueueView#markIfAlone}), this attempt's lease id, the
     * place's value when this refusal (re)writes it (null: the place stands), and the lease its standing place was
     * written with (null: none).
     */
    record Queuing(
            ByteSequence place,
            ByteSequence mark,
            long markIfAlone,
            String leaseId,
            ByteSequence value,
            String standing) {
        /**
         * What a grant does besides the put: delete the place, and the mark too if no place was written since the
         * client saw its own as the only one (a queue nobody waits in keeps no key).
         */
        Op[] onGrant() {
            Op leave = Op.delete(place, DeleteOption.DEFAULT);
            return markIfAlone <= 0
                    ? new Op[] {leave}
                    : new Op[] {
                        leave,
                        Op.txn(
                                new Cmp[] {new Cmp(mark, Cmp.Op.EQUAL, CmpTarget.modRevision(markIfAlone))},
                                new Op[] {Op.delete(mark, DeleteOption.DEFAULT)},
                                new Op[0])
                    };
        }

        /**
         * What a refusal writes: the place and the queue's mark (releases check the mark is as their view saw it),
         * unless a release already granted the standing place.
         */
        Op[] onRefusal(ByteSequence mutexKey, SharedLease lease) {
            if (value == null) {
                return new Op[0];
            }
            PutOption onLease = PutOption.builder().withLeaseId(lease.id).build();
            Op[] write = {Op.put(place, value, onLease), Op.put(mark, ByteSequence.EMPTY, onLease)};
            return standing == null
                    ? write
                    : new Op[] {Op.txn(EtcdRecords.heldBy(mutexKey, standing), new Op[0], write)};
        }

        /** A refusal's answer: queued under the lease its place has now, if any. */
        AcquireResult refused(Duration remaining) {
            return value != null
                    ? AcquireResult.queued(remaining, leaseId)
                    : standing != null ? AcquireResult.queued(remaining, standing) : AcquireResult.held(remaining);
        }
    }

    /**
     * The mutex's acquire: {@code if mutex key and guard absent then put(mutex key) else read the name}
     * (one round trip, as before shared locks: a name never used shared has no guard). With a guard,
     * the read decides: another kind is refused, a fair mutex's holder holds the name, and with only
     * fair mutex waiters (an ordinary mutex does not queue) or nothing left the mutex is put if the
     * guard is unchanged, deleting a guard that guards nothing. Granted: the token, expiry unset.
     *
     * <p>With {@code queuing} (a waiting client's attempt), the grant also deletes the client's place, and the
     * refusal writes it in the same transaction ({@link Queuing#onRefusal}); a mutex key held by the lease of the
     * client's standing place means a release granted it: the answer is that queued grant.
     */
    AcquireResult mutex(String name, ByteSequence value, SharedLease lease, Queuing queuing) {
        ByteSequence key = records.mutexKey(name);
        ByteSequence guard = records.guard(name);
        Op put = Op.put(key, value, PutOption.builder().withLeaseId(lease.id).build());
        Op[] take = queuing == null ? new Op[] {put} : concat(new Op[] {put}, queuing.onGrant());
        TxnResponse r = calls.await(
                "tryAcquire of '",
                name,
                kv.txn()
                        .If(absent(key), absent(guard))
                        .Then(take)
                        .Else(concat(readName(name), queuing == null ? new Op[0] : queuing.onRefusal(key, lease)))
                        .commit());
        for (int round = 1; !r.isSucceeded(); round++) {
            NameSnapshot s = NameSnapshot.of(r, guard, records);
            if (s.mutex() != null) {
                String holder = s.mutex().getValue().toString(StandardCharsets.UTF_8);
                if (s.mutex().getValue().equals(value) && s.mutex().getLease() == lease.id) {
                    return AcquireResult.granted(
                            s.mutex().getCreateRevision(), null); // ours, from an attempt jetcd retried
                }
                if (queuing != null && queuing.standing() != null && HeldValue.heldBy(holder, queuing.standing())) {
                    return AcquireResult.queuedGrant(queuing.standing(), EtcdRecords.mutexToken(s.mutex()), null);
                }
                // the holder's lease TTL would cost another round trip: the watch wakes us
                return refused(name, s, null, queuing);
            }
            s.requireFairMutexOnly(name);
            if (!s.holders().isEmpty() || round > MAX_DECISIONS) {
                return refused(name, s, s.holders().isEmpty() ? Duration.ZERO : null, queuing); // a fair mutex holds
            }
            Op[] then = s.waiters().isEmpty() && s.guard() != null
                    ? concat(take, new Op[] {Op.delete(guard, DeleteOption.DEFAULT)})
                    : take;
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
     * waiter keys of id, withdraw this client's queue place if id has it, and read how many keys the name has
     * left and its guard}. When only the guard is left, it is deleted in the background if nobody rewrote it (a
     * free name keeps no key); a guard left behind by holders that expired instead goes with the name's next
     * release or mutex grant.
     *
     * <p>A mutex of this client's grants ({@code seen} not null, {@code GRANT_ON_RELEASE}) grants the first client
     * of the name's queue as this client's {@link QueueView} sees it, in the same transaction: {@code if the mutex
     * key is held by id, the queue's mark is as seen (no place written since) and the head's place is as seen, then
     * put the head's grant on the mutex key, on the place's etcd lease, and delete the place} (with no head seen:
     * {@code then delete the mutex key}). The put keeps the key, so no delete wakes other clients' waiters and the
     * name is never free; its revision is the new token, as after a hand-over ({@link EtcdRecords#mutexToken});
     * the place's client hears it on its watch ({@link ReleaseWatcher}). If the view was wrong while id still
     * holds the key, the same transaction read the queue, and the release decides again on what it read; its last
     * round checks the head's place alone and deletes the key when that fails. A place whose etcd lease has gone
     * fails a transaction as a whole: the release reads the queue and decides again.
     */
    boolean release(String name, String id, QueueView.Seen seen) {
        ByteSequence key = records.mutexKey(name);
        ByteSequence mark = records.queueMark(name);
        for (int round = 1; ; round++) {
            boolean last = round >= MAX_DECISIONS;
            Cmp[] held = EtcdRecords.heldBy(key, id);
            List<Op> otherwise = withdrawals(name, id);
            Txn txn;
            if (seen == null) {
                txn = kv.txn().If(held).Then(Op.delete(key, DeleteOption.DEFAULT));
            } else {
                Place head = seen.head();
                Cmp[] queueAsSeen =
                        last ? new Cmp[0] : new Cmp[] {new Cmp(mark, Cmp.Op.EQUAL, CmpTarget.modRevision(seen.mark()))};
                Cmp[] headAsSeen = head == null
                        ? new Cmp[0]
                        : new Cmp[] {
                            new Cmp(
                                    head.kv().getKey(),
                                    Cmp.Op.EQUAL,
                                    CmpTarget.modRevision(head.kv().getModRevision()))
                        };
                Op[] then = head == null
                        ? new Op[] {Op.delete(key, DeleteOption.DEFAULT)}
                        : concat(
                                new Op[] {
                                    Op.put(
                                            key,
                                            EtcdRecords.handedValue(
                                                    head.leaseId(), System.currentTimeMillis(), head.metadata()),
                                            PutOption.builder()
                                                    .withLeaseId(head.kv().getLease())
                                                    .build()),
                                    Op.delete(head.kv().getKey(), DeleteOption.DEFAULT)
                                },
                                seen.alone() && !last ? new Op[] {Op.delete(mark, DeleteOption.DEFAULT)} : new Op[0]);
                otherwise.add(Op.txn(
                        held, last ? new Op[] {Op.delete(key, DeleteOption.DEFAULT)} : readQueue(name), new Op[0]));
                txn = kv.txn().If(concat(concat(held, queueAsSeen), headAsSeen)).Then(then);
            }
            TxnResponse r;
            try {
                r = calls.await(
                        "release of '",
                        name,
                        txn.Else(otherwise.toArray(Op[]::new)).commit());
            } catch (LockBackendException e) {
                if (seen != null && seen.head() != null && EtcdLeases.leaseGone(e) && !last) {
                    // the head's client is gone with its etcd lease: decide again on the queue as it is
                    seen = queue(calls.await(
                                    "release of '",
                                    name,
                                    kv.txn().Then(readQueue(name)).commit())
                            .getGetResponses());
                    continue;
                }
                throw e;
            }
            if (r.isSucceeded()) {
                return true;
            }
            if (seen != null && r.getTxnResponses().get(1).isSucceeded()) {
                if (last) {
                    return true; // deleted: the head's place changed in the last round
                }
                seen = queue(r.getTxnResponses().get(1).getGetResponses()); // id holds it: the view was wrong
                continue;
            }
            dropLoneGuard(name, r.getGetResponses());
            return r.getDeleteResponses().get(0).getDeleted() > 0;
        }
    }

    /** {@link #release(String, String, QueueView.Seen)} of a lock that grants no queued client. */
    boolean release(String name, String id) {
        return release(name, id, null);
    }

    /**
     * What a release does when id holds no mutex key: delete its holder and waiter keys, read how many keys the
     * name has left and its guard ({@link #dropLoneGuard}), withdraw this client's queue place if id has it.
     */
    private List<Op> withdrawals(String name, String id) {
        ByteSequence ownPlace = records.placeKey(name, watcher.clientId);
        return new ArrayList<>(List.of(
                Op.delete(records.holderKey(name, id), DeleteOption.DEFAULT),
                Op.delete(records.waiterKey(name, id, false), DeleteOption.DEFAULT),
                Op.delete(records.waiterKey(name, id, true), DeleteOption.DEFAULT),
                Op.get(
                        records.sharedStart(name),
                        GetOption.builder()
                                .withRange(records.end(name))
                                .withCountOnly(true)
                                .build()),
                Op.get(records.guard(name), GetOption.DEFAULT),
                Op.txn(
                        EtcdRecords.heldBy(ownPlace, id),
                        new Op[] {Op.delete(ownPlace, DeleteOption.DEFAULT)},
                        new Op[0])));
    }

    /** When only the guard is left, deletes it in the background if nobody rewrote it: a free name keeps no key. */
    private void dropLoneGuard(String name, List<GetResponse> gets) {
        if (gets.get(0).getCount() != 1 || gets.get(1).getKvs().isEmpty()) {
            return;
        }
        ByteSequence guard = records.guard(name);
        long at = gets.get(1).getKvs().get(0).getModRevision();
        kv.txn()
                .If(new Cmp(guard, Cmp.Op.EQUAL, CmpTarget.modRevision(at)))
                .Then(Op.delete(guard, DeleteOption.DEFAULT))
                .commit()
                .whenComplete((done, e) -> {
                    if (e != null) {
                        log.debug("fencelock: deleting the guard of '{}' on {} failed: {}", name, where, e.toString());
                    }
                });
    }

    /** Reads {@code name}'s queue: its places in the order they were first written, and its mark. */
    private Op[] readQueue(String name) {
        ByteSequence[] range = records.queueOf(name);
        return new Op[] {
            Op.get(
                    range[0],
                    GetOption.builder()
                            .withRange(range[1])
                            .withSortField(GetOption.SortTarget.CREATE)
                            .withSortOrder(GetOption.SortOrder.ASCEND)
                            .build()),
            Op.get(records.queueMark(name), GetOption.DEFAULT)
        };
    }

    /** The queue {@link #readQueue} read. */
    private static QueueView.Seen queue(List<GetResponse> read) {
        List<Place> places = new ArrayList<>();
        for (KeyValue v : read.get(0).getKvs()) {
            Place p = Place.of(v);
            if (p != null) {
                places.add(p);
            }
        }
        List<KeyValue> mark = read.get(1).getKvs();
        return QueueView.Seen.of(places, mark.isEmpty() ? 0 : mark.get(0).getModRevision());
    }

    // ------------------------------------------------------------------ machinery

    /** {@code if cmps then ops else read the name}, awaited. */
    private TxnResponse txn(String name, Cmp[] cmps, Op[] then) {
        return calls.await(
                "tryAcquire of '",
                name,
                kv.txn().If(cmps).Then(then).Else(readName(name)).commit());
    }

    private AcquireResult refused(String name, NameSnapshot s, Duration remaining) {
        return refused(name, s, remaining, null);
    }

    private AcquireResult refused(String name, NameSnapshot s, Duration remaining, Queuing queuing) {
        watcher.heldAt(name, s.revision(), s.plainHolder());
        return queuing == null ? AcquireResult.held(remaining) : queuing.refused(remaining);
    }

    /** Reads the name in a transaction's {@code else} branch: its mutex key, then its shared range ({@link NameSnapshot}). */
    private Op[] readName(String name) {
        return new Op[] {Op.get(records.mutexKey(name), GetOption.DEFAULT), records.sharedRange(name)};
    }

    private static <T> T[] concat(T[] a, T[] b) {
        T[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static Cmp absent(ByteSequence key) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
    }

    /** The guard as the snapshot saw it: not rewritten since (a missing key compares as revision 0). */
    private static Cmp guardAt(ByteSequence guard, NameSnapshot s) {
        return new Cmp(guard, Cmp.Op.EQUAL, CmpTarget.modRevision(s.guardRevision()));
    }
}
