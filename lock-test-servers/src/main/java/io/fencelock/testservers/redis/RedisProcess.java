package io.fencelock.testservers.redis;

import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A throwaway {@code redis-server} run from this machine's binary: a temp directory (its working
 * and data directory), a free loopback port, no password, persistence as asked. The server runs
 * in the foreground as a direct child of this JVM (never {@code --daemonize yes}: nothing reaps
 * orphans on these machines), so it can be stopped, crashed, frozen and started again on the same
 * directory and port, which is what the restart properties need: with AOF {@code always} the data
 * comes back after a SIGKILL, without persistence it is gone.
 */
final class RedisProcess extends ServerProcess {
    private static final List<Path> WELL_KNOWN =
            List.of(Path.of("/usr/bin/redis-server"), Path.of("/usr/local/bin/redis-server"));
    private static final Duration TIMEOUT = Duration.ofSeconds(30); // to start, to stop
    private static final int PROBE_TIMEOUT_MILLIS = 250;

    private final Path binary;
    private final int port;
    private final String kind; // for messages: "redis-server" or "redis-sentinel"
    private final List<String> arguments; // after the binary; the port, bind and dir come first

    private RedisProcess(Path binary, Path dir, int port, String kind, List<String> arguments) {
        super(kind, dir, "redis.log", TIMEOUT, TIMEOUT);
        this.binary = binary;
        this.port = port;
        this.kind = kind;
        this.arguments = List.copyOf(arguments);
    }

    /** {@code redis-server} from the Debian package, or the first one on the {@code PATH}. */
    static Path findBinary() throws ServerLocator.Unavailable {
        return findExecutable("redis-server", WELL_KNOWN);
    }

    /** Starts a new server in a new temp directory. */
    static RedisProcess start(Path binary, RedisServer.Persistence persistence) throws IOException {
        return start(binary, persistence, List.of());
    }

    /** Starts a new server in a new temp directory, with more {@code redis-server} arguments (e.g. for Cluster). */
    static RedisProcess start(Path binary, RedisServer.Persistence persistence, List<String> extraArguments)
            throws IOException {
        return inNewDirectory("redis", dir -> {
            int port = ThrowawayServers.freeLoopbackPort();
            List<String> arguments = new ArrayList<>(local(port, dir));
            arguments.addAll(List.of("--save", "")); // no RDB snapshots: persistence is the AOF or nothing
            arguments.addAll(persistence.serverArguments());
            arguments.addAll(extraArguments);
            RedisProcess process = new RedisProcess(binary, dir, port, "redis-server", arguments);
            process.start();
            return process;
        });
    }

    /**
     * Starts a Sentinel in a new temp directory that monitors the master on {@code masterPort} under
     * {@code masterName} (quorum 1: it alone decides). Sentinel rewrites its configuration file, so
     * the file lives in the directory.
     */
    static RedisProcess startSentinel(Path binary, String masterName, int masterPort) throws IOException {
        return inNewDirectory("redis-sentinel", dir -> {
            Path config = dir.resolve("sentinel.conf");
            Files.writeString(
                    config,
                    "sentinel monitor " + masterName + " 127.0.0.1 " + masterPort + " 1\n"
                            + "sentinel down-after-milliseconds " + masterName + " 1000\n"
                            + "sentinel failover-timeout " + masterName + " 5000\n",
                    StandardCharsets.UTF_8);
            int port = ThrowawayServers.freeLoopbackPort();
            List<String> arguments = new ArrayList<>(List.of(config.toString(), "--sentinel"));
            arguments.addAll(local(port, dir));
            RedisProcess process = new RedisProcess(binary, dir, port, "redis-sentinel", arguments);
            process.start();
            return process;
        });
    }

    /** In the foreground (a child of this JVM), on loopback, with its files in {@code dir}. */
    private static List<String> local(int port, Path dir) {
        return List.of(
                "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(), "--daemonize", "no");
    }

    int port() {
        return port;
    }

    Path binary() {
        return binary;
    }

    @Override
    protected List<String> command() {
        return commandLine(binary, arguments);
    }

    /** Ready when the server answers PING with PONG (not LOADING: the AOF is replayed first). */
    @Override
    protected boolean serves(Process process) {
        return answersPong(port);
    }

    /** One inline {@code PING} over a plain socket; false while the port is closed or the server loads its data. */
    static boolean answersPong(int port) {
        return ask(port, "PING", RedisProcess::readLine).filter("+PONG"::equals).isPresent();
    }

    /**
     * The node's {@code CLUSTER INFO} over a plain socket, or empty when it does not answer within the probe
     * timeout: a readiness loop built on it cannot hang (a Lettuce client's shutdown can, see
     * {@link LettuceClients}).
     */
    static Optional<String> clusterInfo(int port) {
        return ask(port, "CLUSTER INFO", in -> {
            String header = readLine(in); // "$<length>" for a bulk string, "-ERR ..." otherwise
            if (!header.startsWith("$")) {
                throw new IOException("not a bulk string: " + header);
            }
            byte[] body = new byte[Integer.parseInt(header.substring(1))];
            in.readFully(body);
            return new String(body, StandardCharsets.US_ASCII);
        });
    }

    private interface Reply<T> {
        T read(DataInputStream in) throws IOException;
    }

    /** One inline command on a fresh connection, every step bounded by the probe timeout. */
    private static <T> Optional<T> ask(int port, String inlineCommand, Reply<T> reply) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), PROBE_TIMEOUT_MILLIS);
            socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write((inlineCommand + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return Optional.of(reply.read(new DataInputStream(socket.getInputStream())));
        } catch (IOException | RuntimeException e) { // closed port, timeout, a reply of another shape
            return Optional.empty();
        }
    }

    private static String readLine(DataInputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c; (c = in.read()) != '\r'; ) {
            if (c == -1 || line.length() >= 200) {
                throw new IOException("no RESP line: " + line);
            }
            line.append((char) c);
        }
        return line.toString();
    }

    @Override
    public String toString() {
        return kind + " " + binary + " on 127.0.0.1:" + port;
    }
}
