package io.fencelock.testservers.redis;

import io.fencelock.spi.Redaction;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.TestServer;
import io.fencelock.testservers.common.ThrowawayServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A real Redis server for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: the Redis URI in {@code FENCELOCK_REDIS_URL} ({@code redis://[user:password@]host:port},
 *       {@code rediss://...} or {@code redis-sentinel://...}), someone else's server: tests use
 *       unique key names and leave them to expire;</li>
 *   <li>{@code binaries}: a throwaway {@code redis-server} from the Debian package, in the foreground as a
 *       child of this JVM, the only source with {@link #control()} for fault tests;</li>
 *   <li>{@code testcontainers}: a {@code redis:7} container, when a Docker engine answers;</li>
 *   <li>{@code embedded}: codemonstur's embedded-redis (a Redis 6.2 binary in a jar).</li>
 * </ol>
 * System property {@code fencelock.redis.source=env|binaries|testcontainers|embedded} forces one.
 * Test classes share {@link #shared()} (no persistence); a test that needs durable tokens, or that
 * crashes its server, starts its own with {@link #start(Persistence)} or {@link #start(Source, Persistence)}.
 */
public final class RedisServer extends TestServer {
    public static final String URL_ENV = "FENCELOCK_REDIS_URL";

    private static final String CONTAINER_IMAGE = "redis:7";
    private static final int CONTAINER_PORT = 6379;
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration REPLICA_SYNC_TIMEOUT = Duration.ofSeconds(30);

    private static final OnePerJvm<RedisServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        BINARIES,
        TESTCONTAINERS,
        EMBEDDED;

        /** The name used in {@code -Dfencelock.redis.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What survives a restart of the server. */
    public enum Persistence {
        /**
         * Nothing: {@code --save '' --appendonly no} on the servers this fixture starts. An {@code env}
         * server is reported as NONE unless it runs AOF {@code always}, whatever else it does.
         */
        NONE(List.of("--appendonly", "no")),
        /** Every write is in the append-only file, fsynced, before the server answers: {@code --appendonly yes --appendfsync always}. */
        AOF_ALWAYS(List.of("--appendonly", "yes", "--appendfsync", "always"));

        private final List<String> serverArguments;

        Persistence(List<String> serverArguments) {
            this.serverArguments = serverArguments;
        }

        /** The {@code redis-server} arguments (besides {@code --save ''}) that set it. */
        public List<String> serverArguments() {
            return serverArguments;
        }

        private List<String> configLines() {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < serverArguments.size(); i += 2) {
                lines.add(serverArguments.get(i).substring(2) + " " + serverArguments.get(i + 1));
            }
            return lines;
        }
    }

    private final Source source;
    private final String uri;
    private final List<String> nodeUris;
    private final Persistence persistence;
    private final String description;
    private final ServerControl control;

    private RedisServer(
            Source source,
            String uri,
            Persistence persistence,
            String description,
            ServerControl control,
            Runnable shutdown,
            boolean isShared) {
        this(source, uri, List.of(uri), persistence, description, control, shutdown, isShared);
    }

    private RedisServer(
            Source source,
            String uri,
            List<String> nodeUris,
            Persistence persistence,
            String description,
            ServerControl control,
            Runnable shutdown,
            boolean isShared) {
        super(shutdown, isShared);
        this.source = source;
        this.uri = uri;
        this.nodeUris = List.copyOf(nodeUris);
        this.persistence = persistence;
        this.description = description;
        this.control = control;
    }

    /**
     * The server of this JVM, without persistence, found on first use and stopped by a shutdown hook.
     * When none can be found, the test fails under CI and is skipped elsewhere, now and on every later call.
     */
    public static RedisServer shared() {
        return SHARED.get(() -> locate(locator(Persistence.NONE, true)::locate));
    }

    /** A new server of its own with {@code persistence}, by the usual order (or the forced source); close it when done. */
    public static RedisServer start(Persistence persistence) {
        return locate(locator(persistence, false)::locate);
    }

    /** A new server of its own from exactly {@code source}; close it when done. */
    public static RedisServer start(Source source, Persistence persistence) {
        return locate(() -> locator(persistence, false).locateOnly(source.key()));
    }

    /**
     * A Redis Cluster of its own: {@code masters} masters without replicas, from this machine's
     * {@code redis-server} (7.0 or later), the slots spread evenly; ready when every node says
     * {@code cluster_state:ok}. {@link #uri()} is the first node, {@link #nodeUris()} all of them.
     * Without the binary the test fails under CI and is skipped elsewhere. Close it when done.
     */
    public static RedisServer startCluster(int masters, Persistence persistence) {
        return locate(() -> ServerLocator.<RedisServer>forBackend(
                        "redis-cluster", "apt-get install redis-server (7.0 or later)")
                .candidate(Source.BINARIES.key(), () -> clusterFromBinaries(masters, persistence))
                .locateOnly(Source.BINARIES.key()));
    }

    private static RedisServer clusterFromBinaries(int masters, Persistence persistence) throws Exception {
        Path binary = RedisProcess.findBinary();
        RedisClusterNodes cluster = RedisClusterNodes.start(binary, masters, persistence);
        try {
            List<String> uris =
                    cluster.ports().stream().map(p -> "redis://127.0.0.1:" + p).toList();
            String ports = cluster.ports().stream()
                    .map(String::valueOf)
                    .reduce((a, b) -> a + "," + b)
                    .orElse("");
            return new RedisServer(
                    Source.BINARIES,
                    uris.get(0),
                    uris,
                    persistence,
                    Facts.of(uris.get(0))
                            .describe(binary + ", a Cluster of " + masters + " masters on 127.0.0.1:" + ports),
                    cluster.control(),
                    cluster::destroy,
                    false);
        } catch (RuntimeException e) {
            cluster.destroy();
            throw e;
        }
    }

    /**
     * A replica of its own of {@code master} (a single {@code redis://host:port} server), from this machine's
     * {@code redis-server}, without persistence; returned once its link to the master is up, so what the
     * master executes from then on reaches it in order. Without the binary the test fails under CI and is
     * skipped elsewhere. Close it when done.
     */
    public static RedisServer startReplicaOf(RedisServer master) {
        RedisURI of = RedisURI.create(master.uri());
        if (!master.uri().toLowerCase(Locale.ROOT).startsWith("redis://")
                || of.getSentinels().size() > 0) {
            throw new IllegalArgumentException(
                    "a replica needs a single redis:// master, got " + Redaction.uri(master.uri()));
        }
        return locate(() -> ServerLocator.<RedisServer>forBackend("redis-replica", "apt-get install redis-server")
                .candidate(Source.BINARIES.key(), () -> replicaFromBinaries(of))
                .locateOnly(Source.BINARIES.key()));
    }

    private static RedisServer replicaFromBinaries(RedisURI master) throws Exception {
        Path binary = RedisProcess.findBinary();
        List<String> replicaOf = List.of("--replicaof", master.getHost(), Integer.toString(master.getPort()));
        RedisProcess process = RedisProcess.start(binary, Persistence.NONE, replicaOf);
        try {
            String uri = "redis://127.0.0.1:" + process.port();
            awaitReplicationLink(uri);
            return new RedisServer(
                    Source.BINARIES,
                    uri,
                    Persistence.NONE,
                    Facts.of(uri)
                            .describe(binary + ", 127.0.0.1:" + process.port() + ", a replica of " + master.getHost()
                                    + ":" + master.getPort()),
                    process,
                    process::destroy,
                    false);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    /** Until the replica on {@code uri} reports {@code master_link_status:up} (its first sync done), bounded. */
    private static void awaitReplicationLink(String uri) {
        RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(PROBE_TIMEOUT);
        RedisClient client = RedisClient.create(redisUri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            long deadline = System.nanoTime() + REPLICA_SYNC_TIMEOUT.toNanos();
            while (!connection.sync().info("replication").contains("master_link_status:up")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the replica on " + uri + " did not sync within "
                            + REPLICA_SYNC_TIMEOUT.toSeconds() + " s");
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
        } finally {
            LettuceClients.shutDown(client);
        }
    }

    /** The master name the Sentinel of {@link #startWithSentinel(Persistence)} monitors. */
    public static final String SENTINEL_MASTER = "fencelock";

    /**
     * A server of its own from this machine's {@code redis-server}, monitored by one Sentinel (quorum
     * 1, no replica, so no failover can happen). {@link #uri()} is the Sentinel URI
     * {@code redis-sentinel://127.0.0.1:port#fencelock}, {@link #nodeUris()} the master's {@code redis://} URI,
     * and {@link #control()} controls the master. Close it when done.
     */
    public static RedisServer startWithSentinel(Persistence persistence) {
        return locate(() -> ServerLocator.<RedisServer>forBackend("redis-sentinel", "apt-get install redis-server")
                .candidate(Source.BINARIES.key(), () -> sentinelFromBinaries(persistence))
                .locateOnly(Source.BINARIES.key()));
    }

    private static RedisServer sentinelFromBinaries(Persistence persistence) throws Exception {
        Path binary = RedisProcess.findBinary();
        RedisProcess master = RedisProcess.start(binary, persistence);
        RedisProcess sentinel = null;
        try {
            sentinel = RedisProcess.startSentinel(binary, SENTINEL_MASTER, master.port());
            RedisProcess started = sentinel;
            String masterUri = "redis://127.0.0.1:" + master.port();
            String uri = "redis-sentinel://127.0.0.1:" + sentinel.port() + "#" + SENTINEL_MASTER;
            return new RedisServer(
                    Source.BINARIES,
                    uri,
                    List.of(masterUri),
                    persistence,
                    Facts.of(masterUri)
                            .describe(binary + ", 127.0.0.1:" + master.port() + " behind Sentinel 127.0.0.1:"
                                    + sentinel.port()),
                    master,
                    () -> {
                        try {
                            started.destroy();
                        } finally {
                            master.destroy();
                        }
                    },
                    false);
        } catch (IOException | RuntimeException e) {
            if (sentinel != null) {
                sentinel.destroy();
            }
            master.destroy();
            throw e;
        }
    }

    private static RedisServer locate(Supplier<ServerLocator.Located<RedisServer>> how) {
        return handOut(how.get(), "redis");
    }

    private static ServerLocator<RedisServer> locator(Persistence persistence, boolean isShared) {
        return ServerLocator.<RedisServer>forBackend(
                        "redis", "apt-get install redis-server, set " + URL_ENV + ", or start a Docker engine")
                .candidate(Source.ENV.key(), () -> fromEnvironment(persistence, isShared))
                .candidate(Source.BINARIES.key(), () -> fromBinaries(persistence, isShared))
                .candidate(Source.TESTCONTAINERS.key(), () -> fromTestcontainers(persistence, isShared))
                .candidate(Source.EMBEDDED.key(), () -> embedded(persistence, isShared));
    }

    private static RedisServer fromEnvironment(Persistence wanted, boolean isShared) throws ServerLocator.Unavailable {
        String url = System.getenv(URL_ENV);
        if (url == null || url.isBlank()) {
            throw new ServerLocator.Unavailable(URL_ENV + " is not set");
        }
        String lower = url.toLowerCase(Locale.ROOT);
        if (!lower.startsWith("redis://")
                && !lower.startsWith("rediss://")
                && !lower.startsWith("redis-sentinel://")
                && !lower.startsWith("rediss-sentinel://")) {
            throw new IllegalArgumentException(
                    URL_ENV + " must be a redis://, rediss:// or redis-sentinel:// URI, got " + Redaction.uri(url));
        }
        Facts facts = Facts.of(url);
        if (wanted == Persistence.AOF_ALWAYS && facts.persistence() != Persistence.AOF_ALWAYS) {
            throw new ServerLocator.Unavailable(
                    URL_ENV + " names a server without appendonly yes + appendfsync always (" + facts.settings() + ")");
        }
        return new RedisServer(
                Source.ENV,
                url,
                facts.persistence(),
                facts.describe(URL_ENV + ", " + Redaction.uri(url)),
                null,
                () -> {},
                isShared);
    }

    private static RedisServer fromBinaries(Persistence persistence, boolean isShared) throws Exception {
        Path binary = RedisProcess.findBinary();
        RedisProcess process = RedisProcess.start(binary, persistence);
        try {
            String uri = "redis://127.0.0.1:" + process.port();
            return new RedisServer(
                    Source.BINARIES,
                    uri,
                    persistence,
                    Facts.of(uri).describe(binary + ", 127.0.0.1:" + process.port()),
                    process,
                    process::destroy,
                    isShared);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    private static RedisServer fromTestcontainers(Persistence persistence, boolean isShared)
            throws ServerLocator.Unavailable {
        if (!onClassPath("org.testcontainers.DockerClientFactory")) {
            throw new ServerLocator.Unavailable("Testcontainers is not on the class path");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new ServerLocator.Unavailable("no Docker engine for Testcontainers");
        }
        List<String> command = new ArrayList<>(List.of("redis-server", "--save", ""));
        command.addAll(persistence.serverArguments());
        @SuppressWarnings("resource") // stopped by the server's shutdown
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(CONTAINER_IMAGE))
                .withExposedPorts(CONTAINER_PORT)
                .withCommand(command.toArray(String[]::new));
        container.start();
        try {
            String address = container.getHost() + ":" + container.getMappedPort(CONTAINER_PORT);
            String uri = "redis://" + address;
            return new RedisServer(
                    Source.TESTCONTAINERS,
                    uri,
                    persistence,
                    Facts.of(uri).describe("Testcontainers " + CONTAINER_IMAGE + ", " + address),
                    null,
                    container::stop,
                    isShared);
        } catch (RuntimeException e) {
            container.stop();
            throw e;
        }
    }

    private static RedisServer embedded(Persistence persistence, boolean isShared) throws Exception {
        if (!onClassPath("redis.embedded.RedisServer")) {
            throw new ServerLocator.Unavailable("com.github.codemonstur:embedded-redis is not on the class path");
        }
        Path dir = Files.createTempDirectory("fencelock-embedded-redis-");
        int port = ThrowawayServers.freeLoopbackPort();
        redis.embedded.core.RedisServerBuilder builder = redis.embedded.RedisServer.newRedisServer()
                .bind("127.0.0.1")
                .port(port)
                .setting("dir " + dir)
                .setting("save \"\"");
        persistence.configLines().forEach(builder::setting);
        redis.embedded.RedisServer embedded = builder.build();
        Runnable close = () -> {
            try {
                embedded.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                ThrowawayServers.deleteRecursively(dir);
            }
        };
        try {
            embedded.start();
            String uri = "redis://127.0.0.1:" + port;
            return new RedisServer(
                    Source.EMBEDDED,
                    uri,
                    persistence,
                    Facts.of(uri).describe("embedded-redis, 127.0.0.1:" + port),
                    null,
                    close,
                    isShared);
        } catch (IOException | RuntimeException e) {
            close.run();
            throw e;
        }
    }

    /**
     * The URI to connect to, e.g. {@code redis://127.0.0.1:41234}; for an {@code env} server the URI
     * as given, with its credentials, so never print it: use {@link #description()}.
     */
    public String uri() {
        return uri;
    }

    /**
     * Every data node's {@code redis://} URI: the masters of a {@link #startCluster(int, Persistence) cluster},
     * the master behind a {@link #startWithSentinel(Persistence) Sentinel}, else just {@link #uri()}.
     */
    public List<String> nodeUris() {
        return nodeUris;
    }

    public Source source() {
        return source;
    }

    /** What survives a restart: as asked for the servers this fixture starts, as configured for an {@code env} server. */
    public Persistence persistence() {
        return persistence;
    }

    /**
     * Stop, kill, pause and restart (same directory and port), for servers this fixture runs itself
     * ({@code binaries}). For a {@link #startCluster(int, Persistence) cluster} every call acts on all
     * its nodes, and {@code start()} returns once the cluster serves all slots again; without
     * persistence the data is gone then, but each node's {@code nodes.conf} (in its directory, written
     * whatever the persistence) keeps the cluster's shape, so the same cluster forms again.
     */
    public Optional<ServerControl> control() {
        return Optional.ofNullable(control);
    }

    /**
     * The one address every request goes to, for the TCK's fault proxy: a single {@code redis://} or
     * {@code rediss://} server. Empty for a Cluster (it redirects clients to each node's own address)
     * and for Sentinel (it hands out the master's own address).
     */
    public Optional<java.net.InetSocketAddress> address() {
        String lower = uri.toLowerCase(Locale.ROOT);
        if (nodeUris.size() != 1 || !(lower.startsWith("redis://") || lower.startsWith("rediss://"))) {
            return Optional.empty();
        }
        return Endpoints.single(uri, 6379);
    }

    /** {@link #uri()} pointed at {@code address} (the fault proxy), credentials and database kept; needs {@link #address()}. */
    public String uriVia(java.net.InetSocketAddress address) {
        if (address().isEmpty()) {
            throw new UnsupportedOperationException("no single address to proxy: " + description());
        }
        return Endpoints.withAddress(uri, address);
    }

    @Override
    protected String summary() {
        return description;
    }

    /** What the server says about itself: version and persistence settings. */
    private record Facts(String version, Map<String, String> config) {

        static Facts of(String uri) {
            RedisURI redisUri = RedisURI.create(uri);
            redisUri.setTimeout(PROBE_TIMEOUT);
            RedisClient client = RedisClient.create(redisUri);
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                RedisCommands<String, String> redis = connection.sync();
                String version = "?";
                for (String line : redis.info("server").split("\r?\n")) {
                    if (line.startsWith("redis_version:")) {
                        version = line.substring("redis_version:".length()).trim();
                    }
                }
                Map<String, String> config;
                try {
                    config = redis.configGet("append*");
                } catch (RedisCommandExecutionException e) {
                    config = Map.of(); // CONFIG renamed or forbidden: persistence unknown
                }
                return new Facts(version, config);
            } finally {
                LettuceClients.shutDown(client);
            }
        }

        Persistence persistence() {
            return "yes".equals(config.get("appendonly")) && "always".equals(config.get("appendfsync"))
                    ? Persistence.AOF_ALWAYS
                    : Persistence.NONE;
        }

        String settings() {
            return config.isEmpty()
                    ? "CONFIG unavailable"
                    : "appendonly=" + config.get("appendonly") + " appendfsync=" + config.get("appendfsync");
        }

        String describe(String origin) {
            return "Redis " + version + " from " + origin + ", " + settings();
        }
    }
}
