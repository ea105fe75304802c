package io.fencelock.redis;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.ReleaseFeed;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.RedisClusterURIUtil;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The Redis primitive on Lettuce: each operation is one Lua script, atomic on the server and one
 * round trip, with expiry on Redis's own clock. A grant is {@code SET lock lease NX PXAT} and, only
 * if that succeeded, {@code HINCRBY} of the name's token record, which never expires, so tokens rise
 * across release, expiry and takeover. Releases are owner-checked and {@code PUBLISH}ed to waiters.
 * See {@link KeyLayout} for the keys and {@link Scripts} for the scripts.
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
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);
    /** Keys per SCAN page and names per INSPECT call of {@link #list(String)}. */
    private static final int PAGE = 1000;
    /** Extra wait beyond Lettuce's own command timeout, only so that a lost completion cannot hang a caller. */
    private static final long AWAIT_SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);

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
    private final Duration commandTimeout;
    private final AbstractRedisClient client;
    private final CommandConnection connection;
    private final ClientResources sharedResources;
    private final ReleaseSubscriber subscriber;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Set<Capability> capabilities = Set.of();
    private volatile String persistence = "not read";

    private RedisLockBackend(Deployment deployment, KeyLayout keys, String where, Duration commandTimeout,
                             AbstractRedisClient client, CommandConnection connection,
                             Supplier<StatefulRedisPubSubConnection<String, String>> pubSub, ClientResources sharedResources) {
        this.deployment = deployment;
        this.keys = keys;
        this.where = where;
        this.commandTimeout = commandTimeout;
        this.client = client;
        this.connection = connection;
        this.sharedResources = sharedResources;
        this.subscriber = new ReleaseSubscriber(pubSub, keys.channel, commandTimeout, where);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        List<Object> r = await("tryAcquire of '", name, run(connection.current(), Scripts.ACQUIRE, ScriptOutputType.MULTI,
                new String[] {keys.lockKey(name), keys.tokenKey(name)}, leaseId, Long.toString(millis(ttl))));
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
        List<List<Integer>> groups = groups(requests.size(), i -> requests.get(i).name(), Integer.MAX_VALUE);
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
            calls.add(run(link, Scripts.RENEW, ScriptOutputType.MULTI, k, a));
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
                        ? RenewResult.renewed(token, Instant.ofEpochMilli(now + millis(requests.get(i).ttl())))
                        : RenewResult.rejected();
            }
        }
        return List.of(results);
    }

    @Override
    public boolean release(String name, String leaseId) {
        Long freed = await("release of '", name, run(connection.current(), Scripts.RELEASE, ScriptOutputType.INTEGER,
                new String[] {keys.lockKey(name), keys.tokenKey(name)}, leaseId, keys.channel, name));
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
            KeyScanCursor<String> page = await("list of '", prefix,
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
            calls.add(run(link, Scripts.INSPECT, ScriptOutputType.MULTI, k));
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
                String lease = (String) r.get(at);
                boolean held = lease != null && !lease.isEmpty();
                long expiry = number(r, at + 1);
                infos.add(new LockInfo(names.get(group.get(j)), held, held ? lease : null, number(r, at + 2),
                        held && expiry > 0 ? Instant.ofEpochMilli(expiry) : null, now));
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
        return capabilities;
    }

    /** How the backend reaches Redis. */
    public Deployment deployment() {
        return deployment;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            subscriber.close();
            shutDown(client, connection, sharedResources);
        }
    }

    @Override
    public String toString() {
        return "RedisLockBackend[" + keys.prefix + " on " + where + ", " + deployment.name().toLowerCase(Locale.ROOT)
                + ", " + persistence + "]";
    }

    // ------------------------------------------------------------------ machinery

    /** EVALSHA, and EVAL when the server does not have the script (first use, a restart, SCRIPT FLUSH). */
    private <T> Call<T> run(CommandConnection.Link link, Scripts.Script script, ScriptOutputType type, String[] k,
                            String... args) {
        RedisClusterAsyncCommands<String, String> redis = link.commands();
        CompletableFuture<T> bySha = redis.<T>evalsha(script.sha1(), type, k, args).toCompletableFuture();
        return new Call<>(link, bySha.exceptionallyCompose(e -> unwrap(e) instanceof RedisNoScriptException
                ? redis.<T>eval(script.source(), type, k, args).toCompletableFuture()
                : CompletableFuture.failedFuture(e)));
    }

    /** A command's reply to come, and the connection it went out on (replaced if the reply never comes). */
    private record Call<T>(CommandConnection.Link link, CompletableFuture<T> reply) {
    }

    /**
     * The indexes 0..n-1 in groups that one script call may take: one group (split every {@code max})
     * on a single server, one group per slot on Cluster.
     */
    private List<List<Integer>> groups(int n, java.util.function.IntFunction<String> nameAt, int max) {
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

    /**
     * Waits for a reply. {@code operation + subject} names the call in a failure ("tryAcquire of '" +
     * name), built only then: the hot path allocates no message. An interrupt does not abandon a
     * command already sent (its outcome would be unknown): the wait goes on to the reply or the
     * timeout, and the interrupt is set again afterwards.
     */
    private <T> T await(String operation, String subject, Call<T> call) {
        if (closed.get()) {
            throw new IllegalStateException("this Redis lock backend is closed");
        }
        CompletableFuture<T> future = call.reply();
        boolean interrupted = false;
        long end = System.nanoTime() + commandTimeout.toNanos() + AWAIT_SLACK_NANOS;
        try {
            while (true) {
                try {
                    return future.get(end - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (ExecutionException e) {
            if (unwrap(e.getCause()) instanceof RedisCommandTimeoutException) {
                connection.replaceAfterTimeout(call.link());
            }
            throw failure(what(operation, subject), e.getCause(), where);
        } catch (TimeoutException e) {
            future.cancel(false);
            connection.replaceAfterTimeout(call.link());
            throw new LockBackendException("Redis " + what(operation, subject) + " got no answer from " + where + " within "
                    + commandTimeout, e, true);
        } catch (CancellationException e) {
            throw new LockBackendException("Redis " + what(operation, subject) + " on " + where + " was cancelled", e, true);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String what(String operation, String subject) {
        return operation + subject + (operation.endsWith("'") ? "'" : "");
    }

    static LockBackendException failure(String operation, Throwable e, String where) {
        return failure(operation, e, where, null);
    }

    /** With the raw {@code uri} the client was made with, whose echoes in the driver's message are redacted. */
    static LockBackendException failure(String operation, Throwable e, String where, String uri) {
        Throwable cause = unwrap(e);
        return new LockBackendException("Redis " + operation + " failed on " + where + ": "
                + Redaction.message(describe(cause), uri), cause, isRetryable(cause));
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            if (c.getMessage() != null && !sb.toString().contains(c.getMessage())) {
                sb.append(" (").append(c.getMessage()).append(')');
            }
        }
        return sb.toString();
    }

    /** Whether the same call may succeed later: the server or the network had a moment, not a bug or bad credentials. */
    static boolean isRetryable(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RedisCommandExecutionException && isAuthError(c.getMessage())) {
                return false;
            }
        }
        if (e instanceof RedisCommandExecutionException) {
            String m = String.valueOf(e.getMessage());
            // BUSY (a script runs), LOADING (the data set), TRYAGAIN/CLUSTERDOWN (resharding, failover),
            // MASTERDOWN/READONLY (Sentinel or Cluster failover in progress), NOREPLICAS, OOM (may pass)
            return m.startsWith("BUSY") || m.startsWith("LOADING") || m.startsWith("TRYAGAIN") || m.startsWith("CLUSTERDOWN")
                    || m.startsWith("MASTERDOWN") || m.startsWith("READONLY") || m.startsWith("NOREPLICAS") || m.startsWith("OOM");
        }
        return e instanceof RedisConnectionException || e instanceof RedisCommandTimeoutException
                || e instanceof RedisCommandInterruptedException || e instanceof IOException
                || e instanceof CancellationException
                || e instanceof RedisException; // "Connection disconnected", "Currently not connected. Commands are rejected."
    }

    private static boolean isAuthError(String message) {
        return message != null && (message.startsWith("NOAUTH") || message.startsWith("WRONGPASS")
                || message.startsWith("NOPERM") || message.contains("invalid password") || message.contains("invalid username-password"));
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
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

    private static void shutDown(AbstractRedisClient client, AutoCloseable connection,
                                 ClientResources sharedResources) {
        try {
            if (connection != null) {
                connection.close();
            }
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2)); // no quiet period: nothing is left to send
        } catch (Exception e) {
            log.debug("fencelock: closing the Redis client failed: {}", e.toString());
        } finally {
            SharedResources.release(sharedResources);
        }
    }

    /**
     * Reads what the capabilities depend on, in one pipelined round trip: the server's version
     * ({@code PXAT} needs 6.2) and, on a single server, its persistence settings and eviction policy.
     */
    private void checkServer() {
        CommandConnection.Link link = connection.current();
        Call<String> info = new Call<>(link, link.commands().info("server").toCompletableFuture());
        Call<Map<String, String>> append = new Call<>(link, configGet(link, "append*"));
        Call<Map<String, String>> memory = new Call<>(link, configGet(link, "maxmemory*"));
        String version = versionOf(await("start-up check", "", info));
        int[] parsed = parseVersion(version);
        if (parsed != null && Arrays.compare(parsed, Scripts.MIN_VERSION) < 0) {
            throw new IllegalStateException("Redis " + version + " on " + where + " is too old: fencelock needs Redis "
                    + Scripts.MIN_VERSION[0] + "." + Scripts.MIN_VERSION[1] + " or later (SET ... PXAT)");
        }
        Map<String, String> aof = await("start-up check", "", append);
        Map<String, String> eviction = await("start-up check", "", memory);
        EnumSet<Capability> declared = EnumSet.of(Capability.FENCING, Capability.SERVER_TIME, Capability.WAKE_ON_RELEASE,
                Capability.BATCH_RENEW, Capability.TOKEN_PERIOD);
        if (deployment == Deployment.STANDALONE) {
            declared.add(Capability.LINEARIZABLE); // one server executes one script at a time
            if (aof == null) {
                persistence = "persistence unknown (CONFIG GET refused), so tokens are not durable";
            } else {
                persistence = "appendonly=" + aof.get("appendonly") + " appendfsync=" + aof.get("appendfsync");
                if ("yes".equals(aof.get("appendonly")) && "always".equals(aof.get("appendfsync"))) {
                    declared.add(Capability.DURABLE_TOKENS); // every grant is in the fsynced AOF before the reply
                }
            }
        } else {
            persistence = "replicated: a failover can lose locks and tokens";
        }
        if (eviction != null && !"0".equals(eviction.getOrDefault("maxmemory", "0"))
                && !"noeviction".equals(eviction.get("maxmemory-policy"))) {
            log.warn("fencelock: Redis at {} evicts keys under memory pressure (maxmemory-policy {}): an evicted lock is "
                    + "lost early and an evicted token record restarts its tokens. Use maxmemory-policy noeviction for locks.",
                    where, eviction.get("maxmemory-policy"));
        }
        capabilities = Collections.unmodifiableSet(declared);
        log.debug("fencelock: Redis {} at {} ({}, {}): capabilities {}", version, where, deployment, persistence, declared);
    }

    /** CONFIG GET, or null when the server refuses it (renamed, ACL, managed services). */
    private CompletableFuture<Map<String, String>> configGet(CommandConnection.Link link, String pattern) {
        if (deployment != Deployment.STANDALONE && !pattern.startsWith("maxmemory")) {
            return CompletableFuture.completedFuture(null);
        }
        return link.commands().configGet(pattern).toCompletableFuture()
                .exceptionally(e -> {
                    if (unwrap(e) instanceof RedisCommandExecutionException refused) {
                        log.info("fencelock: CONFIG GET {} refused by {} ({}); assuming the least", pattern, where,
                                Redaction.message(refused.getMessage()));
                        return null;
                    }
                    throw new CompletionException(unwrap(e));
                });
    }

    private static String versionOf(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "(unknown version)";
    }

    private static int[] parseVersion(String version) {
        String[] parts = version.split("\\.");
        try {
            return new int[] {Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : 0};
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Configures a {@link RedisLockBackend}: a URI, optional credentials, the key prefix and timeouts.
     * Every backend has its own connections; Lettuce's thread pools are shared by all backends of the JVM.
     */
    public static final class Builder {
        private static final String CLUSTER = "redis-cluster:";
        private static final String CLUSTER_SECURE = "rediss-cluster:";
        private Deployment deployment;
        private List<RedisURI> uris;
        private String where;
        private String rawUri; // for redacting the driver's echoes of it
        private String user;
        private char[] password;
        private String keyPrefix = KeyLayout.DEFAULT_PREFIX;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration commandTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /**
         * Where Redis is: {@code redis://[[user]:password@]host[:port][/database]}, {@code rediss://...}
         * (TLS), {@code redis-socket:///path}, {@code redis-sentinel://[password@]host[:port][,host2[:port2]][/database]#masterId}
         * (Lettuce's URI syntax for all of these), or {@code redis-cluster://[password@]host:port[,host2:port2...]}
         * ({@code rediss-cluster://} with TLS): seed nodes of a Redis Cluster.
         */
        public Builder uri(String uri) {
            Objects.requireNonNull(uri, "uri");
            String lower = uri.toLowerCase(Locale.ROOT);
            String redacted = ConnectionString.parse(uri).requireValidPorts().toString();
            try {
                if (lower.startsWith(CLUSTER) || lower.startsWith(CLUSTER_SECURE)) {
                    boolean tls = lower.startsWith(CLUSTER_SECURE);
                    String plain = (tls ? "rediss:" : "redis:") + uri.substring(tls ? CLUSTER_SECURE.length() : CLUSTER.length());
                    this.uris = RedisClusterURIUtil.toRedisURIs(URI.create(plain));
                    this.deployment = Deployment.CLUSTER;
                } else {
                    if (!RedisLockBackendProvider.PREFIXES.stream().anyMatch(lower::startsWith)) {
                        throw new IllegalArgumentException("unknown scheme");
                    }
                    RedisURI parsed = RedisURI.create(uri);
                    this.uris = List.of(parsed);
                    this.deployment = parsed.getSentinels().isEmpty() ? Deployment.STANDALONE : Deployment.SENTINEL;
                }
            } catch (RuntimeException e) {
                // no cause: a parser's message may quote the URI, password and all
                throw new IllegalArgumentException("not a Redis URI (" + String.join(", ", RedisLockBackendProvider.PREFIXES)
                        + "): " + redacted);
            }
            if (uris.isEmpty()) {
                throw new IllegalArgumentException("no Redis Cluster node in " + redacted);
            }
            this.where = redacted;
            this.rawUri = uri;
            return this;
        }

        /** The ACL user (Redis 6+), if not in the URI. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        /** The password, if not in the URI; never appears in messages. */
        public Builder password(String password) {
            this.password = password == null ? null : password.toCharArray();
            return this;
        }

        /**
         * The start of every key and of the release channel (default {@code fencelock:}): 1 to 64
         * characters from {@code A-Z a-z 0-9 . _ - : / @ + = #}. Backends with different prefixes never
         * see each other's locks.
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = KeyLayout.requireValidPrefix(keyPrefix);
            return this;
        }

        /** How long to wait for a TCP connection (default 5 s). */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = requirePositive("connectTimeout", connectTimeout);
            return this;
        }

        /**
         * How long a command may wait for the server's answer (default 10 s), so that a dead or frozen
         * server fails a renewal instead of hanging it; the lease's deadline is enforced locally anyway.
         */
        public Builder commandTimeout(Duration commandTimeout) {
            this.commandTimeout = requirePositive("commandTimeout", commandTimeout);
            return this;
        }

        /**
         * Validates the settings, connects, and reads the server's version and persistence settings
         * (which decide {@link Capability#DURABLE_TOKENS}). Throws {@link LockBackendException} when
         * Redis cannot be reached (retryable) or refuses the credentials (not retryable).
         */
        public RedisLockBackend build() {
            if (uris == null) {
                throw new IllegalArgumentException("set uri(...) first");
            }
            KeyLayout layout = KeyLayout.of(keyPrefix, deployment == Deployment.CLUSTER ? 0 : uris.get(0).getDatabase());
            List<RedisURI> targets = uris; // parsed by uri(), ours to configure (RedisURI.builder(u) drops sentinels)
            for (RedisURI u : targets) {
                u.setTimeout(commandTimeout);
                if (user != null || password != null) {
                    RedisCredentials inUri = u.getCredentialsProvider()
                            instanceof RedisCredentialsProvider.ImmediateRedisCredentialsProvider immediate
                            ? immediate.resolveCredentialsNow() : null;
                    String name = user != null ? user : inUri == null ? null : inUri.getUsername();
                    char[] secret = password != null ? password.clone() : inUri == null ? null : inUri.getPassword();
                    u.setCredentialsProvider(new StaticCredentialsProvider(name, secret));
                }
            }
            ClientResources shared = SharedResources.acquire();
            AbstractRedisClient client = null;
            StatefulConnection<String, String> connection = null;
            try {
                // REJECT_COMMANDS makes every call at most once: a command in flight when the connection
                // drops fails (the engine treats it as indeterminate) instead of being replayed after
                // the reconnect, and a call while disconnected fails at once instead of queueing
                SocketOptions socket = SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).build();
                TimeoutOptions timeouts = TimeoutOptions.enabled(commandTimeout);
                RedisLockBackend backend;
                if (deployment == Deployment.CLUSTER) {
                    RedisClusterClient cluster = RedisClusterClient.create(shared, targets);
                    client = cluster;
                    cluster.setOptions(ClusterClientOptions.builder()
                            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .socketOptions(socket).timeoutOptions(timeouts)
                            .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                    .enableAllAdaptiveRefreshTriggers().enablePeriodicRefresh(Duration.ofSeconds(30)).build())
                            .build());
                    StatefulRedisClusterConnection<String, String> c = connect(() -> cluster.connect(StringCodec.UTF8));
                    connection = c;
                    CommandConnection commands = new CommandConnection(c, () -> cluster.connectAsync(StringCodec.UTF8),
                            fresh -> ((StatefulRedisClusterConnection<String, String>) fresh).async(), where, commandTimeout.multipliedBy(2));
                    backend = new RedisLockBackend(deployment, layout, where, commandTimeout, cluster, commands,
                            () -> cluster.connectPubSub(StringCodec.UTF8), shared);
                } else {
                    RedisClient single = RedisClient.create(shared);
                    client = single;
                    single.setOptions(ClientOptions.builder()
                            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .socketOptions(socket).timeoutOptions(timeouts).build());
                    RedisURI target = targets.get(0);
                    StatefulRedisConnection<String, String> c = connect(() -> single.connect(StringCodec.UTF8, target));
                    connection = c;
                    CommandConnection commands = new CommandConnection(c, () -> single.connectAsync(StringCodec.UTF8, target),
                            fresh -> ((StatefulRedisConnection<String, String>) fresh).async(), where, commandTimeout.multipliedBy(2));
                    backend = new RedisLockBackend(deployment, layout, where, commandTimeout, single, commands,
                            () -> single.connectPubSub(StringCodec.UTF8, target), shared);
                }
                backend.checkServer();
                return backend;
            } catch (LockBackendException | IllegalStateException e) {
                shutDownAfterFailure(client, connection, shared);
                throw e;
            } catch (RuntimeException e) {
                shutDownAfterFailure(client, connection, shared);
                throw failure("connect", e, where, rawUri);
            }
        }

        /**
         * Connects, once more if Lettuce lost the reason of the first failure: when the server rejects
         * the handshake (bad credentials) Lettuce sometimes reports "RedisHandshakeHandler not
         * registered" instead, and only the reason tells a retryable failure from a final one.
         */
        private static <C> C connect(Supplier<C> connect) {
            try {
                return connect.get();
            } catch (RedisConnectionException e) {
                if (e.getCause() instanceof IllegalStateException) {
                    return connect.get();
                }
                throw e;
            }
        }

        private static void shutDownAfterFailure(AbstractRedisClient client, StatefulConnection<String, String> connection,
                                                 ClientResources shared) {
            if (client != null) {
                shutDown(client, connection, shared);
            } else {
                SharedResources.release(shared);
            }
        }

        private static Duration requirePositive(String what, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }
    }
}
