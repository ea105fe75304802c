package io.fencelock.redis;

import static io.fencelock.redis.CommandConnection.eval;
import static io.fencelock.redis.Scripts.micros;
import static io.fencelock.redis.Scripts.millis;
import static io.fencelock.redis.Scripts.number;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.redis.CommandConnection.Call;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis primitive on Lettuce: each operation is one Lua script, atomic on the server and one
 * round trip, with expiry on Redis's own clock. A grant is {@code SET lock value NX PXAT}, the value
 * holding the lease id, the grant's time and the metadata ({@link HeldValue}), and, only
 * if that succeeded, {@code HINCRBY} of the name's token record, which never expires, so tokens rise
 * across release, expiry and takeover. Releases are owner-checked and {@code PUBLISH}ed to waiters.
 * Semaphores, read-write locks and fair waiting keep their grants in a hash beside the lock, with a
 * marker in the lock key, and draw tokens from the same record ({@link RedisSharedLocks}).
 * See {@link KeyLayout} for the keys and {@link Scripts} for the scripts; {@link RedisSettings},
 * {@link RedisConnections}, {@link RedisServerFacts} and {@link RedisFailures} are the settings, the
 * connections, the start-up check and the failure mapping around them.
 *
 * <p>Works on a single server, through Sentinel ({@code redis-sentinel://}) and on Cluster
 * ({@code redis-cluster://host:port,host:port}); the capabilities say what each can promise. Tokens
 * survive a restart only on a server with {@code appendonly yes} and {@code appendfsync always}, read
 * at start-up; with replication, a failover can lose a lock and the last tokens (see the README).
 *
 * <pre>{@code
 * LockBackend backend = RedisLockBackend.builder().uri("redis://redis:6379").password(secret).build();
 * }</pre>
 */
public final class RedisLockBackend implements LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(RedisLockBackend.class);
    private static final String QUEUE_SLACK = Long.toString(Scripts.QUEUE_SLACK_MS);

    /** Keys per SCAN page and names per INSPECT call of {@link #list(String)}. */
    private static final int PAGE = 1000;

    /** How the backend reaches Redis. */
    public enum Deployment {
        /** One server ({@code redis://}, {@code rediss://}, {@code redis-socket://}). */
        STANDALONE,
        /** The master that Sentinel names ({@code redis-sentinel://}), followed across failovers. */
        SENTINEL,
        /** A Redis Cluster ({@code redis-cluster://}), keys spread over the masters by slot. */
        CLUSTER
    }

    private final Deployment deployment;
    private final boolean cluster;
    private final KeyLayout keys;
    private final String where;
    private final RedisConnections connections;
    private final CommandConnection connection;
    private final RedisServerFacts facts;
    private final boolean grantsOnRelease; // GRANT_ON_RELEASE declared: a waiter's refusal writes its grant request
    private final ReleaseSubscriber subscriber;
    private final RedisSharedLocks shared;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisLockBackend(
            RedisSettings settings, KeyLayout keys, RedisConnections connections, RedisServerFacts facts) {
        this.deployment = settings.deployment;
        this.cluster = deployment == Deployment.CLUSTER;
        this.keys = keys;
        this.where = settings.where;
        this.connections = connections;
        this.connection = connections.commands;
        this.facts = facts;
        this.grantsOnRelease = facts.capabilities().contains(Capability.GRANT_ON_RELEASE);
        this.subscriber = new ReleaseSubscriber(
                connections.pubSub,
                keys,
                UUID.randomUUID().toString(),
                this::leaveQueue,
                settings.commandTimeout,
                where);
        this.shared = new RedisSharedLocks(this, keys, connection);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /** The metadata and the grant's time (the script's TIME) go into the lock's value: no extra command. */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        RedisSharedLocks.requireId(leaseId);
        // a waiter's refusal (re)writes its grant request when it has none, or one a quarter of its TTL old
        long t0 = System.nanoTime();
        ReleaseSubscriber.Request standing = subscriber.request(name);
        boolean write = grantsOnRelease && (standing == null || standing.stale(ttl, t0));
        List<Object> r = mutexGrant(
                "tryAcquire of '",
                Scripts.ACQUIRE,
                name,
                leaseId,
                ttl,
                metadata,
                QUEUE_SLACK,
                write ? "1" : "",
                standing == null ? "" : standing.leaseId());
        if (number(r, 0) == 3) {
            // a release granted the lease of this client's request; its feed may not have told it yet
            subscriber.granted(name);
            return AcquireResult.queuedGrant(standing.leaseId(), number(r, 1), Instant.ofEpochMilli(number(r, 2)));
        }
        AcquireResult result = RedisSharedLocks.acquired(name, r, LockMode.EXCLUSIVE, 0);
        if (result.acquired()) {
            subscriber.granted(name);
            return result;
        }
        subscriber.refused(name, number(r, 2));
        long queued = r.size() > 3 ? number(r, 3) : 0;
        if (queued == 1) {
            subscriber.requested(name, leaseId, t0, ttl);
            return AcquireResult.queued(result.holderRemaining(), leaseId);
        }
        return queued == 2 && standing != null
                ? AcquireResult.queued(result.holderRemaining(), standing.leaseId())
                : result;
    }

    /**
     * One script call ({@link Scripts#HAND_OVER}): overwrites the lock's value, when it is still a grant of
     * {@code fromLeaseId}, with {@code leaseId}'s grant and draws the next token; otherwise writes nothing.
     * A refusal leaves the queue place alone: the waiter was not refused by a holder, it attempts next.
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        RedisSharedLocks.requireId(fromLeaseId);
        RedisSharedLocks.requireId(leaseId);
        List<Object> r = mutexGrant("handOver of '", Scripts.HAND_OVER, name, leaseId, ttl, metadata, fromLeaseId);
        AcquireResult result = RedisSharedLocks.acquired(name, r, LockMode.EXCLUSIVE, 0);
        if (result.acquired()) {
            subscriber.granted(name);
        }
        return result;
    }

    /** A mutex grant's script call: ARGV lease id, ttl, metadata, this client's waiter id and place, then {@code more}. */
    private List<Object> mutexGrant(
            String operation,
            Scripts.Script script,
            String name,
            String leaseId,
            Duration ttl,
            LockMetadata metadata,
            String... more) {
        String[] args = new String[5 + more.length];
        args[0] = leaseId;
        args[1] = Long.toString(millis(ttl));
        args[2] = HeldValue.json(metadata);
        args[3] = subscriber.waiterFor(name);
        args[4] = subscriber.placeIn(name);
        System.arraycopy(more, 0, args, 5, more.length);
        return await(
                operation,
                name,
                eval(connection.current(), script, ScriptOutputType.MULTI, keys.mutexKeysOf(name), args));
    }

    /**
     * Takes this backend out of {@code name}'s wake-up queue and, when the lock is free, wakes the next
     * waiter instead (its wait ended, or a wake-up came after it). Sent without waiting for the reply:
     * a failure only leaves a stale entry, which the next release skips or wakes in vain (the others
     * still poll), and which expires with the queue.
     */
    private void leaveQueue(String name) {
        if (closed.get()) {
            return;
        }
        try {
            eval(
                            connection.current(),
                            Scripts.LEAVE,
                            ScriptOutputType.INTEGER,
                            new String[] {keys.lockKey(name), keys.queueKey(name), keys.grantsKey(name)},
                            subscriber.waiterId(),
                            keys.wakePrefix,
                            name)
                    .reply()
                    .whenComplete((ok, e) -> {
                        if (e != null) {
                            LOG.debug("fencelock: leaving the wake-up queue of '{}' failed: {}", name, e.toString());
                        }
                    });
        } catch (RuntimeException e) {
            LOG.debug("fencelock: leaving the wake-up queue of '{}' failed: {}", name, e.toString());
        }
    }

    /** A semaphore's, reader's, writer's or fair mutex's grant: one script call ({@link RedisSharedLocks}). */
    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        return shared.tryAcquire(name, leaseId, ttl, request, metadata);
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        return shared.downgrade(name, leaseId, ttl);
    }

    /**
     * One script call renews every lease, mutex and shared grants alike. On Cluster, keys of different slots cannot meet in one
     * script: there is one call per slot, all sent at once on the pipelined connection.
     */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        requests.forEach(q -> RedisSharedLocks.requireId(q.leaseId()));
        List<List<Integer>> groups =
                keys.groups(requests.size(), i -> requests.get(i).name(), Integer.MAX_VALUE, cluster);
        List<Call<List<Object>>> calls = new ArrayList<>(groups.size());
        CommandConnection.Link link = connection.current();
        for (List<Integer> group : groups) {
            String[] k = new String[group.size() * 3];
            String[] a = new String[group.size() * 3];
            for (int j = 0; j < group.size(); j++) {
                RenewRequest r = requests.get(group.get(j));
                System.arraycopy(keys.keysOf(r.name()), 0, k, 3 * j, 3);
                a[3 * j] = r.leaseId();
                a[3 * j + 1] = Long.toString(millis(r.ttl()));
                a[3 * j + 2] = Long.toString(r.tokenPeriod() == null ? 0 : Math.max(1, micros(r.tokenPeriod())));
            }
            calls.add(eval(link, Scripts.RENEW, ScriptOutputType.MULTI, k, a));
        }
        RenewResult[] results = new RenewResult[requests.size()];
        for (int g = 0; g < groups.size(); g++) {
            List<Object> r = await("renew of ", requests.size() + " lease(s)", calls.get(g));
            long now = number(r, 0);
            List<Integer> group = groups.get(g);
            for (int j = 0; j < group.size(); j++) {
                int i = group.get(j);
                long token = number(r, j + 1);
                results[i] = token > 0
                        ? RenewResult.renewed(
                                token,
                                Instant.ofEpochMilli(
                                        now + millis(requests.get(i).ttl())))
                        : RenewResult.rejected();
            }
        }
        return List.of(results);
    }

    @Override
    public boolean release(String name, String leaseId) {
        RedisSharedLocks.requireId(leaseId);
        Long freed = await("release of '", name, releaseCall(name, leaseId));
        subscriber.withdrawn(name, leaseId);
        return freed != null && freed == 1;
    }

    /** The release script's call ({@link Scripts#RELEASE}). */
    private Call<Long> releaseCall(String name, String leaseId) {
        return eval(
                connection.current(),
                Scripts.RELEASE,
                ScriptOutputType.INTEGER,
                keys.mutexKeysOf(name),
                leaseId,
                keys.channel,
                name,
                keys.wakePrefix,
                subscriber.waiterId());
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        List<LockInfo> found = inspect("inspect of '", name, List.of(name));
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    /**
     * SCANs for the lock keys of the prefix ({@code PAGE} keys a page; on Cluster Lettuce scans every
     * master in turn), then reads them with the inspect script, many names per call. Locks that expire
     * or are released in between are left out. Not one round trip: list is for operators, not for the
     * hot path.
     */
    @Override
    public List<LockInfo> list(String prefix) {
        Set<String> names = new LinkedHashSet<>(); // SCAN may return a key twice
        ScanArgs args = ScanArgs.Builder.matches(keys.lockKeyPattern(prefix)).limit(PAGE);
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            CommandConnection.Link link = connection.current();
            KeyScanCursor<String> page = await(
                    "list of '",
                    prefix,
                    new Call<>(link, link.commands().scan(cursor, args).toCompletableFuture()));
            for (String key : page.getKeys()) {
                String name = keys.nameOf(key);
                if (name != null && name.startsWith(prefix)) {
                    names.add(name);
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
        List<LockInfo> held = new ArrayList<>();
        for (LockInfo info : inspect("list of '", prefix, List.copyOf(names))) {
            if (info.held()) {
                held.add(info);
            }
        }
        held.sort(Comparator.comparing(LockInfo::name));
        return held;
    }

    /** The records of {@code names} (absent ones left out), in one script call per slot group, all sent at once. */
    private List<LockInfo> inspect(String operation, String subject, List<String> names) {
        List<List<Integer>> groups = keys.groups(names.size(), names::get, PAGE, cluster);
        List<Call<List<Object>>> calls = new ArrayList<>(groups.size());
        CommandConnection.Link link = connection.current();
        for (List<Integer> group : groups) {
            String[] k = new String[group.size() * 3];
            for (int j = 0; j < group.size(); j++) {
                System.arraycopy(keys.keysOf(names.get(group.get(j))), 0, k, 3 * j, 3);
            }
            calls.add(eval(link, Scripts.INSPECT, ScriptOutputType.MULTI, k));
        }
        List<LockInfo> infos = new ArrayList<>(names.size());
        for (int g = 0; g < groups.size(); g++) {
            List<Object> r = await(operation, subject, calls.get(g));
            Instant now = Instant.ofEpochMilli(number(r, 0));
            List<Integer> group = groups.get(g);
            for (int j = 0; j < group.size(); j++) {
                LockInfo info = RedisSharedLocks.info(names.get(group.get(j)), r, 1 + 5 * j, now);
                if (info != null) {
                    infos.add(info);
                }
            }
        }
        return infos;
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(subscriber);
    }

    @Override
    public Set<Capability> capabilities() {
        return facts.capabilities();
    }

    /** How the backend reaches Redis. */
    public Deployment deployment() {
        return deployment;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            subscriber.close();
            connections.close();
        }
    }

    @Override
    public String toString() {
        return "RedisLockBackend[" + keys.prefix + " on " + where + ", "
                + deployment.name().toLowerCase(Locale.ROOT) + ", " + facts.persistence() + "]";
    }

    // ------------------------------------------------------------------ machinery

    /** Waits for a reply on the command connection (see {@link CommandConnection#await}). */
    <T> T await(String operation, String subject, Call<T> call) {
        if (closed.get()) {
            throw new IllegalStateException("this Redis lock backend is closed");
        }
        return connection.await(operation, subject, call);
    }

    /**
     * Configures a {@link RedisLockBackend}: a URI, optional credentials, the key prefix and timeouts.
     * Every backend has its own connections; Lettuce's thread pools are shared by all backends of the JVM.
     */
    public static final class Builder {
        private final RedisSettings settings = new RedisSettings();

        private Builder() {}

        /**
         * Where Redis is: {@code redis://[[user]:password@]host[:port][/database]}, {@code rediss://...}
         * (TLS), {@code redis-socket:///path}, {@code redis-sentinel://[password@]host[:port][,host2[:port2]][/database]#masterId}
         * (Lettuce's URI syntax for all of these), or {@code redis-cluster://[password@]host:port[,host2:port2...]}
         * ({@code rediss-cluster://} with TLS): seed nodes of a Redis Cluster.
         */
        public Builder uri(String uri) {
            settings.uri(uri);
            return this;
        }

        /** The ACL user (Redis 6+), if not in the URI. */
        public Builder user(String user) {
            settings.user(user);
            return this;
        }

        /** The password, if not in the URI; never appears in messages. */
        public Builder password(String password) {
            settings.password(password);
            return this;
        }

        /**
         * The start of every key and of the release channel (default {@code fencelock:}): 1 to 64
         * characters from {@code A-Z a-z 0-9 . _ - : / @ + = #}. Backends with different prefixes never
         * see each other's locks.
         */
        public Builder keyPrefix(String keyPrefix) {
            settings.keyPrefix(keyPrefix);
            return this;
        }

        /** How long to wait for a TCP connection (default 5 s). */
        public Builder connectTimeout(Duration connectTimeout) {
            settings.connectTimeout(connectTimeout);
            return this;
        }

        /**
         * How long a command may wait for the server's answer (default 10 s), so that a dead or frozen
         * server fails a renewal instead of hanging it; the lease's deadline is enforced locally anyway.
         */
        public Builder commandTimeout(Duration commandTimeout) {
            settings.commandTimeout(commandTimeout);
            return this;
        }

        /**
         * Validates the settings, connects, and reads the server's version and persistence settings
         * (which decide {@link Capability#DURABLE_TOKENS}). Throws {@link LockBackendException} when
         * Redis cannot be reached (retryable) or refuses the credentials (not retryable).
         */
        public RedisLockBackend build() {
            KeyLayout layout = settings.keyLayout();
            RedisConnections connections = null;
            try {
                connections = RedisConnections.open(settings);
                return new RedisLockBackend(
                        settings,
                        layout,
                        connections,
                        RedisServerFacts.read(connections.commands, settings.deployment, settings.where));
            } catch (LockBackendException | IllegalStateException e) {
                closeAfterFailure(connections);
                throw e;
            } catch (RuntimeException e) {
                closeAfterFailure(connections);
                throw RedisFailures.failure("connect", e, settings.where, settings.rawUri);
            }
        }

        private static void closeAfterFailure(RedisConnections connections) {
            if (connections != null) {
                connections.close();
            }
        }
    }
}
