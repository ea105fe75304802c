package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.ReleaseFeed;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * The etcd primitive on jetcd. A lock is the key {@code <prefix><name>}, holding the fencelock lease
 * id and bound to an etcd lease; the fencing token is the key's {@code create_revision}, which is
 * cluster-global, strictly increasing and persisted in the raft log, so tokens rise across release,
 * expiry, takeover and restarts.
 * <ul>
 *   <li><b>Acquire</b> is one transaction: {@code if create_revision(key) == 0 then put(key, leaseId,
 *       lease) else get(key)}. The etcd lease is shared: one per backend and TTL (rounded up to whole
 *       seconds, etcd's unit), granted on first use and reused, so an acquire is one round trip. When
 *       the shared lease might end before the new lock's TTL, a keep-alive goes out with the
 *       transaction (in parallel, same round trip).</li>
 *   <li><b>Renew</b> keeps each distinct etcd lease of the batch alive once and reads the keys in
 *       128-operation read-only transactions, all sent at once: one round trip for the whole batch.
 *       Holds of this backend that were due and not renewed are deleted whenever their shared lease
 *       is kept alive, so a lock nobody renews does not live on through its siblings.</li>
 *   <li><b>Release</b>: {@code if value(key) == leaseId then delete(key)}.</li>
 *   <li><b>Wake-ups</b>: a waiter watches its key for deletes (a fresh watch is synced, so etcd
 *       delivers the delete at once).</li>
 * </ul>
 * etcd has no clock API: {@code serverTime} in {@link LockInfo} is this client's clock when the answer
 * arrived, and expiries are the lease TTLs etcd reports (whole seconds) added to it.
 */
public final class EtcdLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    static final String DEFAULT_PREFIX = "fencelock/";
    static final int MAX_PREFIX = 64;
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._\\-:/@+=#]{0," + (MAX_PREFIX - 1) + "}/");
    /** etcd's default {@code --max-txn-ops}. */
    static final int MAX_TXN_OPS = 128;
    private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.FENCING, Capability.DURABLE_TOKENS,
            Capability.SERVER_TIME, Capability.WAKE_ON_RELEASE, Capability.BATCH_RENEW, Capability.LINEARIZABLE));

    private final Client client;
    private final KV kv;
    private final Lease leases;
    private final String prefix;
    private final String where;
    private final Duration timeout;
    private final ReleaseWatcher watcher;
    private final ConcurrentHashMap<Long, SharedLease> leaseBySeconds = new ConcurrentHashMap<>();
    /** By fencelock lease id: every grant this backend made or may have made (an acquire of unknown outcome). */
    private final ConcurrentHashMap<String, Hold> holds = new ConcurrentHashMap<>();
    private final ReentrantLock granting = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** An etcd lease shared by the locks of one TTL; {@code validUntil} is a lower bound of its server-side expiry. */
    static final class SharedLease {
        final long id;
        final long seconds;
        volatile long validUntil; // System.nanoTime() scale
        volatile boolean dead;

        SharedLease(long id, long seconds, long validUntil) {
            this.id = id;
            this.seconds = seconds;
            this.validUntil = validUntil;
        }
    }

    /** A lock this backend granted: on which etcd lease, and until when its holder asked for it (nanoTime). */
    private record Hold(String name, String leaseId, SharedLease lease, long due) {
    }

    private EtcdLockBackend(Client client, String prefix, String where, Duration timeout) {
        this.client = client;
        this.kv = client.getKVClient();
        this.leases = client.getLeaseClient();
        this.prefix = prefix;
        this.where = where;
        this.timeout = timeout;
        this.watcher = new ReleaseWatcher(client.getWatchClient(), this::key, where);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, true);
    }

    private AcquireResult tryAcquire(String name, String leaseId, Duration ttl, boolean mayRetry) {
        long t0 = System.nanoTime();
        SharedLease lease = leaseFor(seconds(ttl), t0);
        CompletableFuture<LeaseKeepAliveResponse> keepAlive = lease.validUntil - t0 < ttl.toNanos()
                ? keepAlive(lease, t0, Set.of()) : null;
        ByteSequence key = key(name);
        // Recorded before the transaction goes out, so that a grant whose answer never comes is still
        // dropped (owner-checked) once due, instead of living on through the shared lease's keep-alives.
        holds.put(leaseId, new Hold(name, leaseId, lease, t0 + ttl.toNanos()));
        CompletableFuture<TxnResponse> txn = kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                .Then(Op.put(key, bytes(leaseId), PutOption.builder().withLeaseId(lease.id).build()))
                .Else(Op.get(key, GetOption.DEFAULT))
                .commit();
        TxnResponse r;
        try {
            r = await("tryAcquire of '", name, txn);
        } catch (LockBackendException e) {
            if (leaseGone(e)) {
                holds.remove(leaseId); // a put on a lease etcd does not know is never applied
                if (mayRetry) {
                    lease.dead = true; // expired between our last keep-alive and this put: grant a new one
                    return tryAcquire(name, leaseId, ttl, false);
                }
            }
            throw e;
        }
        long token;
        if (r.isSucceeded()) {
            token = r.getHeader().getRevision(); // the put's revision is the new key's create_revision
        } else {
            List<KeyValue> found = r.getGetResponses().isEmpty() ? List.of() : r.getGetResponses().get(0).getKvs();
            KeyValue holder = found.isEmpty() ? null : found.get(0);
            if (holder == null || !holder.getValue().equals(bytes(leaseId)) || holder.getLease() != lease.id) {
                holds.remove(leaseId);
                watcher.heldAt(name, r.getHeader().getRevision());
                return AcquireResult.held(null); // the holder's lease TTL would cost another round trip: the watch wakes us
            }
            token = holder.getCreateRevision(); // our own put, answered to an attempt jetcd retried
        }
        if (keepAlive != null && !kept(lease, keepAlive)) {
            // the key may outlive the lease's last keep-alive by less than the TTL asked: give it back
            releaseQuietly(name, leaseId);
            if (mayRetry && lease.dead) {
                return tryAcquire(name, leaseId, ttl, false);
            }
            throw new LockBackendException("tryAcquire of '" + name + "' on " + where
                    + ": the etcd lease could not be kept alive for the TTL asked", true);
        }
        return AcquireResult.granted(token, expiry(lease));
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        long t0 = System.nanoTime();
        // 1. keep alive every shared lease the batch's locks were granted on, once each
        Map<Long, SharedLease> known = new LinkedHashMap<>();
        Set<String> renewing = new HashSet<>();
        for (RenewRequest q : requests) {
            renewing.add(q.leaseId());
            Hold h = holds.get(q.leaseId());
            if (h != null && h.name.equals(q.name()) && h.lease.seconds * 1_000_000_000L >= q.ttl().toNanos()) {
                known.putIfAbsent(h.lease.id, h.lease);
            }
        }
        Map<Long, CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new HashMap<>();
        known.values().forEach(l -> keepAlives.put(l.id, keepAlive(l, t0, renewing)));
        // 2. read every key, MAX_TXN_OPS per read-only transaction, all at once
        List<CompletableFuture<TxnResponse>> reads = new ArrayList<>();
        for (int from = 0; from < requests.size(); from += MAX_TXN_OPS) {
            List<RenewRequest> chunk = requests.subList(from, Math.min(requests.size(), from + MAX_TXN_OPS));
            reads.add(kv.txn().Then(chunk.stream().map(q -> (Op) Op.get(key(q.name()), GetOption.DEFAULT)).toArray(Op[]::new)).commit());
        }
        KeyValue[] found = new KeyValue[requests.size()];
        for (int c = 0; c < reads.size(); c++) {
            List<GetResponse> gets = await("renew of ", requests.size() + " lease(s)", reads.get(c)).getGetResponses();
            for (int j = 0; j < gets.size(); j++) {
                List<KeyValue> kvs = gets.get(j).getKvs();
                found[c * MAX_TXN_OPS + j] = kvs.isEmpty() ? null : kvs.get(0);
            }
        }
        Map<Long, Boolean> alive = new HashMap<>();
        known.values().forEach(l -> alive.put(l.id, kept(l, keepAlives.get(l.id))));
        RenewResult[] results = new RenewResult[requests.size()];
        List<Integer> rebind = new ArrayList<>();
        for (int i = 0; i < results.length; i++) {
            RenewRequest q = requests.get(i);
            KeyValue v = found[i];
            if (v == null || !v.getValue().equals(bytes(q.leaseId()))) {
                results[i] = RenewResult.rejected();
                holds.remove(q.leaseId());
            } else if (Boolean.TRUE.equals(alive.get(v.getLease()))) {
                SharedLease l = known.get(v.getLease());
                holds.put(q.leaseId(), new Hold(q.name(), q.leaseId(), l, t0 + q.ttl().toNanos()));
                results[i] = RenewResult.renewed(v.getCreateRevision(), expiry(l));
            } else if (alive.containsKey(v.getLease())) {
                results[i] = RenewResult.rejected(); // its lease is gone (the key goes with it) or unreachable
                holds.remove(q.leaseId());
            } else {
                rebind.add(i); // held on a lease this backend does not keep (another backend's, or a shorter TTL)
            }
        }
        // 3. rare: move such locks onto this backend's lease for their TTL, keeping their create_revision
        if (!rebind.isEmpty()) {
            rebind(requests, found, rebind, results, t0);
        }
        return List.of(results);
    }

    private void rebind(List<RenewRequest> requests, KeyValue[] found, List<Integer> which, RenewResult[] results, long t0) {
        Map<Integer, CompletableFuture<TxnResponse>> puts = new HashMap<>();
        Map<Integer, SharedLease> onto = new HashMap<>();
        for (int i : which) {
            RenewRequest q = requests.get(i);
            SharedLease l = leaseFor(seconds(q.ttl()), t0);
            if (l.validUntil - t0 < q.ttl().toNanos() && !kept(l, keepAlive(l, t0, Set.of()))) {
                results[i] = RenewResult.rejected();
                continue;
            }
            ByteSequence key = key(q.name());
            onto.put(i, l);
            puts.put(i, kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(q.leaseId()))),
                            new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(found[i].getCreateRevision())))
                    .Then(Op.put(key, bytes(q.leaseId()), PutOption.builder().withLeaseId(l.id).build())).commit());
        }
        for (Map.Entry<Integer, CompletableFuture<TxnResponse>> e : puts.entrySet()) {
            int i = e.getKey();
            RenewRequest q = requests.get(i);
            boolean moved = await("renew of '", q.name(), e.getValue()).isSucceeded();
            SharedLease l = onto.get(i);
            if (moved) {
                holds.put(q.leaseId(), new Hold(q.name(), q.leaseId(), l, t0 + q.ttl().toNanos()));
            }
            results[i] = moved ? RenewResult.renewed(found[i].getCreateRevision(), expiry(l)) : RenewResult.rejected();
        }
    }

    @Override
    public boolean release(String name, String leaseId) {
        ByteSequence key = key(name);
        boolean freed = await("release of '", name, kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(leaseId))))
                .Then(Op.delete(key, DeleteOption.DEFAULT)).commit()).isSucceeded();
        // Only now: if the release failed, the hold stays and is dropped once due, not carried on by the shared lease.
        holds.remove(leaseId);
        return freed;
    }

    private void releaseQuietly(String name, String leaseId) {
        try {
            release(name, leaseId);
        } catch (RuntimeException e) {
            log.debug("fencelock: giving back '{}' on {} failed: {}", name, where, e.toString());
        }
    }

    /**
     * The key and, in a second round trip, its etcd lease's remaining TTL (whole seconds, as etcd
     * reports it). A key whose lease has expired but which etcd has not yet revoked (it checks every
     * 500 ms) is still reported as held: it still blocks acquires.
     */
    @Override
    public Optional<LockInfo> inspect(String name) {
        List<KeyValue> kvs = await("inspect of '", name, kv.get(key(name))).getKvs();
        return kvs.isEmpty() ? Optional.empty() : Optional.of(infos("inspect of '", name, kvs).get(0));
    }

    /** One range read of the prefix, then one TTL query per distinct etcd lease, all at once. */
    @Override
    public List<LockInfo> list(String namePrefix) {
        List<KeyValue> kvs = await("list of '", namePrefix, kv.get(key(namePrefix),
                GetOption.builder().isPrefix(true).build())).getKvs();
        List<LockInfo> infos = new ArrayList<>(infos("list of '", namePrefix, kvs));
        infos.sort(Comparator.comparing(LockInfo::name));
        return infos;
    }

    private List<LockInfo> infos(String operation, String subject, List<KeyValue> kvs) {
        Map<Long, CompletableFuture<io.etcd.jetcd.lease.LeaseTimeToLiveResponse>> ttls = new HashMap<>();
        for (KeyValue v : kvs) {
            if (v.getLease() != 0) {
                ttls.computeIfAbsent(v.getLease(), id -> leases.timeToLive(id, LeaseOption.DEFAULT));
            }
        }
        Map<Long, Long> seconds = new HashMap<>();
        for (Map.Entry<Long, CompletableFuture<io.etcd.jetcd.lease.LeaseTimeToLiveResponse>> e : ttls.entrySet()) {
            try {
                seconds.put(e.getKey(), await(operation, subject, e.getValue()).getTTL());
            } catch (LockBackendException ex) {
                if (!leaseGone(ex)) {
                    throw ex;
                }
                seconds.put(e.getKey(), 0L);
            }
        }
        Instant now = Instant.now();
        List<LockInfo> infos = new ArrayList<>(kvs.size());
        for (KeyValue v : kvs) {
            String key = v.getKey().toString(StandardCharsets.UTF_8);
            long left = Math.max(0, seconds.getOrDefault(v.getLease(), 0L));
            infos.add(new LockInfo(key.substring(prefix.length()), true, v.getValue().toString(StandardCharsets.UTF_8),
                    v.getCreateRevision(), now.plusSeconds(left), now));
        }
        return infos;
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(watcher);
    }

    /** Whether the server has confirmed the watch of {@code name} (for tests). */
    boolean watchConfirmed(String name) {
        return watcher.confirmed(name);
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /** Closes the client. Locks stay held until their etcd lease expires (at most its TTL, whole seconds). */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            watcher.close();
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLockBackend[" + prefix + " on " + where + "]";
    }

    // ------------------------------------------------------------------ leases

    /**
     * The TTL of the etcd lease that carries locks of {@code ttl}: whole seconds (etcd's unit), with
     * headroom: {@code ceil(ttl + min(ttl / 2, 1 s))}. A lease kept alive within the last
     * {@code min(ttl / 2, 1 s)} still covers a new lock's whole TTL, so most acquires need no
     * keep-alive of their own. The price: a crashed holder's lock is freed up to that headroom plus
     * the rounding (and etcd's 500 ms expiry check) later than its TTL. etcd raises a TTL below its
     * minimum ({@code 1.5 x election timeout}, 2 s with default settings).
     */
    static long seconds(Duration ttl) {
        Duration headroom = ttl.dividedBy(2).compareTo(Duration.ofSeconds(1)) < 0 ? ttl.dividedBy(2) : Duration.ofSeconds(1);
        Duration t = ttl.plus(headroom);
        return Math.max(1, t.getSeconds() + (t.getNano() > 0 ? 1 : 0));
    }

    /** This backend's live lease for {@code seconds}, granted now (one round trip) if there is none or it may have expired. */
    private SharedLease leaseFor(long seconds, long now) {
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
            io.etcd.jetcd.lease.LeaseGrantResponse g = await("grant of an etcd lease of ", seconds + " s", leases.grant(seconds));
            long lives = Math.max(seconds, g.getTTL()); // etcd raises a TTL below its minimum, never lowers one
            SharedLease fresh = new SharedLease(g.getID(), lives, sent + TimeUnit.SECONDS.toNanos(g.getTTL() > 0 ? g.getTTL() : seconds));
            leaseBySeconds.put(seconds, fresh);
            return fresh;
        } finally {
            granting.unlock();
        }
    }

    /**
     * Sends one keep-alive for {@code l}; first gives back the holds on it that were due before
     * {@code sent} and are not being renewed now (by lease id), so that a lock nobody renews, or a
     * grant whose answer was lost, is not carried on by its siblings' renewals.
     */
    private CompletableFuture<LeaseKeepAliveResponse> keepAlive(SharedLease l, long sent, Set<String> renewing) {
        for (Hold h : holds.values()) {
            if (h.lease == l && h.due - sent < 0 && !renewing.contains(h.leaseId) && holds.remove(h.leaseId, h)) {
                ByteSequence key = key(h.name);
                kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(bytes(h.leaseId))))
                        .Then(Op.delete(key, DeleteOption.DEFAULT)).commit()
                        .whenComplete((r, e) -> {
                            if (e != null) {
                                log.debug("fencelock: dropping the expired hold of '{}' on {} failed: {}", h.name, where, e.toString());
                            }
                        });
            }
        }
        return leases.keepAliveOnce(l.id).thenApply(r -> {
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
    }

    /** Whether the keep-alive succeeded; marks the lease dead when etcd no longer knows it. */
    private boolean kept(SharedLease l, CompletableFuture<LeaseKeepAliveResponse> keepAlive) {
        try {
            return await("keep-alive of etcd lease ", Long.toHexString(l.id), keepAlive).getTTL() > 0;
        } catch (LockBackendException e) {
            if (leaseGone(e)) {
                l.dead = true;
            }
            log.debug("fencelock: keep-alive of etcd lease {} on {} failed: {}", Long.toHexString(l.id), where, e.toString());
            return false;
        }
    }

    private static Instant expiry(SharedLease l) {
        return Instant.now().plusNanos(Math.max(0, l.validUntil - System.nanoTime()));
    }

    /** Whether a failure says the etcd lease does not exist (any more); jetcd reports it as NOT_FOUND or UNKNOWN. */
    private static boolean leaseGone(LockBackendException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && m.toLowerCase(Locale.ROOT).contains("lease not found")) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ machinery

    private ByteSequence key(String name) {
        return bytes(prefix + name);
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /**
     * Waits for one call, bounded by the request timeout; maps failures to {@link LockBackendException}.
     * An interrupt does not abandon a request already sent (etcd may still apply it, and nobody would
     * know): the wait goes on to the answer or the timeout, and the interrupt is set again afterwards.
     */
    private <T> T await(String operation, String subject, CompletableFuture<T> call) {
        boolean interrupted = false;
        long end = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                try {
                    return call.get(end - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (TimeoutException e) {
            String what = what(operation, subject);
            call.cancel(true);
            throw new LockBackendException(what + " timed out after " + timeout, e, true);
        } catch (CancellationException e) {
            throw new LockBackendException(what(operation, subject) + " cancelled", e, true);
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw failure(what(operation, subject), cause);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private String what(String operation, String subject) {
        return operation + subject + (operation.endsWith("'") ? "'" : "") + " on " + where;
    }

    static LockBackendException failure(String what, Throwable cause) {
        String code = codeOf(cause);
        boolean retryable = switch (code) {
            case "UNAVAILABLE", "DEADLINE_EXCEEDED", "ABORTED", "RESOURCE_EXHAUSTED", "CANCELLED" -> true;
            default -> false;
        };
        String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : Redaction.message(cause.getMessage());
        return new LockBackendException(what + " failed (" + code + "): " + message, cause, retryable);
    }

    private static String codeOf(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof EtcdException ee && ee.getErrorCode() != null) {
                return ee.getErrorCode().name();
            }
        }
        Status status = Status.fromThrowable(cause);
        if (status.getCode() == Status.Code.UNKNOWN && cause instanceof java.io.IOException) {
            return "UNAVAILABLE";
        }
        return status.getCode().name();
    }

    // ------------------------------------------------------------------ builder

    /** Validates everything before any I/O. */
    public static final class Builder {
        private final List<URI> endpoints = new ArrayList<>();
        private String keyPrefix = DEFAULT_PREFIX;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Client client;

        private Builder() {
        }

        /** Client endpoints, e.g. {@code http://127.0.0.1:2379}. */
        public Builder endpoints(String... endpoints) {
            for (String e : endpoints) {
                this.endpoints.add(endpoint(e));
            }
            return this;
        }

        public Builder endpoints(List<String> endpoints) {
            return endpoints(endpoints.toArray(String[]::new));
        }

        /**
         * Where the lock keys live: 1 to {@value #MAX_PREFIX} characters from A-Z a-z 0-9 . _ - : / @ + = #,
         * ending with {@code /}; the default is {@code fencelock/}.
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = requireValidPrefix(keyPrefix);
            return this;
        }

        /** How long one call may take before it fails as retryable (default 5 s). */
        public Builder requestTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("requestTimeout must be positive, got " + timeout);
            }
            this.requestTimeout = timeout;
            return this;
        }

        public EtcdLockBackend build() {
            requireValidPrefix(keyPrefix);
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("no etcd endpoints given");
            }
            String where = String.join(",", endpoints.stream().map(u -> u.getHost() + ":" + u.getPort()).toList());
            Client c = Client.builder().endpoints(endpoints.toArray(URI[]::new))
                    .connectTimeout(requestTimeout)
                    .retryMaxDuration(requestTimeout)
                    .keepaliveTime(Duration.ofSeconds(10)).keepaliveTimeout(Duration.ofSeconds(5))
                    .build();
            return new EtcdLockBackend(c, keyPrefix, where, requestTimeout);
        }

        private static URI endpoint(String e) {
            if (e == null || e.isBlank()) {
                throw new IllegalArgumentException("an etcd endpoint is empty");
            }
            // named by structure only: a user-info or parameter in it may be a secret
            ConnectionString parsed = ConnectionString.parse(e.trim()).requireValidPorts();
            URI u;
            try {
                u = URI.create(e.trim());
            } catch (IllegalArgumentException ex) {
                // no cause: its message quotes the endpoint
                throw new IllegalArgumentException("etcd endpoint '" + parsed + "' is not a URI");
            }
            if (!"http".equalsIgnoreCase(u.getScheme()) || u.getHost() == null || u.getPort() <= 0 || parsed.hasUserInfo()) {
                throw new IllegalArgumentException("etcd endpoint '" + parsed
                        + "' must be http://host:port (TLS and credentials are not supported yet)");
            }
            return u;
        }
    }

    static String requireValidPrefix(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("keyPrefix " + (prefix == null ? "null" : "'" + prefix + "'")
                    + " is invalid: it must be 1 to " + MAX_PREFIX + " characters from A-Z a-z 0-9 . _ - : / @ + = #"
                    + " and end with '/'");
        }
        return prefix;
    }
}
