package io.fencelock.etcd;

import static io.fencelock.etcd.EtcdLockBackend.bytes;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.fencelock.LockBackendException;
import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.SharedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * How a held lock is recorded in etcd and read back. A mutex is the key {@code <prefix><name>}: its
 * value is the holder's lease id, its grant time and metadata ({@link HeldValue}); its token is the
 * revision of the write that granted it ({@link #mutexToken}): the key's create revision, or, after a
 * hand-over (a put on the held key), that put's revision. A name's shared grants live beside it under {@code <prefix><name> SP} (a space
 * is no name character, so this range holds no other name's keys):
 * <ul>
 *   <li>{@code h<leaseId>}: a holder (semaphore permits, reader, writer, fair mutex), on an etcd
 *       lease; value {@code MODE permits limit fair LF} and the {@link HeldValue}; its create revision
 *       is its token (a downgrade rewrites the value in place, which keeps it);</li>
 *   <li>{@code w<waiterId>}: a waiting writer's intent and/or a fair waiter's queue place of a
 *       semaphore or read-write lock, {@code x<waiterId>} that of a fair mutex, on an etcd lease; value
 *       {@code MODE permits limit fair}; its create revision is its place in the queue;</li>
 *   <li>{@code g}: the guard, without a lease, rewritten by every transaction that creates a holder or
 *       a waiter, so that a decision taken on a read of the name commits only if nothing was added
 *       since (etcd cannot count keys in a compare); deleted once nothing else of the name is left.</li>
 * </ul>
 * The kind of a shared name (and a semaphore's limit) is that of any of its holders and waiters.
 */
final class EtcdRecords {
    /** Between a name and its shared keys. */
    static final char SHARED = ' ';

    /**
     * Begins a queue place's key and ends its name ({@code GRANT_ON_RELEASE}): {@code prefix PLACE name PLACE
     * clientId}. A unit separator is no name character, so the places of every name form one range of their own
     * ({@link #placesStart} to {@link #placesEnd}), outside every name's keys, which one watch per client covers.
     */
    static final char PLACE = '\u001F';

    /**
     * Ends a mutex value's grant time when a hand-over wrote it: the token is the key's mod revision (the
     * revision of that put, above every earlier token of the name).
     */
    static final String HANDED = ",h";
    /**
     * Ends a mutex value's grant time when the key was put again without a new grant (moved to another
     * etcd lease after a hand-over), followed by the token, which that put must not change.
     */
    static final String KEPT_TOKEN = ",t";

    /** A holder or waiter key of a shared name, read back; {@code role} is {@code h}, {@code w} or {@code x}. */
    record Shared(KeyValue kv, char role, String id, LockMode mode, int permits, int limit, boolean fair) {
        boolean holder() {
            return role == 'h';
        }

        /** The kind it gives its name: PERMITS, READ for a read-write lock, or EXCLUSIVE. */
        LockMode kind() {
            return mode == LockMode.WRITE ? LockMode.READ : mode;
        }
    }

    private final Lease leaseClient;
    private final EtcdCalls calls;
    private final String prefix;

    EtcdRecords(Lease leaseClient, EtcdCalls calls, String prefix) {
        this.leaseClient = leaseClient;
        this.calls = calls;
        this.prefix = prefix;
    }

    ByteSequence mutexKey(String name) {
        return bytes(prefix + name);
    }

    ByteSequence guard(String name) {
        return bytes(prefix + name + SHARED + 'g');
    }

    ByteSequence holderKey(String name, String leaseId) {
        return bytes(prefix + name + SHARED + 'h' + leaseId);
    }

    ByteSequence waiterKey(String name, String waiterId, boolean fairMutex) {
        return bytes(prefix + name + SHARED + (fairMutex ? 'x' : 'w') + waiterId);
    }

    /** A client's place in the queue of {@code name}'s mutex, named by the client's id. */
    ByteSequence placeKey(String name, String clientId) {
        return bytes(prefix + PLACE + name + PLACE + clientId);
    }

    /**
     * The mark of {@code name}'s queue: put with every place a refusal writes, so its mod revision changes whenever
     * a place is written and a release can check, in its one transaction, that no place was written since its
     * client's view of the queue ({@link QueueView}). It lies among the places, so the view's watch sees it too.
     */
    ByteSequence queueMark(String name) {
        return bytes(prefix + PLACE + name);
    }

    /** The range of {@code name}'s places alone (its mark excluded): {@code [start, end)}. */
    ByteSequence[] queueOf(String name) {
        return new ByteSequence[] {
            bytes(prefix + PLACE + name + PLACE), bytes(prefix + PLACE + name + (char) (PLACE + 1))
        };
    }

    /** Where the queue places of every name begin. */
    ByteSequence placesStart() {
        return bytes(prefix + PLACE);
    }

    /** Where the queue places of every name end (exclusive). */
    ByteSequence placesEnd() {
        return bytes(prefix + (char) (PLACE + 1));
    }

    /** The name whose queue {@code key} is a place in, or null if it is no place. */
    String placeName(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        int end = k.lastIndexOf(PLACE);
        return isPlace(k) && end > prefix.length() ? k.substring(prefix.length() + 1, end) : null;
    }

    /** The name whose queue {@code key} marks ({@link #queueMark}), or null if it is no mark. */
    String markName(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        return isPlace(k) && k.lastIndexOf(PLACE) == prefix.length() ? k.substring(prefix.length() + 1) : null;
    }

    private boolean isPlace(String key) {
        return key.length() > prefix.length() && key.charAt(prefix.length()) == PLACE && key.startsWith(prefix);
    }

    /**
     * A queue place's value: what a release puts for the waiting client, {@code leaseId LF writtenMillis LF
     * ttlMillis LF metadata}. It starts as a grant's value does, so {@link #heldBy} checks whose it is.
     */
    static ByteSequence placeValue(String leaseId, long writtenMillis, Duration ttl, LockMetadata metadata) {
        return bytes(leaseId
                + HeldValue.SEPARATOR
                + writtenMillis
                + HeldValue.SEPARATOR
                + ttl.toMillis()
                + HeldValue.SEPARATOR
                + HeldValue.json(metadata));
    }

    /**
     * A queue place read back: the lease a release grants, when the place was written (the waiter's clock) and
     * for which TTL, the grant's metadata. Null for an unreadable value.
     */
    record Place(KeyValue kv, String leaseId, long writtenMillis, long ttlMillis, LockMetadata metadata) {
        static Place of(KeyValue kv) {
            String v = kv.getValue().toString(StandardCharsets.UTF_8);
            int lease = v.indexOf(HeldValue.SEPARATOR);
            int written = lease < 0 ? -1 : v.indexOf(HeldValue.SEPARATOR, lease + 1);
            int ttl = written < 0 ? -1 : v.indexOf(HeldValue.SEPARATOR, written + 1);
            if (ttl < 0) {
                return null;
            }
            try {
                return new Place(
                        kv,
                        v.substring(0, lease),
                        Long.parseLong(v.substring(lease + 1, written)),
                        Long.parseLong(v.substring(written + 1, ttl)),
                        v.length() == ttl + 1 ? LockMetadata.NONE : MetadataCodec.decode(v.substring(ttl + 1)));
            } catch (RuntimeException unreadable) {
                return null;
            }
        }

        /**
         * Whether its waiter still asks, seen at {@code nowMillis}: a waiting client rewrites its place every
         * quarter of its TTL, so one older than half its TTL belongs to a client that stopped attempting, and a
         * grant would come too late for the validity it counts from the place's attempt.
         */
        boolean current(long nowMillis) {
            return nowMillis - writtenMillis < ttlMillis / 2;
        }
    }

    /** The end of everything of {@code name}: the range from its mutex key to here holds its keys only. */
    ByteSequence end(String name) {
        return bytes(prefix + name + (char) (SHARED + 1));
    }

    /** Where the name's shared keys begin. */
    ByteSequence sharedStart(String name) {
        return bytes(prefix + name + SHARED);
    }

    /** Reads the name's shared keys (with the guard). */
    Op sharedRange(String name) {
        return Op.get(
                sharedStart(name), GetOption.builder().withRange(end(name)).build());
    }

    private static String header(LockMode mode, int permits, int limit, boolean fair) {
        return mode.name() + ' ' + permits + ' ' + limit + ' ' + (fair ? 1 : 0);
    }

    static ByteSequence holderValue(SharedRequest q, String leaseId, long grantMillis, LockMetadata metadata) {
        return bytes(header(q.mode(), q.permits(), q.limit(), q.fair())
                + HeldValue.SEPARATOR
                + HeldValue.encode(leaseId, grantMillis, metadata));
    }

    static ByteSequence waiterValue(SharedRequest q) {
        return bytes(header(q.mode(), q.permits(), q.limit(), q.fair()));
    }

    /** A holder's value with its mode turned into READ, the rest (permits, grant time, metadata) as it was. */
    static ByteSequence asReader(ByteSequence value) {
        String v = value.toString(StandardCharsets.UTF_8);
        return bytes(LockMode.READ.name() + v.substring(v.indexOf(' ')));
    }

    /** A shared key read back, or null for the guard, a mutex key or an unreadable value. */
    Shared shared(KeyValue kv) {
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        int at = key.indexOf(SHARED, prefix.length());
        if (at < 0 || at + 2 > key.length() || key.charAt(at + 1) == 'g') {
            return null;
        }
        String v = kv.getValue().toString(StandardCharsets.UTF_8);
        int lf = v.indexOf(HeldValue.SEPARATOR);
        String[] h = (lf < 0 ? v : v.substring(0, lf)).split(" ");
        try {
            return new Shared(
                    kv,
                    key.charAt(at + 1),
                    key.substring(at + 2),
                    LockMode.valueOf(h[0]),
                    Integer.parseInt(h[1]),
                    Integer.parseInt(h[2]),
                    "1".equals(h[3]));
        } catch (RuntimeException unreadable) {
            return null;
        }
    }

    /** Whether a put is a holder's rewritten value: a downgrade (or, rarely, a holder moved to another etcd lease). */
    boolean downgraded(KeyValue kv) {
        Shared s = kv.getVersion() > 1 ? shared(kv) : null;
        return s != null && s.holder() && s.mode() == LockMode.READ;
    }

    /** A hand-over's mutex value: {@link HeldValue} with {@link #HANDED} after the grant time. */
    static ByteSequence handedValue(String leaseId, long grantMillis, LockMetadata metadata) {
        return bytes(
                leaseId + HeldValue.SEPARATOR + grantMillis + HANDED + HeldValue.SEPARATOR + HeldValue.json(metadata));
    }

    /**
     * Where a mutex value's grant time lies, its token mark included: from after the lease id's line feed to
     * the next line feed or the end. Null for a value without a line feed.
     */
    private record GrantTime(int start, int end) {
        static GrantTime in(String v) {
            int start = v.indexOf(HeldValue.SEPARATOR) + 1;
            if (start == 0) {
                return null;
            }
            int end = v.indexOf(HeldValue.SEPARATOR, start);
            return new GrantTime(start, end < 0 ? v.length() : end);
        }

        String of(String v) {
            return v.substring(start, end);
        }
    }

    /**
     * The token of a mutex key {@code kv} held with the value of a grant ({@code leaseId LF grant ...}):
     * the revision of the grant's write. A created key's create revision; a handed-over key's mod revision
     * (the hand-over's put); a key moved since, the token its value carries.
     */
    static long mutexToken(KeyValue kv) {
        return mutexToken(kv, kv.getValue().toString(StandardCharsets.UTF_8));
    }

    /** The same, with the key's value {@code v} decoded already. */
    private static long mutexToken(KeyValue kv, String v) {
        GrantTime at = GrantTime.in(v);
        if (at == null) {
            return kv.getCreateRevision();
        }
        String grant = at.of(v);
        if (grant.endsWith(HANDED)) {
            return kv.getModRevision();
        }
        int kept = grant.indexOf(KEPT_TOKEN);
        if (kept >= 0) {
            try {
                return Long.parseLong(grant.substring(kept + KEPT_TOKEN.length()));
            } catch (NumberFormatException unreadable) {
                return kv.getCreateRevision();
            }
        }
        return kv.getCreateRevision();
    }

    /**
     * The token of the key a renewal of {@code leaseId} found: a mutex key's ({@link #mutexToken}), or a
     * shared holder key's create revision. A mutex value begins with the lease id and a line feed, a shared
     * holder's with its mode.
     */
    static long token(KeyValue kv, String leaseId) {
        String v = kv.getValue().toString(StandardCharsets.UTF_8);
        return HeldValue.heldBy(v, leaseId) ? mutexToken(kv, v) : kv.getCreateRevision();
    }

    /**
     * The value to put back when a key found by a renewal moves to another etcd lease: as it was, but
     * a handed-over mutex's value carries its token from now on, since the put raises the mod revision.
     */
    static ByteSequence movedValue(KeyValue kv, String leaseId) {
        String v = kv.getValue().toString(StandardCharsets.UTF_8);
        GrantTime at = HeldValue.heldBy(v, leaseId) ? GrantTime.in(v) : null;
        if (at == null || !at.of(v).endsWith(HANDED)) {
            return kv
                    .getValue(); // a shared key, a created mutex (the create revision stays), or one carrying its token
        }
        return bytes(
                v.substring(0, at.end() - HANDED.length()) + KEPT_TOKEN + kv.getModRevision() + v.substring(at.end()));
    }

    /** A mutex value read back, without the token marks of its grant time. */
    static HeldValue decodeMutex(String v) {
        GrantTime at = GrantTime.in(v);
        int mark = at == null ? -1 : v.indexOf(',', at.start());
        return HeldValue.decode(mark < 0 || mark > at.end() ? v : v.substring(0, mark) + v.substring(at.end()));
    }

    private static HeldValue held(KeyValue kv) {
        String v = kv.getValue().toString(StandardCharsets.UTF_8);
        return HeldValue.decode(v.substring(v.indexOf(HeldValue.SEPARATOR) + 1));
    }

    /**
     * The keys of a renewal's leases, in the order of the requests: each mutex key held by its lease
     * id, else its shared holder key, else null. Two reads per request, in read-only transactions of
     * at most {@code --max-txn-ops}, all sent at once.
     */
    KeyValue[] held(KV kv, List<RenewRequest> requests) {
        int perTxn = EtcdLockBackend.MAX_TXN_OPS / 2;
        List<CompletableFuture<TxnResponse>> reads = new ArrayList<>();
        for (int from = 0; from < requests.size(); from += perTxn) {
            reads.add(kv.txn()
                    .Then(requests.subList(from, Math.min(requests.size(), from + perTxn)).stream()
                            .flatMap(q -> Stream.of(
                                    Op.get(mutexKey(q.name()), GetOption.DEFAULT),
                                    Op.get(holderKey(q.name(), q.leaseId()), GetOption.DEFAULT)))
                            .toArray(Op[]::new))
                    .commit());
        }
        KeyValue[] found = new KeyValue[requests.size()];
        for (int c = 0; c < reads.size(); c++) {
            List<GetResponse> gets = calls.await("renew of ", requests.size() + " lease(s)", reads.get(c))
                    .getGetResponses();
            for (int j = 0; j < gets.size(); j += 2) {
                int i = c * perTxn + j / 2;
                List<KeyValue> mutex = gets.get(j).getKvs();
                List<KeyValue> holder = gets.get(j + 1).getKvs();
                found[i] = !mutex.isEmpty()
                                && HeldValue.heldBy(
                                        mutex.get(0).getValue().toString(StandardCharsets.UTF_8),
                                        requests.get(i).leaseId())
                        ? mutex.get(0)
                        : holder.isEmpty() ? null : holder.get(0);
            }
        }
        return found;
    }

    /**
     * The owner check of a transaction: {@code key}'s value starts with {@code leaseId LF}
     * ({@link HeldValue}). etcd compares values only as wholes or by byte order, so it is the range
     * {@code leaseId LF < value < leaseId VT} (VT follows LF); every value has a grant time after the
     * LF, and lease ids hold no LF, so the range holds exactly the grants of {@code leaseId}. A
     * missing key fails a value compare.
     */
    static Cmp[] heldBy(ByteSequence key, String leaseId) {
        return new Cmp[] {
            new Cmp(key, Cmp.Op.GREATER, CmpTarget.value(bytes(leaseId + HeldValue.SEPARATOR))),
            new Cmp(key, Cmp.Op.LESS, CmpTarget.value(bytes(leaseId + (char) (HeldValue.SEPARATOR + 1))))
        };
    }

    /**
     * The keys (mutex keys and shared keys of any names) as held locks, by name: a mutex key, or the
     * holders of a shared name (names with only waiters are not held). Each etcd lease's remaining
     * TTL is one query, all at once. etcd has no clock API: the answer's time is this client's clock.
     */
    List<LockInfo> infos(String operation, String subject, List<KeyValue> kvs) {
        Map<String, KeyValue> mutexes = new TreeMap<>();
        Map<String, List<Shared>> holders = new TreeMap<>();
        Map<Long, CompletableFuture<LeaseTimeToLiveResponse>> ttls = new HashMap<>();
        for (KeyValue v : kvs) {
            String key = v.getKey().toString(StandardCharsets.UTF_8);
            if (isPlace(key)) {
                continue; // a queue place or mark: a client waiting, not a holder
            }
            int at = key.indexOf(SHARED, prefix.length());
            Shared s = at < 0 ? null : shared(v);
            if (at < 0) {
                mutexes.put(key.substring(prefix.length()), v);
            } else if (s != null && s.holder()) {
                holders.computeIfAbsent(key.substring(prefix.length(), at), n -> new ArrayList<>())
                        .add(s);
            } else {
                continue;
            }
            if (v.getLease() != 0) {
                ttls.computeIfAbsent(v.getLease(), id -> leaseClient.timeToLive(id, LeaseOption.DEFAULT));
            }
        }
        Map<Long, Long> seconds = new HashMap<>();
        for (Map.Entry<Long, CompletableFuture<LeaseTimeToLiveResponse>> e : ttls.entrySet()) {
            try {
                seconds.put(
                        e.getKey(),
                        calls.await(operation, subject, e.getValue()).getTTL());
            } catch (LockBackendException ex) {
                if (!EtcdLeases.leaseGone(ex)) {
                    throw ex;
                }
                seconds.put(e.getKey(), 0L);
            }
        }
        Instant now = Instant.now();
        List<LockInfo> infos = new ArrayList<>(mutexes.size() + holders.size());
        holders.forEach((name, list) -> {
            List<LockHolder> shown = new ArrayList<>(list.size());
            for (Shared s : list) {
                HeldValue h = held(s.kv());
                shown.add(new LockHolder(
                        h.leaseId(),
                        s.mode(),
                        s.permits(),
                        s.kv().getCreateRevision(),
                        now.plusSeconds(Math.max(0, seconds.getOrDefault(s.kv().getLease(), 0L))),
                        h.metadata(),
                        h.heldSince()));
            }
            shown.sort(Comparator.comparingLong(LockHolder::token));
            LockHolder latest = shown.get(shown.size() - 1);
            Shared any = list.get(0);
            infos.add(new LockInfo(
                    name,
                    true,
                    latest.leaseId(),
                    latest.token(),
                    latest.expiresAt(),
                    now,
                    latest.metadata(),
                    latest.heldSince(),
                    any.kind(),
                    any.kind() == LockMode.PERMITS ? any.limit() : 0,
                    shown));
        });
        mutexes.forEach((name, v) -> {
            if (holders.containsKey(name)) {
                return; // cannot be: a mutex and shared holders exclude each other
            }
            long left = Math.max(0, seconds.getOrDefault(v.getLease(), 0L));
            HeldValue holder = decodeMutex(v.getValue().toString(StandardCharsets.UTF_8));
            infos.add(new LockInfo(
                    name,
                    true,
                    holder.leaseId(),
                    mutexToken(v),
                    now.plusSeconds(left),
                    now,
                    holder.metadata(),
                    holder.heldSince()));
        });
        return infos;
    }
}
