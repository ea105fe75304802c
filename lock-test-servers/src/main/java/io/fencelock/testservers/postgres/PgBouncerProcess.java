package io.fencelock.testservers.postgres;

import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A throwaway PgBouncer (this machine's {@code pgbouncer} package) in front of one database of a PostgreSQL
 * server, offering it twice: as database {@code transactions} in {@code pool_mode=transaction} and as
 * {@code sessions} in {@code pool_mode=session}. PgBouncer refuses to run as root, so as root it runs as the
 * {@code postgres} OS user through {@code setpriv}, as {@link PostgresProcess} does.
 */
public final class PgBouncerProcess extends ServerProcess {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Path ini;
    private final int port;
    private final String user;
    private final String password;

    private PgBouncerProcess(Path dir, Path ini, int port, String user, String password) {
        super("pgbouncer", dir, "pgbouncer.out", TIMEOUT, TIMEOUT);
        this.ini = ini;
        this.port = port;
        this.user = user;
        this.password = password;
    }

    /** Starts a PgBouncer in front of {@code database} on {@code postgres}, logging in as {@code user}. */
    public static PgBouncerProcess inFrontOf(InetSocketAddress postgres, String database, String user, String password)
            throws IOException {
        String secret = password == null ? "" : password;
        PgBouncerProcess process = inNewDirectory("pgbouncer", dir -> {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx")); // for its OS user
            int port = ThrowawayServers.freeLoopbackPort();
            String target = " host=" + postgres.getHostString() + " port=" + postgres.getPort() + " dbname=" + database;
            Files.writeString(dir.resolve("users.txt"), "\"" + user + "\" \"" + secret + "\"\n");
            Path ini = dir.resolve("pgbouncer.ini");
            Files.writeString(
                    ini,
                    String.join(
                            "\n",
                            "[databases]",
                            "transactions =" + target + " pool_mode=transaction",
                            "sessions =" + target + " pool_mode=session",
                            "[pgbouncer]",
                            "listen_addr = 127.0.0.1",
                            "listen_port = " + port,
                            "unix_socket_dir =",
                            "auth_type = " + (secret.isEmpty() ? "trust" : "plain"),
                            "auth_file = " + dir.resolve("users.txt"),
                            "default_pool_size = 4",
                            "ignore_startup_parameters = extra_float_digits,options",
                            "logfile = " + dir.resolve("pgbouncer.log"),
                            ""));
            return new PgBouncerProcess(dir, ini, port, user, password);
        });
        try {
            process.start();
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
        return process;
    }

    /** A JDBC URL of one of its databases, {@code transactions} or {@code sessions}. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    @Override
    protected List<String> command() {
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"));
        }
        command.addAll(List.of("pgbouncer", ini.toString()));
        return command;
    }

    @Override
    protected boolean serves(Process process) {
        try (Connection c = DriverManager.getConnection(jdbcUrl("sessions"), user, password)) {
            return true;
        } catch (SQLException e) {
            return false;
        }
    }
}
