package io.fencelock.testservers.mysql;

import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;

/**
 * A throwaway MariaDB server run from this machine's Debian binaries ({@code mariadbd},
 * {@code mariadb-install-db}): a temp directory (its data and its {@code tmpdir}), a free loopback port,
 * binary logging off unless asked for, and otherwise the server's defaults, which are durable ({@code innodb_flush_log_at_trx_commit=1}).
 * A TCP user with a random password and full rights is created on the first start. The server
 * is a single process and a direct child of this JVM, so it can be stopped, crashed (and reaped),
 * frozen and started again on the same data and port.
 *
 * <p>As root both programs need {@code --user=root}; otherwise they run as the current user.
 */
final class MariaDbProcess extends ServerProcess {
    static final String USER = "fencelock";
    static final String DATABASE = "fencelock";
    private static final List<Path> SERVERS = List.of(Path.of("/usr/sbin/mariadbd"), Path.of("/usr/bin/mariadbd"));
    private static final List<Path> INSTALLERS = List.of(
            Path.of("/usr/bin/mariadb-install-db"),
            Path.of("/usr/bin/mysql_install_db"),
            Path.of("/usr/sbin/mariadb-install-db"));
    private static final Duration TIMEOUT = Duration.ofSeconds(60); // to start, to stop, to install
    private static final int MAX_CONNECTIONS = 500;

    /** Where the two programs are. */
    record Binaries(Path server, Path installer) {}

    private final Binaries binaries;
    private final Path base; // data/, the socket, the log, the pid file
    private final Path data;
    private final int port;
    private final String password;
    private final boolean root;
    private final boolean binaryLog;
    private final int serverId; // replication tells servers apart by it
    private final boolean readOnly;
    private volatile SQLException lastRefusal; // of the readiness probe, for the message when it never gets in

    private MariaDbProcess(
            Binaries binaries,
            Path base,
            int port,
            String password,
            boolean root,
            boolean binaryLog,
            int serverId,
            boolean readOnly) {
        super("mariadbd", base, "mariadbd.log", TIMEOUT, TIMEOUT);
        this.binaries = binaries;
        this.base = base;
        this.data = base.resolve("data");
        this.port = port;
        this.password = password;
        this.root = root;
        this.binaryLog = binaryLog;
        this.serverId = serverId;
        this.readOnly = readOnly;
    }

    /** The MariaDB server and installer of this machine's packages. */
    static Binaries find() throws ServerLocator.Unavailable {
        Path server = SERVERS.stream()
                .filter(Files::isExecutable)
                .findFirst()
                .orElseThrow(() -> new ServerLocator.Unavailable("no mariadbd in " + SERVERS));
        Path installer = INSTALLERS.stream()
                .filter(Files::isExecutable)
                .findFirst()
                .orElseThrow(() -> new ServerLocator.Unavailable("no mariadb-install-db in " + INSTALLERS));
        return new Binaries(server, installer);
    }

    /**
     * Creates a data directory in a new temp directory, starts the server on it and creates the TCP user; with
     * {@code binaryLog}, the server writes a binary log (MariaDB's default {@code sync_binlog=0}), else none.
     */
    static MariaDbProcess initAndStart(Binaries binaries, boolean binaryLog) throws IOException {
        boolean root = "root".equals(System.getProperty("user.name"));
        return inNewDirectory("mariadb", base -> {
            MariaDbProcess process = new MariaDbProcess(
                    binaries,
                    base,
                    ThrowawayServers.freeLoopbackPort(),
                    ThrowawayServers.newPassword(),
                    root,
                    binaryLog,
                    1,
                    false);
            process.install();
            process.firstStart();
            return process;
        });
    }

    /**
     * A read_only replica of {@code primary} (which writes a binary log), in a new temp directory: installed and
     * started as a primary is, then replicating from the start of the primary's binary log as the primary's user
     * (who has every privilege). Returned once both of its replication threads run.
     */
    static MariaDbProcess replicaOf(MariaDbProcess primary) throws IOException {
        if (!primary.binaryLog) {
            throw new IllegalArgumentException("a replica needs a primary that writes a binary log: " + primary);
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        return inNewDirectory("mariadb-replica", base -> {
            MariaDbProcess replica = new MariaDbProcess(
                    primary.binaries,
                    base,
                    ThrowawayServers.freeLoopbackPort(),
                    ThrowawayServers.newPassword(),
                    root,
                    false,
                    2,
                    true);
            replica.install();
            replica.firstStart();
            try {
                replica.replicateFrom(primary);
            } catch (IOException | RuntimeException e) {
                replica.destroy();
                throw e;
            }
            return replica;
        });
    }

    private void replicateFrom(MariaDbProcess primary) throws IOException {
        try (Connection c = DriverManager.getConnection(jdbcUrl(""), credentials(password, 5000));
                Statement s = c.createStatement()) {
            // CHANGE MASTER takes no bind parameters; the port is a number and the password hex
            s.execute("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + primary.port + ", MASTER_USER = '"
                    + USER + "', MASTER_PASSWORD = '" + primary.password + "', MASTER_USE_GTID = slave_pos");
            s.execute("START SLAVE");
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!replicating(s)) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("the replica " + this + " did not replicate from " + primary + " within "
                            + TIMEOUT.toSeconds() + " s");
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
        } catch (SQLException e) {
            throw new IOException("the replica " + this + " could not start replicating from " + primary, e);
        }
    }

    /** Both replication threads run: the one that reads the primary's binary log and the one that applies it. */
    private static boolean replicating(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SHOW SLAVE STATUS")) {
            return rs.next()
                    && "Yes".equals(rs.getString("Slave_IO_Running"))
                    && "Yes".equals(rs.getString("Slave_SQL_Running"));
        }
    }

    int port() {
        return port;
    }

    String password() {
        return password;
    }

    Binaries binaries() {
        return binaries;
    }

    String jdbcUrl(String database) {
        return "jdbc:mysql://127.0.0.1:" + port + "/" + database;
    }

    private Path tmpdir() {
        return base.resolve("tmp");
    }

    private void install() throws IOException {
        Files.createDirectories(tmpdir());
        List<String> command = new ArrayList<>(List.of(binaries.installer().toString(), "--no-defaults"));
        if (root) {
            command.add("--user=root");
        }
        // root gets socket authentication only (nobody uses it); tests connect over TCP as USER. The installer's
        // bootstrap server, too, deletes the #sql files of its tmpdir as it starts: its own, as the server's
        command.addAll(List.of(
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                "--datadir=" + data,
                "--tmpdir=" + tmpdir()));
        runToCompletion("mariadb-install-db", command);
    }

    /** The first start runs an init file (readable by us only, deleted once the server is up) that creates the user. */
    private void firstStart() throws IOException {
        Path init = base.resolve("init.sql");
        Files.createFile(init, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            // the password is hex, so it needs no escaping
            Files.writeString(
                    init,
                    "CREATE DATABASE IF NOT EXISTS `" + DATABASE + "` CHARACTER SET utf8mb4;\n"
                            + "CREATE USER IF NOT EXISTS '" + USER + "'@'127.0.0.1' IDENTIFIED BY '" + password + "';\n"
                            + "GRANT ALL PRIVILEGES ON *.* TO '" + USER + "'@'127.0.0.1' WITH GRANT OPTION;\n");
            startWith(command(init));
        } finally {
            Files.deleteIfExists(init);
        }
    }

    @Override
    protected List<String> command() {
        return command(null);
    }

    /** The server's command line; {@code initFile} (SQL run before it accepts connections) on the first start only. */
    private List<String> command(Path initFile) {
        List<String> command = new ArrayList<>(List.of(binaries.server().toString(), "--no-defaults"));
        if (root) {
            command.add("--user=root");
        }
        command.addAll(List.of(
                "--datadir=" + data,
                "--bind-address=127.0.0.1",
                "--port=" + port,
                "--socket=" + base.resolve("s.sock"),
                "--pid-file=" + base.resolve("mariadbd.pid"),
                // its own: a starting server deletes every #sql file in its tmpdir, and with /tmp shared that
                // includes the on-disk temporary tables of the other servers running queries at the time
                "--tmpdir=" + tmpdir(),
                binaryLog ? "--log-bin=" + base.resolve("binlog") : "--skip-log-bin",
                "--server-id=" + serverId,
                "--skip-name-resolve",
                "--max-connections=" + MAX_CONNECTIONS));
        if (readOnly) {
            command.add("--read-only"); // as replicas run; the replication threads write all the same
        }
        if (initFile != null) {
            command.add("--init-file=" + initFile);
        }
        return command;
    }

    /**
     * Ready when the new process accepts our user over TCP. The init file runs before the server
     * accepts connections, so a successful login also means the user exists.
     */
    @Override
    protected boolean serves(Process process) {
        try (Connection c = DriverManager.getConnection(jdbcUrl(""), credentials(password, 1000))) {
            return true;
        } catch (SQLException e) {
            lastRefusal = e; // not listening yet, or still recovering
            return false;
        }
    }

    private static Properties credentials(String password, int connectTimeoutMillis) {
        Properties credentials = new Properties();
        credentials.setProperty("user", USER);
        credentials.setProperty("password", password);
        credentials.setProperty("connectTimeout", Integer.toString(connectTimeoutMillis));
        return credentials;
    }

    @Override
    protected String notReadyDetail() {
        return " (last: " + lastRefusal + ")";
    }

    @Override
    public String toString() {
        return "mariadbd from " + binaries.server() + " on 127.0.0.1:" + port;
    }
}
