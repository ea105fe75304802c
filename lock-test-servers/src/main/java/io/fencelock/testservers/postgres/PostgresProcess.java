package io.fencelock.testservers.postgres;

import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL cluster run from this machine's binaries: a temp directory, a free
 * loopback port, default settings except {@code max_connections=200}, password authentication on
 * TCP. The postmaster is a direct child of this JVM, so it can be stopped, crashed, frozen and
 * started again on the same data and port.
 *
 * <p>{@code initdb} and {@code postgres} refuse to run as root, so as root both run as the
 * {@code postgres} OS user through {@code setpriv}, which execs in place: {@code runuser} would fork,
 * the postmaster would not be our child, and once killed it would stay a zombie (nothing reaps
 * orphans on these machines) whose pid blocks the restart.
 */
final class PostgresProcess extends ServerProcess {
    static final String SUPERUSER = "postgres";
    private static final Path DEBIAN_VERSIONS = Path.of("/usr/lib/postgresql");
    private static final String OS_USER = "postgres";
    private static final Duration TIMEOUT = Duration.ofSeconds(60); // to start, to stop, for initdb
    private static final int PID_FILE_STATUS_LINE = 7; // 0-based line of "ready" in postmaster.pid (PostgreSQL 10+)

    private final Path bin;
    private final Path base; // owned by the server's OS user: data/, the socket, the log
    private final Path data;
    private final int port;
    private final String password;
    private final List<String> runAs;

    private PostgresProcess(Path bin, Path base, int port, String password, List<String> runAs) {
        super("postgres", base, "postgres.log", TIMEOUT, TIMEOUT);
        this.bin = bin;
        this.base = base;
        this.data = base.resolve("data");
        this.port = port;
        this.password = password;
        this.runAs = runAs;
    }

    /** The {@code bin} directory of the newest PostgreSQL under {@code /usr/lib/postgresql}. */
    static Path newestBinaries() throws ServerLocator.Unavailable {
        if (!Files.isDirectory(DEBIAN_VERSIONS)) {
            throw new ServerLocator.Unavailable("no " + DEBIAN_VERSIONS);
        }
        try (Stream<Path> versions = Files.list(DEBIAN_VERSIONS)) {
            return versions.filter(v -> v.getFileName().toString().matches("\\d+(\\.\\d+)?"))
                    .map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("postgres")))
                    .max(Comparator.comparingDouble(
                            b -> Double.parseDouble(b.getParent().getFileName().toString())))
                    .orElseThrow(() -> new ServerLocator.Unavailable(
                            "no initdb and postgres under " + DEBIAN_VERSIONS + "/*/bin"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Creates a cluster in a new temp directory and starts it. */
    static PostgresProcess initAndStart(Path bin) throws IOException, ServerLocator.Unavailable {
        boolean root = "root".equals(System.getProperty("user.name"));
        return ServerProcess.<PostgresProcess, ServerLocator.Unavailable>inNewDirectory("postgres", base -> {
            List<String> runAs = List.of();
            if (root) {
                giveTo(OS_USER, base);
                runAs = List.of("setpriv", "--reuid=" + OS_USER, "--regid=" + OS_USER, "--init-groups", "--");
            }
            PostgresProcess server = new PostgresProcess(
                    bin, base, ThrowawayServers.freeLoopbackPort(), ThrowawayServers.newPassword(), runAs);
            server.initdb(root);
            server.start();
            return server;
        });
    }

    /**
     * A hot standby of {@code primary}, in a new temp directory: a base backup taken now ({@code pg_basebackup -R},
     * which leaves the standby's signal file and its connection to the primary), started on a port of its own.
     * It is in recovery: it serves reads only, of every database the primary had.
     */
    static PostgresProcess standbyOf(PostgresProcess primary) throws IOException, ServerLocator.Unavailable {
        boolean root = "root".equals(System.getProperty("user.name"));
        return ServerProcess.<PostgresProcess, ServerLocator.Unavailable>inNewDirectory("postgres-standby", base -> {
            if (root) {
                giveTo(OS_USER, base);
            }
            PostgresProcess standby = new PostgresProcess(
                    primary.bin, base, ThrowawayServers.freeLoopbackPort(), primary.password, primary.runAs);
            standby.baseBackupOf(primary, root);
            standby.start();
            return standby;
        });
    }

    /** The password goes in a password file (libpq's passfile), so that neither the command nor the standby's settings carry it. */
    private void baseBackupOf(PostgresProcess primary, boolean root) throws IOException, ServerLocator.Unavailable {
        Path passfile = base.resolve("pgpass");
        Files.writeString(passfile, "127.0.0.1:" + primary.port + ":*:" + SUPERUSER + ":" + password + "\n");
        Files.setPosixFilePermissions(passfile, PosixFilePermissions.fromString("rw-------"));
        if (root) {
            giveTo(OS_USER, passfile);
        }
        runToCompletion(
                "pg_basebackup",
                command(
                        bin.resolve("pg_basebackup").toString(),
                        "-D",
                        data.toString(),
                        "-d",
                        "host=127.0.0.1 port=" + primary.port + " user=" + SUPERUSER + " passfile=" + passfile,
                        "-X",
                        "stream",
                        "-R",
                        "--checkpoint=fast", // the default spreads the backup's checkpoint over minutes
                        "--no-password",
                        "--no-sync"));
    }

    int port() {
        return port;
    }

    String password() {
        return password;
    }

    Path binaries() {
        return bin;
    }

    private void initdb(boolean root) throws IOException, ServerLocator.Unavailable {
        Path passwordFile = base.resolve("pwfile");
        Files.writeString(passwordFile, password);
        if (root) {
            giveTo(OS_USER, passwordFile);
        }
        try {
            // trust on the socket only (nobody uses it); TCP clients need the password, so tests
            // of authentication failures are real. --no-sync only skips initdb's final fsync.
            runToCompletion(
                    "initdb",
                    command(
                            bin.resolve("initdb").toString(),
                            "-D",
                            data.toString(),
                            "-U",
                            SUPERUSER,
                            "--pwfile=" + passwordFile,
                            "--auth-local=trust",
                            "--auth-host=scram-sha-256",
                            "--no-sync",
                            "-E",
                            "UTF8",
                            "--locale=C"));
        } finally {
            Files.deleteIfExists(passwordFile);
        }
    }

    @Override
    protected List<String> command() {
        return command(
                bin.resolve("postgres").toString(),
                "-D",
                data.toString(),
                "-p",
                Integer.toString(port),
                "-h",
                "127.0.0.1",
                "-k",
                base.toString(),
                "-c",
                "max_connections=200");
    }

    /**
     * Ready when postmaster.pid names this process and says "ready" (a primary) or "standby" (a hot standby that
     * accepts connections), as {@code pg_ctl -w} waits.
     */
    @Override
    protected boolean serves(Process process) throws IOException {
        List<String> lines = readLines(data.resolve("postmaster.pid"));
        // a file left by a killed server says "ready" too: it must name the new process
        return lines.size() > PID_FILE_STATUS_LINE
                && lines.get(0).trim().equals(Long.toString(process.pid()))
                && List.of("ready", "standby")
                        .contains(lines.get(PID_FILE_STATUS_LINE).trim());
    }

    /** PostgreSQL's "fast" shutdown: disconnects clients, then a clean checkpoint. */
    @Override
    protected String shutdownSignal() {
        return "INT";
    }

    /** The end of the cluster: an "immediate" shutdown (no checkpoint), then its data is deleted. */
    @Override
    protected String destroySignal() {
        return "QUIT";
    }

    private List<String> command(String... args) {
        List<String> command = new ArrayList<>(runAs);
        command.addAll(List.of(args));
        return command;
    }

    private static void giveTo(String osUser, Path path) throws IOException, ServerLocator.Unavailable {
        UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
        try {
            UserPrincipal owner = users.lookupPrincipalByName(osUser);
            GroupPrincipal group = users.lookupPrincipalByGroupName(osUser);
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(owner);
            view.setGroup(group);
        } catch (UserPrincipalNotFoundException e) {
            throw new ServerLocator.Unavailable(
                    "running as root and there is no '" + osUser + "' OS user to run PostgreSQL as");
        }
    }

    private static List<String> readLines(Path file) throws IOException {
        try {
            return Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            return List.of();
        }
    }

    @Override
    public String toString() {
        return "postgres from " + bin + " on 127.0.0.1:" + port;
    }
}
