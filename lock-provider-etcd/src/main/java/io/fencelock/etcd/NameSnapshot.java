package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.fencelock.LockMode;
import io.fencelock.etcd.EtcdRecords.Shared;
import io.fencelock.spi.SharedRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One name read at one revision (its mutex key, its guard, its holders, its waiters in order of
 * arrival: create revision, as etcd's own lock orders its waiters) and what the in-memory reference
 * ({@code SharedGrants}) decides on such a state: the kind check, whether a request has room.
 */
record NameSnapshot(long revision, KeyValue mutex, KeyValue guard, List<Shared> holders, List<Shared> waiters) {

    /** The name as a transaction's {@code else} branch read it: the mutex key, then the shared range. */
    static NameSnapshot of(TxnResponse r, ByteSequence guardKey, EtcdRecords records) {
        List<GetResponse> gets = r.getGetResponses();
        List<KeyValue> mutex = gets.get(0).getKvs();
        KeyValue guard = null;
        List<Shared> holders = new ArrayList<>();
        List<Shared> waiters = new ArrayList<>();
        for (KeyValue v : gets.get(1).getKvs()) {
            Shared s = records.shared(v);
            if (v.getKey().equals(guardKey)) {
                guard = v;
            } else if (s != null) {
                (s.holder() ? holders : waiters).add(s);
            }
        }
        waiters.sort(Comparator.comparingLong(w -> w.kv().getCreateRevision()));
        return new NameSnapshot(
                r.getHeader().getRevision(), mutex.isEmpty() ? null : mutex.get(0), guard, holders, waiters);
    }

    /**
     * The mod revision of a plain mutex holder's key when the name has no shared keys, else 0: it changes when
     * the key is put again (a hand-over, a grant to a queued client), not only when it is deleted.
     */
    long plainHolder() {
        return mutex != null && guard == null && holders.isEmpty() && waiters.isEmpty() ? mutex.getModRevision() : 0;
    }

    /** The guard's mod revision, 0 when absent (as etcd compares a missing key). */
    long guardRevision() {
        return guard == null ? 0 : guard.getModRevision();
    }

    Shared holder(String leaseId) {
        return holders.stream().filter(h -> h.id().equals(leaseId)).findFirst().orElse(null);
    }

    Shared waiter(String waiterId) {
        return waiters.stream().filter(w -> w.id().equals(waiterId)).findFirst().orElse(null);
    }

    /** The newest holder or waiter: it fixes the kind while it lives. */
    Shared youngest() {
        Shared y = null;
        for (List<Shared> l : List.of(holders, waiters)) {
            for (Shared s : l) {
                if (y == null || s.kv().getCreateRevision() > y.kv().getCreateRevision()) {
                    y = s;
                }
            }
        }
        return y;
    }

    /** Whether the holders (and, for a fair request, the queue) leave room, as {@code SharedGrants.tryGrant} decides. */
    boolean room(SharedRequest q) {
        if (mutex != null) {
            return false; // an ordinary mutex holds: only a fair mutex request gets here, and it waits
        }
        String me = q.waiterId();
        boolean room = switch (q.mode()) {
            case PERMITS -> holders.stream().mapToInt(Shared::permits).sum() + q.permits() <= q.limit();
            case READ -> holders.stream().noneMatch(h -> h.mode() == LockMode.WRITE) && !writerIntentAhead(me);
            case WRITE, EXCLUSIVE -> holders.isEmpty();
        };
        return room && (!q.fair() || !queuedAhead(me));
    }

    /** A writer's intent that a reader must wait behind: any but one queued after the reader's own place. */
    private boolean writerIntentAhead(String me) {
        boolean passedMe = false;
        for (Shared w : waiters) {
            if (w.id().equals(me)) {
                passedMe = true;
            } else if (w.mode() == LockMode.WRITE && !(passedMe && w.fair())) {
                return true;
            }
        }
        return false;
    }

    /** Whether another waiter's queue place comes before {@code me}'s (or exists, when {@code me} has none). */
    private boolean queuedAhead(String me) {
        for (Shared w : waiters) {
            if (w.id().equals(me)) {
                return false;
            }
            if (w.fair()) {
                return true;
            }
        }
        return false;
    }

    /** Refuses a request of another kind (or another N) than the name's live keys, or than its mutex holder. */
    void requireKind(String name, SharedRequest q) {
        LockMode kind = q.mode() == LockMode.WRITE ? LockMode.READ : q.mode();
        if (mutex != null && kind != LockMode.EXCLUSIVE) {
            throw refusedKind(name, LockMode.EXCLUSIVE, 0, kind, q.limit());
        }
        Shared any = youngest();
        if (any != null && (any.kind() != kind || any.limit() != q.limit())) {
            throw refusedKind(name, any.kind(), any.limit(), kind, q.limit());
        }
    }

    /** Refuses an ordinary mutex on a name whose keys are of another kind than the fair mutex. */
    void requireFairMutexOnly(String name) {
        Shared any = youngest();
        if (any != null && any.kind() != LockMode.EXCLUSIVE) {
            throw refusedKind(name, any.kind(), any.limit(), LockMode.EXCLUSIVE, 0);
        }
    }

    private static IllegalArgumentException refusedKind(
            String name, LockMode kind, int limit, LockMode requested, int requestedLimit) {
        return new IllegalArgumentException("lock '" + name + "' is " + describe(kind, limit) + "; a request for "
                + describe(requested, requestedLimit) + " is refused");
    }

    private static String describe(LockMode kind, int limit) {
        return switch (kind) {
            case PERMITS -> "a semaphore of " + limit + " permits";
            case READ, WRITE -> "a read-write lock";
            case EXCLUSIVE -> "a mutex";
        };
    }
}
