package io.fencelock.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.etcd.EtcdLeases.SharedLease;
import io.fencelock.etcd.EtcdSharedGrants.Queuing;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd primitive on jetcd. A mutex is the key {@code <prefix><name>}, holding the fencelock lease
 * id, the grant's time and the metadata ({@link HeldValue}) and bound to an etcd lease; the fencing
 * token is the key's {@code create_revision}, which is cluster-global, strictly increasing and
 * persisted in the raft log, so tokens rise across release, expiry, takeover and restarts. Shared
 * grants are keys beside it, one per holder, with the same token rule ({@link EtcdRecords}).
 * <ul>
 *   <li><b>Acquire</b> of a mutex is one transaction: {@code if create_revision(key) == 0 and the
 *       name has no shared guard then put(key, value, lease) else read the name}
 *       ({@link EtcdSharedGrants#mutex}). The etcd lease is shared: one per backend and TTL (rounded
 *       up to whole seconds, etcd's unit), granted on first use and reused, so an acquire is one round
 *       trip. When the shared lease might end before the new lock's TTL, a keep-alive goes out with the
 *       transaction (in parallel, same round trip). Shared grants: {@link EtcdSharedGrants#grant}.</li>
 *   <li><b>Renew</b> keeps each distinct etcd lease of the batch alive once and reads the keys (mutex
 *       and shared holder) in 128-operation read-only transactions, all sent at once: one round trip
 *       for the whole batch. Holds of this backend that were due and not renewed are deleted whenever
 *       their shared lease is kept alive, so a lock nobody renews does not live on through its siblings.</li>
 *   <li><b>Release</b>: {@code if value(key) starts with leaseId LF then delete(key) else delete the
 *       shared keys of that id} ({@link EtcdSharedGrants#release}). A mutex whose name has waiting clients
 *       is granted to the first of them in the same transaction instead ({@code GRANT_ON_RELEASE}), from
 *       this backend's one watch of every queue ({@link QueueView}), checked in the condition.</li>
 *   <li><b>Wake-ups</b>: a waiter watches the name's keys for deletes and downgrades (a fresh watch
 *       is synced, so etcd delivers the event at once).</li>
 * </ul>
 * etcd has no clock API: {@code serverTime} in {@link LockInfo} is this client's clock when the answer
 * arrived, and expiries are the lease TTLs etcd reports (whole seconds) added to it.
 *
 * <p>Around the primitive: {@link EtcdSettings} (the builder's values and the jetcd client),
 * {@link EtcdLeases} (the shared etcd leases and the holds on them), {@link EtcdCalls} (waiting for
 * replies, failure mapping), {@link ReleaseWatcher} (wake-ups and grants by a release), {@link QueueView}
 * (the queues as this backend sees them) and {@link EtcdSharedGrants}.
 */
public final class EtcdLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(EtcdLockBackend.class);
    /** etcd's default {@code --max-txn-ops}. */
    static final int MAX_TXN_OPS = 128;

    private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(
            Capability.FENCING,
            Capability.DURABLE_TOKENS,
            Capability.SERVER_TIME,
            Capability.WAKE_ON_RELEASE,
            Capability.BATCH_RENEW,
            Capability.HAND_OVER,
            Capability.LINEARIZABLE,
            Capability.METADATA,
            Capability.EXTENDABLE_TTL,
            Capability.SHARED_LOCKS,
            Capability.FAIR_ORDER,
            Capability.GRANT_ON_RELEASE));

    private final Client client;
    private final KV kv;
    private final Lease leaseClient;
    private final String prefix;
    private final String where;
    private final EtcdCalls calls;
    private final EtcdLeases leases;
    private final EtcdRecords records;
    private final ReleaseWatcher watcher;
    private final QueueView queues;
    private final EtcdSharedGrants shared;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EtcdLockBackend(Client client, String prefix, String where, Duration timeout) {
        this.client = client;
        this.kv = client.getKVClient();
        this.leaseClient = client.getLeaseClient();
        this.prefix = prefix;
        this.where = where;
        this.calls = new EtcdCalls(timeout, where);
        this.leases = new EtcdLeases(leaseClient, kv, calls, this::key, where);
        this.records = new EtcdRecords(leaseClient, calls, prefix);
        this.watcher = new ReleaseWatcher(client.getWatchClient(), kv, this::key, records, where);
        this.queues = new QueueView(client.getWatchClient(), kv, records, where);
        queues.open(); // in the background: until its read is in, a release reads the queue if the name has one
        this.shared = new EtcdSharedGrants(kv, calls, leases, records, watcher, where);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /**
     * The key's value is the lease id, the grant's time and the metadata ({@link HeldValue}), written
     * by the acquire's one transaction. etcd has no clock API, so the grant's time is this client's
     * wall clock when the transaction goes out: the earliest moment etcd can have applied it.
     */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        HeldValue.requireLeaseId(leaseId);
        return tryAcquire(name, leaseId, ttl, metadata, true);
    }

    /**
     * One attempt; a refusal of a waiting client writes or keeps its place in the queue. A grant of a free
     * name carries no place writes: the engine's first attempt of an acquire is sent before it watches the
     * name (etcd proposes and logs a transaction whole, the branch it does not take included, so place writes
     * riding along would cost every grant, about 25 µs a cycle here), and only a waiter refused once asks
     * with its place.
     */
    private AcquireResult tryAcquire(
            String name, String leaseId, Duration ttl, LockMetadata metadata, boolean mayRetry) {
        long now = System.currentTimeMillis();
        ByteSequence value = bytes(HeldValue.encode(leaseId, now, metadata));
        // a waiter's refusal (re)writes its client's queue place when it has none, or one a quarter of its TTL old
        long t0 = System.nanoTime();
        ReleaseWatcher.Placed standing = watcher.placed(name);
        boolean waits = watcher.waitsFor(name);
        Queuing queuing =
                waits || standing != null ? queuing(name, leaseId, ttl, metadata, now, t0, waits, standing) : null;
        AcquireResult r = acquire(name, leaseId, ttl, mayRetry, (lease, t) -> {
            // Recorded before the transaction goes out, so that a grant whose answer never comes is still
            // dropped (owner-checked) once due, instead of living on through the shared lease's keep-alives.
            // A refusal that queued this lease keeps it: a release may grant it later.
            leases.hold(name, leaseId, lease, t + ttl.toNanos());
            return shared.mutex(name, value, lease, queuing);
        });
        if (queuing == null) {
            return r;
        }
        if (r.acquired()) {
            watcher.granted(name); // the grant deleted the client's place
            if (standing != null) {
                leases.drop(standing.leaseId());
            }
        } else if (r.queuedGrant()) {
            watcher.grantedTo(name, standing.leaseId());
            return AcquireResult.queuedGrant(
                    r.queuedAs(),
                    r.token(),
                    Instant.now().plus(standing.ttl()).minusNanos(System.nanoTime() - standing.writtenAt()));
        } else if (leaseId.equals(r.queuedAs())) {
            watcher.placed(name, leaseId, t0, ttl);
            if (standing != null) {
                leases.drop(standing.leaseId()); // its place now names this lease, so no release grants it
            }
        }
        return r;
    }

    /**
     * How a waiting client's attempt takes part in the name's queue: it (re)writes the client's place when the
     * client has none, or one a quarter of its TTL old ({@link EtcdSharedGrants.Queuing}).
     */
    private Queuing queuing(
            String name,
            String leaseId,
            Duration ttl,
            LockMetadata metadata,
            long nowMillis,
            long t0,
            boolean waits,
            ReleaseWatcher.Placed standing) {
        ByteSequence place = records.placeKey(name, watcher.clientId);
        return new Queuing(
                place,
                records.queueMark(name),
                queues.markIfAlone(name, place),
                leaseId,
                waits && (standing == null || standing.stale(ttl, t0))
                        ? EtcdRecords.placeValue(leaseId, nowMillis, ttl, metadata)
                        : null,
                standing == null ? null : standing.leaseId());
    }

    /**
     * {@link EtcdSharedGrants#handOver}: one transaction. The new grant's hold is recorded before it goes
     * out, as an acquire's is; the old one is dropped once the hand-over is answered.
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        HeldValue.requireLeaseId(fromLeaseId);
        HeldValue.requireLeaseId(leaseId);
        ByteSequence value = EtcdRecords.handedValue(leaseId, System.currentTimeMillis(), metadata);
        AcquireResult r = acquire(name, leaseId, ttl, true, (lease, t0) -> {
            leases.hold(name, leaseId, lease, t0 + ttl.toNanos());
            return shared.handOver(name, fromLeaseId, value, lease);
        });
        if (r.acquired()) {
            leases.drop(fromLeaseId);
        }
        return r;
    }

    /** Semaphores, readers, writers and the fair mutex: {@link EtcdSharedGrants#grant}. */
    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        HeldValue.requireLeaseId(leaseId);
        HeldValue.requireLeaseId(request.waiterId());
        return acquire(
                name,
                leaseId,
                ttl,
                true,
                (lease, t0) -> shared.grant(name, leaseId, ttl, request, metadata, lease, t0));
    }

    /** One attempt on the etcd lease for {@code ttl}; the attempt records its hold before it writes. */
    private interface Attempt {
        AcquireResult on(SharedLease lease, long t0);
    }

    /**
     * The etcd lease around an attempt: this TTL's shared lease, with a keep-alive in parallel when it
     * might end before the TTL asked; a grant whose keep-alive failed is given back.
     */
    private AcquireResult acquire(String name, String leaseId, Duration ttl, boolean mayRetry, Attempt attempt) {
        long t0 = System.nanoTime();
        SharedLease lease = leases.leaseFor(ttl, t0);
        CompletableFuture<LeaseKeepAliveResponse> keepAlive = leases.keepAliveFor(lease, t0, ttl);
        AcquireResult r;
        try {
            r = attempt.on(lease, t0);
        } catch (LockBackendException e) {
            if (EtcdLeases.leaseGone(e)) {
                leases.drop(leaseId); // a put on a lease etcd does not know is never applied
                if (mayRetry) {
                    lease.dead = true; // expired between our last keep-alive and this put: grant a new one
                    return acquire(name, leaseId, ttl, false, attempt);
                }
            }
            throw e;
        } catch (IllegalArgumentException e) {
            leases.drop(leaseId); // another kind of lock: nothing was written
            throw e;
        }
        if (!r.acquired()) {
            if (!leaseId.equals(r.queuedAs())) {
                leases.drop(leaseId);
            } else if (keepAlive != null && !leases.kept(lease, keepAlive)) {
                // a release may grant the place on this lease, which may end before the TTL counted from now
                releaseQuietly(name, leaseId);
                return AcquireResult.held(r.holderRemaining());
            }
            return r;
        }
        if (keepAlive != null && !leases.kept(lease, keepAlive)) {
            // the key may outlive the lease's last keep-alive by less than the TTL asked: give it back
            releaseQuietly(name, leaseId);
            if (mayRetry && lease.dead) {
                return acquire(name, leaseId, ttl, false, attempt);
            }
            throw new LockBackendException(
                    "tryAcquire of '" + name + "' on " + where
                            + ": the etcd lease could not be kept alive for the TTL asked",
                    true);
        }
        return AcquireResult.granted(r.token(), EtcdLeases.expiry(lease));
    }

    /** {@link EtcdSharedGrants#downgrade}. */
    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        HeldValue.requireLeaseId(leaseId);
        return shared.downgrade(name, leaseId, ttl, true);
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        requests.forEach(q -> HeldValue.requireLeaseId(q.leaseId()));
        long t0 = System.nanoTime();
        // 1. keep alive every shared lease the batch's locks were granted on, once each
        Map<Long, SharedLease> known = leases.leasesOf(requests);
        Set<String> renewing = new HashSet<>();
        requests.forEach(q -> renewing.add(q.leaseId()));
        Map<Long, CompletableFuture<LeaseKeepAliveResponse>> keepAlives = new HashMap<>();
        known.values().forEach(l -> keepAlives.put(l.id, leases.keepAlive(l, t0, renewing)));
        // 2. read every key, all at once
        KeyValue[] found = records.held(kv, requests);
        Map<Long, Boolean> alive = new HashMap<>();
        known.values().forEach(l -> alive.put(l.id, leases.kept(l, keepAlives.get(l.id))));
        RenewResult[] results = new RenewResult[requests.size()];
        List<Integer> rebind = new ArrayList<>();
        for (int i = 0; i < results.length; i++) {
            RenewRequest q = requests.get(i);
            KeyValue v = found[i];
            if (v == null) {
                results[i] = RenewResult.rejected();
                leases.drop(q.leaseId());
            } else if (Boolean.TRUE.equals(alive.get(v.getLease()))) {
                SharedLease l = known.get(v.getLease());
                leases.hold(q.name(), q.leaseId(), v, l, t0 + q.ttl().toNanos());
                results[i] = RenewResult.renewed(EtcdRecords.token(v, q.leaseId()), EtcdLeases.expiry(l));
            } else if (alive.containsKey(v.getLease())) {
                results[i] = RenewResult.rejected(); // its lease is gone (the key goes with it) or unreachable
                leases.drop(q.leaseId());
            } else {
                rebind.add(i); // held on a lease this backend does not keep (another backend's, or another TTL's)
            }
        }
        // 3. rare: move such locks onto this backend's lease for their TTL, keeping their tokens
        if (!rebind.isEmpty()) {
            leases.rebind(requests, found, rebind, results, t0);
        }
        return List.of(results);
    }

    /** Owner-checked, one transaction: {@link EtcdSharedGrants#release}. */
    @Override
    public boolean release(String name, String leaseId) {
        HeldValue.requireLeaseId(leaseId);
        // a mutex release grants the first client waiting in the name's queue, if one still asks; the release of
        // the lease this client's place was written with (the waiter stopped) withdraws the place instead
        ReleaseWatcher.Placed placed = watcher.placed(name);
        boolean withdraws = placed != null && placed.leaseId().equals(leaseId) && !placed.granted();
        boolean freed =
                shared.release(name, leaseId, leases.holdsMutex(leaseId) && !withdraws ? queues.seen(name) : null);
        // Only now: if the release failed, the hold stays and is dropped once due, not carried on by the shared lease.
        leases.drop(leaseId);
        watcher.withdrawn(name, leaseId);
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
     * The mutex key and the shared keys, and, in a second round trip, their etcd leases' remaining TTLs
     * (whole seconds, as etcd reports them). A key whose lease has expired but which etcd has not yet
     * revoked (it checks every 500 ms) is still reported as held: it still blocks acquires.
     */
    @Override
    public Optional<LockInfo> inspect(String name) {
        List<KeyValue> kvs = new ArrayList<>();
        calls.await(
                        "inspect of '",
                        name,
                        kv.txn()
                                .Then(Op.get(key(name), GetOption.DEFAULT), records.sharedRange(name))
                                .commit())
                .getGetResponses()
                .forEach(g -> kvs.addAll(g.getKvs()));
        List<LockInfo> infos = records.infos("inspect of '", name, kvs);
        return infos.isEmpty() ? Optional.empty() : Optional.of(infos.get(0));
    }

    /** One range read of the prefix (mutex and shared keys), then one TTL query per distinct etcd lease, all at once. */
    @Override
    public List<LockInfo> list(String namePrefix) {
        List<KeyValue> kvs = calls.await(
                        "list of '",
                        namePrefix,
                        kv.get(
                                key(namePrefix),
                                GetOption.builder().isPrefix(true).build()))
                .getKvs();
        List<LockInfo> infos = new ArrayList<>(records.infos("list of '", namePrefix, kvs));
        infos.sort(Comparator.comparing(LockInfo::name));
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

    /** Makes this backend's view of the queues miss every write, so its releases must read the queue (for tests). */
    void forgetQueues() {
        queues.forget();
    }

    /** How many places of {@code name}'s queue this backend's view knows (for tests). */
    int queueSeen(String name) {
        return queues.known(name);
    }

    /** Whether an etcd watch of {@code name} was opened (for tests). */
    boolean watchOpened(String name) {
        return watcher.opened(name);
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
            queues.close();
            client.close();
        }
    }

    @Override
    public String toString() {
        return "EtcdLockBackend[" + prefix + " on " + where + "]";
    }

    // ------------------------------------------------------------------ machinery

    private ByteSequence key(String name) {
        return bytes(prefix + name);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Validates everything before any I/O. */
    public static final class Builder {
        private final EtcdSettings settings = new EtcdSettings();

        private Builder() {}

        /** Client endpoints, e.g. {@code http://127.0.0.1:2379}. */
        public Builder endpoints(String... endpoints) {
            for (String e : endpoints) {
                settings.endpoint(e);
            }
            return this;
        }

        public Builder endpoints(List<String> endpoints) {
            return endpoints(endpoints.toArray(String[]::new));
        }

        /**
         * Where the lock keys live: 1 to 64 characters from A-Z a-z 0-9 . _ - : / @ + = #,
         * ending with {@code /}; the default is {@code fencelock/}.
         */
        public Builder keyPrefix(String keyPrefix) {
            settings.keyPrefix(keyPrefix);
            return this;
        }

        /** How long one call may take before it fails as retryable (default 5 s). */
        public Builder requestTimeout(Duration timeout) {
            settings.requestTimeout(timeout);
            return this;
        }

        public EtcdLockBackend build() {
            String where = settings.where();
            return new EtcdLockBackend(settings.client(), settings.keyPrefix, where, settings.requestTimeout);
        }
    }
}
