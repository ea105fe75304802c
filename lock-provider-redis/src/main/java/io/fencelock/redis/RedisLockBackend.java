package io.fencelock.redis;

import static io.fencelock.redis.CommandConnection.eval;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.redis.CommandConnection.Call;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * The Redis primitive on Lettuce: each operation is one Lua script, atomic on the server and one
 * round trip, with expiry on Redis's own clock. A grant is {@code SET lock value NX PXAT}, the value
 * holding the lease id, the grant's time and the metadata ({@link HeldValue}), and, only
 * if that succeeded, {@code HINCRBY} of the name's token record, which never expires, so tokens rise
 * across release, expiry and takeover. Releases are owner-checked and {@code PUBLISH}ed to waiters.
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
    private final KeyLayout keys;
    private final String where;
    private final RedisConnections connections;
    private final CommandConnection connection;
    private final RedisServerFacts facts;
    private final ReleaseSubscriber subscriber;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisLockBackend(
            RedisSettings settings, KeyLayout keys, RedisConnections connections, RedisServerFacts facts) {
        this.deployment = settings.deployment;
        this.keys = keys;
        this.where = settings.where;
        this.connections = connections;
        this.connection = connections.commands;
        this.facts = facts;
        this.subscriber = new ReleaseSubscriber(connections.pubSub, keys.channel, settings.commandTimeout, where);
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
        HeldValue.requireLeaseId(leaseId);
        List<Object> r = await(
                "tryAcquire of '",
                name,
                eval(
                        connection.current(),
                        Scripts.ACQUIRE,
                        ScriptOutputType.MULTI,
                        new String[] {keys.lockKey(name), keys.tokenKey(name)},
                        leaseId,
                        Long.toString(millis(ttl)),
                        HeldValue.json(metadata)));
        if (number(r, 0) == 1) {
            return AcquireResult.granted(number(r, 1), Instant.ofEpochMilli(number(r, 2)));
        }
        long holderRemaining = number(r, 1);
        return AcquireResult.held(holderRemaining >= 0 ? Duration.ofMillis(holderRemaining) : null);
    }

    /**
     * One script call renews every lease. On Cluster, keys of different slots cannot meet in one
     * script: there is one call per slot, all sent at once on the pipelined connection.
     */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        requests.forEach(q -> HeldValue.requireLeaseId(q.leaseId()));
        List<List<Integer>> groups =
                groups(requests.size(), i -> requests.get(i).name(), Integer.MAX_VALUE);
        List<Call<List<Object>>> calls = new ArrayList<>(groups.size());
        CommandConnection.Link link = connection.current();
        for (List<Integer> group : groups) {
            String[] k = new String[group.size() * 2];
            String[] a = new String[group.size() * 3];
            for (int j = 0; j < group.size(); j++) {
                RenewRequest r = requests.get(group.get(j));
                k[2 * j] = keys.lockKey(r.name());
                k[2 * j + 1] = keys.tokenKey(r.name());
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
        HeldValue.requireLeaseId(leaseId);
        Long freed = await(
                "release of '",
                name,
                eval(
                        connection.current(),
                        Scripts.RELEASE,
                        ScriptOutputType.INTEGER,
                        new String[] {keys.lockKey(name), keys.tokenKey(name)},
                        leaseId,
                        keys.channel,
                        name));
        return freed != null && freed == 1;
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
        List<List<Integer>> groups = groups(names.size(), names::get, PAGE);
        List<Call<List<Object>>> calls = new ArrayList<>(groups.size());
        CommandConnection.Link link = connection.current();
        for (List<Integer> group : groups) {
            String[] k = new String[group.size() * 2];
            for (int j = 0; j < group.size(); j++) {
                k[2 * j] = keys.lockKey(names.get(group.get(j)));
                k[2 * j + 1] = keys.tokenKey(names.get(group.get(j)));
            }
            calls.add(eval(link, Scripts.INSPECT, ScriptOutputType.MULTI, k));
        }
        List<LockInfo> infos = new ArrayList<>(names.size());
        for (int g = 0; g < groups.size(); g++) {
            List<Object> r = await(operation, subject, calls.get(g));
            Instant now = Instant.ofEpochMilli(number(r, 0));
            List<Integer> group = groups.get(g);
            for (int j = 0; j < group.size(); j++) {
                int at = 1 + 4 * j;
                if (number(r, at + 3) == 0) {
                    continue; // no lock and no token record: the backend knows nothing of this name
                }
                String value = (String) r.get(at);
                HeldValue holder = value == null || value.isEmpty() ? null : HeldValue.decode(value);
                long expiry = number(r, at + 1);
                infos.add(new LockInfo(
                        names.get(group.get(j)),
                        holder != null,
                        holder != null ? holder.leaseId() : null,
                        number(r, at + 2),
                        holder != null && expiry > 0 ? Instant.ofEpochMilli(expiry) : null,
                        now,
                        holder != null ? holder.metadata() : LockMetadata.NONE,
                        holder != null ? holder.heldSince() : null));
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
    private <T> T await(String operation, String subject, Call<T> call) {
        if (closed.get()) {
            throw new IllegalStateException("this Redis lock backend is closed");
        }
        return connection.await(operation, subject, call);
    }

    /**
     * The indexes 0..n-1 in groups that one script call may take: one group (split every {@code max})
     * on a single server, one group per slot on Cluster.
     */
    private List<List<Integer>> groups(int n, IntFunction<String> nameAt, int max) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        List<List<Integer>> groups = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int slot = deployment == Deployment.CLUSTER ? keys.slot(nameAt.apply(i)) : 0;
            List<Integer> group = bySlot.computeIfAbsent(slot, s -> new ArrayList<>());
            group.add(i);
            if (group.size() == max) {
                groups.add(group);
                bySlot.remove(slot);
            }
        }
        groups.addAll(bySlot.values());
        return groups;
    }

    private static long number(List<Object> reply, int index) {
        Object value = reply.get(index);
        if (value instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected script reply " + reply + " at " + index);
    }

    /** Milliseconds, rounded up: Redis expiries have millisecond resolution, and a lease may outlive its TTL on the server, never the reverse. */
    private static long millis(Duration d) {
        long ms = d.toMillis();
        return Math.max(1, d.minusMillis(ms).isZero() ? ms : ms + 1);
    }

    private static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
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
