package io.fencelock.testservers.mysql;

import io.fencelock.spi.Redaction;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.JdbcServer;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ThrowawayServers;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.MySQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A real MySQL or MariaDB server for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: the JDBC URL in {@code FENCELOCK_MYSQL_URL} ({@code jdbc:mysql:} or
 *       {@code jdbc:mariadb:}), with {@code FENCELOCK_MYSQL_USER} and {@code FENCELOCK_MYSQL_PASSWORD};
 *       the user needs the rights to create and drop databases;</li>
 *   <li>{@code binaries}: a throwaway MariaDB from this machine's {@code mariadbd} and
 *       {@code mariadb-install-db}, the only source with {@link #control()} for fault tests;</li>
 *   <li>{@code testcontainers}: a {@code mysql:8.4} container, when a Docker engine answers.</li>
 * </ol>
 * System property {@code fencelock.mysql.source=env|binaries|testcontainers} forces one. Every URL
 * this class hands out starts with {@code jdbc:mysql:} (MySQL Connector/J also speaks to MariaDB).
 * Test classes share {@link #shared()} and isolate themselves with {@link #createDatabase(String)};
 * fault tests that stop or kill a server start their own with {@link #start(Source)}.
 */
public final class MariaDbServer extends JdbcServer {
    public static final String URL_ENV = "FENCELOCK_MYSQL_URL";
    public static final String USER_ENV = "FENCELOCK_MYSQL_USER";
    public static final String PASSWORD_ENV = "FENCELOCK_MYSQL_PASSWORD";

    private static final String JDBC_PREFIX = "jdbc:mysql:";
    private static final String MARIADB_PREFIX = "jdbc:mariadb:";
    private static final String CONTAINER_IMAGE = "mysql:8.4";

    private static final OnePerJvm<MariaDbServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        BINARIES,
        TESTCONTAINERS;

        /** The name used in {@code -Dfencelock.mysql.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Source source;
    private final String product;
    private final String version;
    private final String description;
    private final ServerControl control;

    private MariaDbServer(
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
        String full = serverVersion(); // e.g. "10.11.18-MariaDB-0+deb12u1" or "8.4.6"
        this.product = full.toLowerCase(Locale.ROOT).contains("mariadb") ? "MariaDB" : "MySQL";
        this.version = full.split("-")[0];
        this.description = product + " " + version + " from " + origin;
    }

    /**
     * The server of this JVM, found on first use and stopped by a shutdown hook. When none can be
     * found, the test fails under CI and is skipped elsewhere, now and on every later call.
     */
    public static MariaDbServer shared() {
        return SHARED.get(() -> locate(locator(true)::locate));
    }

    /** A new server of its own, by the usual order (or the forced source); close it when done. */
    public static MariaDbServer start() {
        return locate(locator(false)::locate);
    }

    /** A new server of its own from exactly {@code source}; close it when done. */
    public static MariaDbServer start(Source source) {
        return locate(() -> locator(false).locateOnly(source.key()));
    }

    /**
     * A new server of its own from this machine's binaries that writes a binary log, with MariaDB's default
     * {@code sync_binlog=0}; close it when done.
     */
    public static MariaDbServer startWithBinaryLog() {
        return locate(() -> ServerLocator.<MariaDbServer>forBackend("mysql", "apt-get install mariadb-server")
                .candidate(Source.BINARIES.key(), () -> fromBinaries(false, true))
                .locateOnly(Source.BINARIES.key()));
    }

    /**
     * A read_only replica of its own of {@code primary} (a server of {@link #startWithBinaryLog()}), replicating
     * from the start of the primary's binary log; returned once it replicates. Close it when done.
     */
    public static MariaDbServer startReplicaOf(MariaDbServer primary) {
        if (!(primary.control instanceof MariaDbProcess primaryProcess)) {
            throw new IllegalArgumentException(
                    "a replica needs a primary this fixture runs (startWithBinaryLog), got " + primary.summary());
        }
        return locate(() -> ServerLocator.<MariaDbServer>forBackend("mysql-replica", "apt-get install mariadb-server")
                .candidate(Source.BINARIES.key(), () -> {
                    requireDriver();
                    return ofProcess(MariaDbProcess.replicaOf(primaryProcess), ", a replica", false);
                })
                .locateOnly(Source.BINARIES.key()));
    }

    private static MariaDbServer locate(Supplier<ServerLocator.Located<MariaDbServer>> how) {
        return handOut(how.get(), "mariadb");
    }

    private static ServerLocator<MariaDbServer> locator(boolean isShared) {
        return ServerLocator.<MariaDbServer>forBackend(
                        "mysql",
                        "apt-get install mariadb-server, set " + URL_ENV + " (with " + USER_ENV + " and " + PASSWORD_ENV
                                + "), or start a Docker engine")
                .candidate(Source.ENV.key(), () -> fromEnvironment(isShared))
                .candidate(Source.BINARIES.key(), () -> fromBinaries(isShared, false))
                .candidate(Source.TESTCONTAINERS.key(), () -> fromTestcontainers(isShared));
    }

    private static MariaDbServer fromEnvironment(boolean isShared) throws ServerLocator.Unavailable {
        String url = System.getenv(URL_ENV);
        if (url == null || url.isBlank()) {
            throw new ServerLocator.Unavailable(URL_ENV + " is not set");
        }
        requireDriver();
        String lower = url.toLowerCase(Locale.ROOT);
        if (lower.startsWith(MARIADB_PREFIX)) {
            url = JDBC_PREFIX + url.substring(MARIADB_PREFIX.length());
        } else if (!lower.startsWith(JDBC_PREFIX)) {
            throw new IllegalArgumentException(URL_ENV + " must be a JDBC URL starting with " + JDBC_PREFIX + " or "
                    + MARIADB_PREFIX + ", got " + Redaction.uri(url));
        }
        return new MariaDbServer(
                Source.ENV,
                url,
                System.getenv(USER_ENV),
                System.getenv(PASSWORD_ENV),
                URL_ENV + ", " + Redaction.uri(url),
                null,
                () -> {},
                isShared);
    }

    private static MariaDbServer fromBinaries(boolean isShared, boolean binaryLog) throws Exception {
        MariaDbProcess.Binaries binaries = MariaDbProcess.find();
        requireDriver(); // the readiness check logs in over JDBC
        return ofProcess(MariaDbProcess.initAndStart(binaries, binaryLog), "", isShared);
    }

    /** A server this fixture runs; {@code note} follows its binaries and address in its description. */
    private static MariaDbServer ofProcess(MariaDbProcess process, String note, boolean isShared) {
        try {
            return new MariaDbServer(
                    Source.BINARIES,
                    process.jdbcUrl(MariaDbProcess.DATABASE),
                    MariaDbProcess.USER,
                    process.password(),
                    process.binaries().server() + ", 127.0.0.1:" + process.port() + note,
                    process,
                    process::destroy,
                    isShared);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    private static MariaDbServer fromTestcontainers(boolean isShared) throws ServerLocator.Unavailable {
        if (!onClassPath("org.testcontainers.DockerClientFactory")
                || !onClassPath("org.testcontainers.containers.MySQLContainer")) {
            throw new ServerLocator.Unavailable("Testcontainers (with its mysql module) is not on the class path");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new ServerLocator.Unavailable("no Docker engine for Testcontainers");
        }
        requireDriver();
        // root, so that tests can create databases; the image's defaults are durable (flush at commit)
        MySQLContainer<?> container = new MySQLContainer<>(DockerImageName.parse(CONTAINER_IMAGE))
                .withDatabaseName(MariaDbProcess.DATABASE)
                .withUsername("root")
                .withPassword(ThrowawayServers.newPassword())
                .withCommand("--max-connections=500");
        container.start();
        try {
            return new MariaDbServer(
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

    /** {@code "MariaDB"} or {@code "MySQL"}, as the server reports itself. */
    public String product() {
        return product;
    }

    /** The server's version, e.g. {@code "10.11.18"}. */
    public String version() {
        return version;
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
        return Endpoints.single(jdbcUrl(), 3306);
    }

    /** {@code url} (e.g. from {@link #createDatabase(String)}) pointed at {@code address}: same database, user and parameters. */
    public static String withAddress(String url, java.net.InetSocketAddress address) {
        return Endpoints.withAddress(url, address);
    }

    @Override
    protected String createDatabaseSql(String name) {
        return "CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4"; // a validated identifier, quoted
    }

    @Override
    protected String dropDatabaseSql(String name) {
        return "DROP DATABASE IF EXISTS `" + name + "`";
    }

    @Override
    protected String urlWithDatabase(String url, String database) {
        return withDatabase(url, database);
    }

    /**
     * {@code url} with its database replaced by {@code database}, keeping the scheme, the hosts and
     * the parameters: {@code jdbc:mysql://h1:3306,h2/app?x=1} becomes {@code jdbc:mysql://h1:3306,h2/db?x=1}.
     */
    static String withDatabase(String url, String database) {
        int slashes = url.indexOf("//");
        if (slashes < 0) {
            throw new IllegalArgumentException("not a jdbc:mysql://host/... URL: " + Redaction.uri(url));
        }
        int query = url.indexOf('?', slashes);
        String params = query < 0 ? "" : url.substring(query);
        String path = query < 0 ? url : url.substring(0, query);
        int slash = path.indexOf('/', slashes + 2);
        String hosts = slash < 0 ? path : path.substring(0, slash);
        return hosts + "/" + database + params;
    }

    private String serverVersion() {
        return queryOne("SELECT VERSION()");
    }

    private static void requireDriver() throws ServerLocator.Unavailable {
        if (!onClassPath("com.mysql.cj.jdbc.Driver")) {
            throw new ServerLocator.Unavailable(
                    "MySQL Connector/J (com.mysql:mysql-connector-j) is not on the class path");
        }
    }

    @Override
    protected String summary() {
        return description;
    }
}
