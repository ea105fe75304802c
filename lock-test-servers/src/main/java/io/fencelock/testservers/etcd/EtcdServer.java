package io.fencelock.testservers.etcd;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.GroupControl;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ReplicaSet;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.TestServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A real etcd for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: the comma-separated client endpoints in {@code FENCELOCK_ETCD_ENDPOINTS}
 *       ({@code http://host:2379,...}), someone else's cluster: tests use unique key names, and
 *       their keys die with their leases;</li>
 *   <li>{@code binaries}: a throwaway single-node {@code etcd} from the Debian package, a child of this
 *       JVM, the only source with {@link #control()} for fault tests;</li>
 *   <li>{@code testcontainers}: a {@code quay.io/coreos/etcd} container, when a Docker engine answers.</li>
 * </ol>
 * System property {@code fencelock.etcd.source=env|binaries|testcontainers} forces one. Test classes
 * share {@link #shared()}; a test that crashes its server starts its own with {@link #start()}, and
 * {@link #startCluster(int)} starts a loopback cluster whose {@link #members()} can each be killed,
 * with {@link #leader()} to find the one to kill first.
 */
public final class EtcdServer extends TestServer {
    public static final String ENDPOINTS_ENV = "FENCELOCK_ETCD_ENDPOINTS";

    private static final String CONTAINER_IMAGE = "quay.io/coreos/etcd:v3.4.23";
    private static final int CONTAINER_PORT = 2379;
    private static final long CLUSTER_START_MILLIS = 30_000;
    private static final Pattern VERSION = Pattern.compile("\"etcdserver\"\\s*:\\s*\"([^\"]+)\"");

    private static final OnePerJvm<EtcdServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        BINARIES,
        TESTCONTAINERS;

        /** The name used in {@code -Dfencelock.etcd.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One member of a cluster this fixture started.
     *
     * @param name     the member's name ({@code n1}, {@code n2}...)
     * @param endpoint its client URL
     * @param control  crash, freeze, stop and restart it (same directory and ports)
     */
    public record Member(String name, String endpoint, ServerControl control) {}

    private final Source source;
    private final List<String> endpoints;
    private final String description;
    private final ServerControl control;
    private final List<EtcdProcess> processes;
    private final ReplicaSet<EtcdProcess> replicas;

    private EtcdServer(
            Source source,
            List<String> endpoints,
            String description,
            ServerControl control,
            List<EtcdProcess> processes,
            Runnable shutdown,
            boolean isShared) {
        super(shutdown, isShared);
        this.source = source;
        this.endpoints = List.copyOf(endpoints);
        this.description = description;
        this.processes = List.copyOf(processes);
        this.replicas = new ReplicaSet<>(
                "etcd " + String.join(",", endpoints),
                this.processes,
                this::leaderProcess,
                () -> this.processes.stream().filter(EtcdProcess::isRunning).allMatch(EtcdProcess::isHealthy)
                        && (this.processes.isEmpty() || leaderProcess().isPresent()));
        // a cluster this fixture runs: one control over all members, whose start waits for a leader again
        this.control = control != null || this.processes.size() < 2
                ? control
                : new GroupControl(
                        "an etcd cluster on " + String.join(",", endpoints),
                        this.processes,
                        () -> awaitHealthy(Duration.ofMillis(CLUSTER_START_MILLIS)));
    }

    /** The server of this JVM, found on first use and stopped by a shutdown hook; fails in CI, skips elsewhere when none. */
    public static EtcdServer shared() {
        return SHARED.get(() -> locate(locator(true)::locate));
    }

    /** A new server of its own by the usual order (or the forced source); close it when done. */
    public static EtcdServer start() {
        return locate(locator(false)::locate);
    }

    /** A new server of its own from exactly {@code source}; close it when done. */
    public static EtcdServer start(Source source) {
        return locate(() -> locator(false).locateOnly(source.key()));
    }

    /**
     * A cluster of its own: {@code size} members from this machine's {@code etcd} on loopback ports,
     * ready when every member reports healthy and they agree on a leader (about 1–3 s). Without the
     * binary the test fails under CI and is skipped elsewhere. Close it when done.
     */
    public static EtcdServer startCluster(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("a cluster needs at least one member, got " + size);
        }
        return locate(() -> ServerLocator.<EtcdServer>forBackend("etcd-cluster", "apt-get install etcd-server")
                .candidate(Source.BINARIES.key(), () -> clusterFromBinaries(size))
                .locateOnly(Source.BINARIES.key()));
    }

    private static EtcdServer clusterFromBinaries(int size) throws Exception {
        Path binary = EtcdProcess.findBinary();
        List<EtcdProcess> members = EtcdProcess.startCluster(binary, size);
        Runnable destroy = () -> members.forEach(EtcdProcess::destroy);
        try {
            List<String> endpoints = members.stream().map(EtcdProcess::endpoint).toList();
            EtcdServer server = new EtcdServer(
                    Source.BINARIES,
                    endpoints,
                    "etcd " + version(endpoints.get(0)) + " from " + binary + ", a cluster of " + size + " on "
                            + String.join(",", endpoints) + " " + EtcdProcess.TIMING,
                    null,
                    members,
                    destroy,
                    false);
            server.awaitHealthy(Duration.ofMillis(CLUSTER_START_MILLIS));
            return server;
        } catch (RuntimeException e) {
            destroy.run();
            throw e;
        }
    }

    private static EtcdServer locate(Supplier<ServerLocator.Located<EtcdServer>> how) {
        return handOut(how.get(), "etcd");
    }

    private static ServerLocator<EtcdServer> locator(boolean isShared) {
        return ServerLocator.<EtcdServer>forBackend(
                        "etcd", "apt-get install etcd-server, set " + ENDPOINTS_ENV + ", or start a Docker engine")
                .candidate(Source.ENV.key(), () -> fromEnvironment(isShared))
                .candidate(Source.BINARIES.key(), () -> fromBinaries(isShared))
                .candidate(Source.TESTCONTAINERS.key(), () -> fromTestcontainers(isShared));
    }

    private static EtcdServer fromEnvironment(boolean isShared) throws ServerLocator.Unavailable {
        String value = System.getenv(ENDPOINTS_ENV);
        if (value == null || value.isBlank()) {
            throw new ServerLocator.Unavailable(ENDPOINTS_ENV + " is not set");
        }
        List<String> endpoints = Arrays.stream(value.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .toList();
        for (String e : endpoints) {
            String lower = e.toLowerCase(Locale.ROOT);
            if (!lower.startsWith("http://") && !lower.startsWith("https://") || e.contains("@")) {
                throw new IllegalArgumentException(
                        ENDPOINTS_ENV + " must be comma-separated http(s)://host:port endpoints"
                                + " without credentials, got '" + e.replaceAll("//[^@/]*@", "//***@") + "'");
            }
        }
        return new EtcdServer(
                Source.ENV,
                endpoints,
                "etcd " + version(endpoints.get(0)) + " from " + ENDPOINTS_ENV + ", " + String.join(",", endpoints),
                null,
                List.of(),
                () -> {},
                isShared);
    }

    private static EtcdServer fromBinaries(boolean isShared) throws Exception {
        Path binary = EtcdProcess.findBinary();
        EtcdProcess process = EtcdProcess.startSingle(binary);
        try {
            return new EtcdServer(
                    Source.BINARIES,
                    List.of(process.endpoint()),
                    "etcd " + version(process.endpoint()) + " from " + binary + ", one node on " + process.endpoint()
                            + " " + EtcdProcess.TIMING,
                    process,
                    List.of(process),
                    process::destroy,
                    isShared);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    private static EtcdServer fromTestcontainers(boolean isShared) throws ServerLocator.Unavailable {
        if (!onClassPath("org.testcontainers.DockerClientFactory")) {
            throw new ServerLocator.Unavailable("Testcontainers is not on the class path");
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            throw new ServerLocator.Unavailable("no Docker engine for Testcontainers");
        }
        List<String> command = new ArrayList<>(List.of(
                "etcd",
                "--listen-client-urls",
                "http://0.0.0.0:" + CONTAINER_PORT,
                "--advertise-client-urls",
                "http://127.0.0.1:" + CONTAINER_PORT));
        command.addAll(EtcdProcess.TIMING);
        @SuppressWarnings("resource") // stopped by the server's shutdown
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(CONTAINER_IMAGE))
                .withExposedPorts(CONTAINER_PORT)
                .withCommand(command.toArray(String[]::new));
        container.start();
        try {
            String endpoint = "http://" + container.getHost() + ":" + container.getMappedPort(CONTAINER_PORT);
            return new EtcdServer(
                    Source.TESTCONTAINERS,
                    List.of(endpoint),
                    "etcd " + version(endpoint) + " from Testcontainers " + CONTAINER_IMAGE + ", " + endpoint,
                    null,
                    List.of(),
                    container::stop,
                    isShared);
        } catch (RuntimeException e) {
            container.stop();
            throw e;
        }
    }

    private static String version(String endpoint) {
        try {
            HttpResponse<String> r = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5))
                    .build()
                    .send(
                            HttpRequest.newBuilder(URI.create(endpoint + "/version"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            Matcher m = VERSION.matcher(r.body());
            return m.find() ? m.group(1) : "?";
        } catch (IOException e) {
            return "?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

    /** The client endpoints ({@code http://127.0.0.1:port}); for an {@code env} server as given. */
    public List<String> endpoints() {
        return endpoints;
    }

    /** The endpoints joined by commas ({@code http://127.0.0.1:1,http://127.0.0.1:2}). */
    public String endpointList() {
        return String.join(",", endpoints);
    }

    public Source source() {
        return source;
    }

    /**
     * Stop, kill, pause and restart what this fixture runs itself ({@code binaries}): a single node, or
     * every member of a {@link #startCluster(int) cluster} at once (its {@code start()} returns once the
     * members are healthy and agree on a leader). Each member on its own: {@link #replicaSet()}.
     */
    public Optional<ServerControl> control() {
        return Optional.ofNullable(control);
    }

    /**
     * For a {@link #startCluster(int) cluster} this fixture runs: each member's controls, who leads,
     * a follower, and waiting for health, as {@link #members()}, {@link #leader()}, {@link #follower()}
     * and {@link #awaitHealthy(Duration)} give them. Empty for a single node and for servers of others.
     */
    public Optional<ReplicaSetControl> replicaSet() {
        return processes.size() < 2 ? Optional.empty() : Optional.of(replicas);
    }

    /**
     * The one endpoint a client may be limited to, for the TCK's fault proxy: a single node's; for a
     * cluster this fixture runs, its first member's (a client given only that endpoint reaches the
     * cluster through that member alone: jetcd does not discover the other members by itself). Empty
     * for a cluster of several endpoints given by {@code env}.
     */
    public Optional<java.net.InetSocketAddress> address() {
        String endpoint =
                !processes.isEmpty() ? processes.get(0).endpoint() : endpoints.size() == 1 ? endpoints.get(0) : null;
        return endpoint == null ? Optional.empty() : Endpoints.single(endpoint, 2379);
    }

    /** The endpoint of {@link #address()}, pointed at {@code address} (the fault proxy): same scheme. */
    public String endpointVia(java.net.InetSocketAddress address) {
        String endpoint =
                !processes.isEmpty() ? processes.get(0).endpoint() : endpoints.size() == 1 ? endpoints.get(0) : null;
        if (endpoint == null) {
            throw new UnsupportedOperationException("no single endpoint to proxy: " + description());
        }
        return Endpoints.withAddress(endpoint, address);
    }

    /** The members this fixture runs itself, each with its own controls (empty for {@code env} and {@code testcontainers}). */
    public List<Member> members() {
        return processes.stream().map(this::member).toList();
    }

    /**
     * The member the running members agree is the leader, or empty when they do not (yet) agree
     * (an election is under way, or there is no quorum). Only for servers this fixture runs.
     */
    public Optional<Member> leader() {
        return replicas.leaderProcess().map(this::member);
    }

    private Optional<EtcdProcess> leaderProcess() {
        long agreed = 0;
        long[] ids = new long[processes.size()];
        for (int i = 0; i < processes.size(); i++) {
            EtcdProcess p = processes.get(i);
            long[] status = p.isRunning() ? p.memberAndLeader() : null;
            if (status == null) {
                continue;
            }
            ids[i] = status[0];
            if (status[1] == 0 || (agreed != 0 && agreed != status[1])) {
                return Optional.empty();
            }
            agreed = status[1];
        }
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] != 0 && ids[i] == agreed) {
                return Optional.of(processes.get(i));
            }
        }
        return Optional.empty();
    }

    /** A running member that is not the leader, for crashing a follower. */
    public Optional<Member> follower() {
        return replicas.followerProcess().map(this::member);
    }

    /** Waits until every running member is healthy and they agree on a leader; throws when {@code timeout} passes first. */
    public void awaitHealthy(Duration timeout) {
        replicas.awaitHealthy(timeout);
    }

    private Member member(EtcdProcess p) {
        return new Member(p.name(), p.endpoint(), p);
    }

    @Override
    protected String summary() {
        return description;
    }
}
