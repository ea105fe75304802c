package io.fencelock.testservers.etcd;

import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One throwaway {@code etcd} member run from this machine's binary: a temp data directory, free
 * loopback client and peer ports, in the foreground as a direct child of this JVM (nothing reaps
 * orphans on these machines), so it can be stopped, crashed, frozen and started again on the same
 * directory and ports. Its revisions (the fencing tokens) live in the WAL, so they survive a SIGKILL.
 *
 * <p>Members run with {@code --heartbeat-interval 50 --election-timeout 500}: on loopback that is
 * safe, and it brings etcd's minimum lease TTL ({@code 1.5 x election timeout}, rounded up to whole
 * seconds) from 2 s down to 1 s, so that a lease of the TCK's sub-second TTLs lives about 1 s.
 */
final class EtcdProcess extends ServerProcess {
    private static final List<Path> WELL_KNOWN = List.of(Path.of("/usr/bin/etcd"), Path.of("/usr/local/bin/etcd"));
    static final List<String> TIMING = List.of("--heartbeat-interval", "50", "--election-timeout", "500");
    private static final Duration TIMEOUT = Duration.ofSeconds(30); // to start, to stop
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();

    private final Path binary;
    private final String name;
    private final int clientPort;
    private final int peerPort;
    private final boolean member; // of a multi-member cluster: ready without a quorum
    private List<String> arguments = List.of(); // set before the first start

    private EtcdProcess(Path binary, Path dir, String name, int clientPort, int peerPort, boolean member) {
        super("etcd " + name, dir, "etcd.log", TIMEOUT, TIMEOUT);
        this.binary = binary;
        this.name = name;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
        this.member = member;
    }

    /** {@code etcd} from the Debian package, or the first one on the {@code PATH}. */
    static Path findBinary() throws ServerLocator.Unavailable {
        return findExecutable("etcd", WELL_KNOWN);
    }

    /** A single-node cluster, started and healthy. */
    static EtcdProcess startSingle(Path binary) throws IOException {
        EtcdProcess p = prepare(binary, "n1", false);
        try {
            p.configure(List.of(p), "fencelock-" + Long.toHexString(System.nanoTime()));
            p.start();
            return p;
        } catch (RuntimeException e) {
            p.destroy();
            throw e;
        }
    }

    /** {@code size} members on loopback, all started (concurrently, since each waits for the others), not yet checked for a leader. */
    static List<EtcdProcess> startCluster(Path binary, int size) throws IOException {
        List<EtcdProcess> members = new ArrayList<>();
        try {
            for (int i = 1; i <= size; i++) {
                members.add(prepare(binary, "n" + i, true));
            }
            String token = "fencelock-" + Long.toHexString(System.nanoTime());
            for (EtcdProcess m : members) {
                m.configure(members, token);
            }
            for (EtcdProcess m : members) {
                m.start(); // a member is "ready" when its client port answers, which needs no quorum
            }
            return members;
        } catch (IOException | RuntimeException e) {
            members.forEach(EtcdProcess::destroy);
            throw e;
        }
    }

    private static EtcdProcess prepare(Path binary, String name, boolean member) throws IOException {
        return inNewDirectory(
                "etcd",
                dir -> new EtcdProcess(
                        binary,
                        dir,
                        name,
                        ThrowawayServers.freeLoopbackPort(),
                        ThrowawayServers.freeLoopbackPort(),
                        member));
    }

    private void configure(List<EtcdProcess> cluster, String token) {
        String initial = String.join(
                ",", cluster.stream().map(m -> m.name + "=" + m.peerUrl()).toList());
        List<String> a = new ArrayList<>(List.of(
                "--name",
                name,
                "--data-dir",
                dir().resolve("data").toString(),
                "--listen-client-urls",
                endpoint(),
                "--advertise-client-urls",
                endpoint(),
                "--listen-peer-urls",
                peerUrl(),
                "--initial-advertise-peer-urls",
                peerUrl(),
                "--initial-cluster",
                initial,
                "--initial-cluster-token",
                token,
                "--initial-cluster-state",
                "new"));
        a.addAll(TIMING);
        arguments = List.copyOf(a);
    }

    String name() {
        return name;
    }

    String endpoint() {
        return "http://127.0.0.1:" + clientPort;
    }

    private String peerUrl() {
        return "http://127.0.0.1:" + peerPort;
    }

    Path binary() {
        return binary;
    }

    @Override
    protected List<String> command() {
        return commandLine(binary, arguments);
    }

    /**
     * A single node is ready when {@code /health} is true; a cluster member as soon as its client port
     * accepts connections (it serves only once a quorum has formed, which needs the other members).
     */
    @Override
    protected boolean serves(Process process) {
        return member ? listening() : isHealthy();
    }

    private boolean listening() {
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), clientPort), (int)
                    PROBE_TIMEOUT.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether this member answers {@code /health} with true (it has a leader and can serve). */
    boolean isHealthy() {
        String body = get("/health");
        return body != null && body.replace(" ", "").contains("\"health\":\"true\"");
    }

    /** This member's id and the leader it knows ({@code 0} when none), or null when it does not answer. */
    long[] memberAndLeader() {
        String body = post("/v3/maintenance/status", "{}");
        if (body == null) {
            return null;
        }
        Matcher m = MEMBER_ID.matcher(body);
        Matcher l = LEADER.matcher(body);
        if (!m.find()) {
            return null;
        }
        return new long[] {Long.parseUnsignedLong(m.group(1)), l.find() ? Long.parseUnsignedLong(l.group(1)) : 0};
    }

    private String get(String path) {
        return send(HttpRequest.newBuilder(URI.create(endpoint() + path))
                .timeout(PROBE_TIMEOUT)
                .GET()
                .build());
    }

    private String post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(endpoint() + path))
                .timeout(PROBE_TIMEOUT)
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .header("Content-Type", "application/json")
                .build());
    }

    private static String send(HttpRequest request) {
        try {
            HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public String toString() {
        return "etcd " + name + " " + binary + " on " + endpoint();
    }
}
