package io.fencelock.testservers.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.fencelock.spi.Redaction;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.TestServer;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.Document;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A MongoDB server for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: the connection string in {@code FENCELOCK_MONGO_URI} ({@code mongodb://...} or
 *       {@code mongodb+srv://...}), someone else's server: tests use databases of their own
 *       ({@link #uniqueDatabase(String)}) and leave them behind;</li>
 *   <li>{@code testcontainers}: a {@code mongo:7} container started as a single-node replica set
 *       (Testcontainers' {@code MongoDBContainer}), when a Docker engine answers;</li>
 *   <li>{@code embedded}: the in-JVM mongo-java-server with its in-memory backend on a free loopback
 *       port, whose reads are made to see whole documents ({@link WholeDocumentReadsBackend}). It is
 *       not a real {@code mongod} (no replica set, no change streams, no {@code hello}, no update
 *       pipelines, TTL indexes ignored) and keeps nothing across a restart.</li>
 * </ol>
 * No real {@code mongod} can be installed on the machines this kit is built on, so there is no
 * {@code binaries} source. System property {@code fencelock.mongo.source=env|testcontainers|embedded}
 * forces one.
 *
 * <p>{@link #control()} is present only for an embedded server of one's own ({@link #start(Source)}
 * or {@link #start()} landing on {@code embedded}): stop and kill shut the in-JVM server down, start
 * brings up a new, <em>empty</em> one on the same port. That breaks {@link ServerControl#start()}'s
 * promise of the same data, which no source here can keep (the memory backend has no disk; the other
 * sources are not ours to stop), so a fault property that needs data to survive must not count on it.
 * {@link #restartLosingData()} does stop + start in one call.
 */
public final class MongoServer extends TestServer {
    public static final String URI_ENV = "FENCELOCK_MONGO_URI";

    private static final String CONTAINER_IMAGE = "mongo:7";
    private static final int PROBE_TIMEOUT_MS = 10_000;

    private static final OnePerJvm<MongoServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        TESTCONTAINERS,
        EMBEDDED;

        /** The name used in {@code -Dfencelock.mongo.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Source source;
    private final String uri;
    private final Facts facts;
    private final String origin;
    private final Embedded embedded; // only for Source.EMBEDDED

    private MongoServer(
            Source source,
            String uri,
            Facts facts,
            String origin,
            Runnable shutdown,
            boolean isShared,
            Embedded embedded) {
        super(shutdown, isShared);
        this.source = source;
        this.uri = uri;
        this.facts = facts;
        this.origin = origin;
        this.embedded = embedded;
    }

    /** The server of this JVM, found on first use and stopped by a shutdown hook; fails under CI and skips elsewhere when none. */
    public static MongoServer shared() {
        return SHARED.get(() -> locate(locator(true)::locate));
    }

    /** A server of its own, by the usual order (or the forced source); close it when done. */
    public static MongoServer start() {
        return locate(locator(false)::locate);
    }

    /** A server of its own from exactly {@code source}; close it when done. */
    public static MongoServer start(Source source) {
        return locate(() -> locator(false).locateOnly(source.key()));
    }

    private static MongoServer locate(Supplier<ServerLocator.Located<MongoServer>> how) {
        return handOut(how.get(), "mongo");
    }

    private static ServerLocator<MongoServer> locator(boolean isShared) {
        return ServerLocator.<MongoServer>forBackend(
                        "mongo",
                        "set " + URI_ENV + " to a MongoDB connection string, start a"
                                + " Docker engine, or keep de.bwaldvogel:mongo-java-server on the test class path")
                .candidate(Source.ENV.key(), () -> fromEnvironment(isShared))
                .candidate(Source.TESTCONTAINERS.key(), () -> fromTestcontainers(isShared))
                .candidate(Source.EMBEDDED.key(), () -> embedded(isShared));
    }

    private static MongoServer fromEnvironment(boolean isShared) throws ServerLocator.Unavailable {
        String uri = System.getenv(URI_ENV);
        if (uri == null || uri.isBlank()) {
            throw new ServerLocator.Unavailable(URI_ENV + " is not set");
        }
        String lower = uri.toLowerCase(Locale.ROOT);
        if (!lower.startsWith("mongodb://") && !lower.startsWith("mongodb+srv://")) {
            throw new IllegalArgumentException(
                    URI_ENV + " must be a mongodb:// or mongodb+srv:// URI, got " + Redaction.uri(uri));
        }
        return new MongoServer(
                Source.ENV, uri, Facts.of(uri), URI_ENV + ", " + Redaction.uri(uri), () -> {}, isShared, null);
    }

    private static MongoServer fromTestcontainers(boolean isShared) throws ServerLocator.Unavailable {
        if (!onClassPath("org.testcontainers.containers.MongoDBContainer")) {
            throw new ServerLocator.Unavailable("Testcontainers' mongodb module is not on the class path");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new ServerLocator.Unavailable("no Docker engine for Testcontainers");
        }
        @SuppressWarnings("resource") // stopped by the server's shutdown
        MongoDBContainer container =
                new MongoDBContainer(DockerImageName.parse(CONTAINER_IMAGE)); // a one-node replica set
        container.start();
        try {
            String uri = container.getReplicaSetUrl("admin");
            return new MongoServer(
                    Source.TESTCONTAINERS,
                    uri,
                    Facts.of(uri),
                    "Testcontainers " + CONTAINER_IMAGE + ", " + container.getHost() + ":"
                            + container.getFirstMappedPort(),
                    container::stop,
                    isShared,
                    null);
        } catch (RuntimeException e) {
            container.stop();
            throw e;
        }
    }

    private static MongoServer embedded(boolean isShared) throws ServerLocator.Unavailable {
        if (!onClassPath("de.bwaldvogel.mongo.MongoServer")
                || !onClassPath("de.bwaldvogel.mongo.backend.memory.MemoryBackend")) {
            throw new ServerLocator.Unavailable(
                    "de.bwaldvogel:mongo-java-server (with its memory backend) is not on the class path");
        }
        Embedded server = new Embedded();
        try {
            String uri = "mongodb://127.0.0.1:" + server.port;
            return new MongoServer(
                    Source.EMBEDDED,
                    uri,
                    Facts.of(uri),
                    "in-JVM mongo-java-server (memory backend), 127.0.0.1:" + server.port,
                    server::stop,
                    isShared,
                    server);
        } catch (RuntimeException e) {
            server.stop();
            throw e;
        }
    }

    /**
     * The in-JVM server: one memory backend at a time, always on the same loopback port. As a
     * {@link ServerControl}, stop and kill are the same (there is no process to crash, and nothing on
     * disk either way) and lose every document; it cannot be paused.
     */
    private static final class Embedded implements ServerControl {
        private final int port;
        private de.bwaldvogel.mongo.MongoServer server; // guarded by lock

        private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();

        Embedded() {
            de.bwaldvogel.mongo.MongoServer first =
                    new de.bwaldvogel.mongo.MongoServer(new WholeDocumentReadsBackend());
            first.bind("127.0.0.1", 0);
            this.port = first.getLocalAddress().getPort();
            this.server = first;
        }

        /** Shuts the server down, closing every client connection; all data is gone. */
        @Override
        public void stop() {
            lock.lock();
            try {
                if (server != null) {
                    server.shutdownNow();
                    server = null;
                }
            } finally {
                lock.unlock();
            }
        }

        /** The same as {@link #stop()}: an in-JVM server has no process of its own to SIGKILL, and no disk to lose writes from. */
        @Override
        public void kill() {
            stop();
        }

        /** A new, empty server on the same port (nothing survives; see the class comment). No-op when running. */
        @Override
        public void start() {
            lock.lock();
            try {
                if (server != null) {
                    return;
                }
                de.bwaldvogel.mongo.MongoServer next =
                        new de.bwaldvogel.mongo.MongoServer(new WholeDocumentReadsBackend());
                next.bind("127.0.0.1", port);
                server = next;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public boolean isRunning() {
            lock.lock();
            try {
                return server != null;
            } finally {
                lock.unlock();
            }
        }

        /** Unsupported: SIGSTOP would freeze this JVM, tests and all, not just the server. */
        @Override
        public void pause() {
            throw new UnsupportedOperationException("the in-JVM mongo-java-server cannot be paused: it runs inside the"
                    + " test's own JVM, which SIGSTOP would freeze as a whole (a fault proxy that stops forwarding"
                    + " freezes it from the clients' point of view)");
        }

        /** Unsupported, like {@link #pause()}. */
        @Override
        public void resume() {
            throw new UnsupportedOperationException(
                    "the in-JVM mongo-java-server cannot be paused, so not resumed either");
        }

        void restartEmpty() {
            lock.lock();
            try {
                stop();
                start();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public String toString() {
            return "in-JVM mongo-java-server on 127.0.0.1:" + port;
        }
    }

    /** The connection string; for an {@code env} server as given, with its credentials, so never print it: use {@link #description()}. */
    public String uri() {
        return uri;
    }

    public Source source() {
        return source;
    }

    /** Whether the server is a real {@code mongod} (or {@code mongos}), not the in-JVM stand-in. */
    public boolean isRealMongoDb() {
        return !facts.inJvm;
    }

    /** Whether the server is a replica-set member (change streams, majority reads are real there). */
    public boolean isReplicaSet() {
        return facts.setName != null;
    }

    /** Whether data survives a restart of this server as the server itself reports it (always false for the in-JVM server). */
    public boolean isPersistent() {
        return !facts.inJvm && Boolean.TRUE.equals(facts.persistent);
    }

    /** A database name of its own for one test class, e.g. {@code fl_contract_1a2b3c4d}. */
    public String uniqueDatabase(String hint) {
        String clean = hint.replaceAll("[^A-Za-z0-9_]", "_");
        return "fl_" + clean.substring(0, Math.min(clean.length(), 40)) + "_"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * For an embedded server of one's own: stop/kill shut it down, start brings up a new, empty one on
     * the same port (all data lost: the memory backend has no disk), pause/resume throw
     * {@link UnsupportedOperationException}. Empty for the shared server (other test classes use it)
     * and for {@code env} and {@code testcontainers} servers.
     */
    public java.util.Optional<ServerControl> control() {
        return embedded == null || isShared() ? java.util.Optional.empty() : java.util.Optional.of(embedded);
    }

    /**
     * The server's one address, for the TCK's fault proxy: the embedded server's port, or the single
     * host of a {@code mongodb://} URI; empty for {@code mongodb+srv://} and several hosts (a proxy in
     * front of one would not see every request).
     */
    public java.util.Optional<java.net.InetSocketAddress> address() {
        if (uri.regionMatches(true, 0, "mongodb+srv:", 0, 12)) {
            return java.util.Optional.empty();
        }
        return Endpoints.single(uri, 27017);
    }

    /**
     * {@link #uri()} pointed at {@code address} (the fault proxy). For a replica-set member with
     * {@code directConnection=true}, or the driver would go to the members' own addresses it learns.
     */
    public String uriVia(java.net.InetSocketAddress address) {
        if (address().isEmpty()) {
            throw new UnsupportedOperationException("no single address to proxy: " + description());
        }
        String via = Endpoints.withAddress(uri, address);
        if (!isReplicaSet()) {
            return via;
        }
        int query = via.indexOf('?');
        String path = query < 0 ? via : via.substring(0, query);
        String params = query < 0 ? "" : via.substring(query + 1);
        // a path is needed before the options: mongodb://h:p/?directConnection=true
        String base = path.indexOf('/', path.indexOf("//") + 2) < 0 ? path + "/" : path;
        return base + "?directConnection=true" + (params.isEmpty() ? "" : "&" + params);
    }

    /**
     * Shuts the in-JVM server down and starts a new, empty one on the same port: everything stored is
     * gone (mongo-java-server's memory backend has no disk). Only for {@link Source#EMBEDDED} servers of
     * one's own ({@link #start(Source)}); the shared server is refused.
     */
    public void restartLosingData() {
        if (embedded == null || isShared()) {
            throw new UnsupportedOperationException(
                    "only an embedded server of one's own can be restarted, not " + description());
        }
        embedded.restartEmpty();
    }

    @Override
    protected String summary() {
        return facts.describe() + " from " + origin;
    }

    /** What the server says about itself. */
    private record Facts(String version, String setName, boolean inJvm, Boolean persistent) {

        static Facts of(String uri) {
            MongoClientSettings settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                    .applyToSocketSettings(s -> s.connectTimeout(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                            .readTimeout(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                    .build();
            try (MongoClient client = MongoClients.create(settings)) {
                MongoDatabase admin = client.getDatabase("admin");
                Document hello;
                try {
                    hello = admin.runCommand(new Document("hello", 1));
                } catch (MongoServerException e) {
                    hello = admin.runCommand(new Document("isMaster", 1));
                }
                String version = String.valueOf(
                        admin.runCommand(new Document("buildInfo", 1)).get("version"));
                Document status = null;
                try {
                    status = admin.runCommand(new Document("serverStatus", 1));
                } catch (MongoServerException e) {
                    // not allowed for this user: persistence unknown
                }
                boolean inJvm = status != null && "java".equals(status.getString("process"));
                Boolean persistent = status != null && status.get("storageEngine") instanceof Document engine
                        ? engine.getBoolean("persistent")
                        : null;
                return new Facts(version, hello.getString("setName"), inJvm, persistent);
            }
        }

        String describe() {
            String product = inJvm ? "mongo-java-server (reports MongoDB " + version + ")" : "MongoDB " + version;
            String topology = setName != null ? "replica set " + setName : "standalone";
            String storage = inJvm
                    ? "in memory"
                    : persistent == null ? "storage unknown" : persistent ? "persistent storage" : "in-memory storage";
            return product + ", " + topology + ", " + storage;
        }
    }
}
