package io.fencelock.testservers.zookeeper;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.GroupControl;
import io.fencelock.testservers.common.OnePerJvm;
import io.fencelock.testservers.common.ReplicaSet;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.TestServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A real ZooKeeper for tests, found in this order (see {@link ServerLocator}):
 * <ol>
 *   <li>{@code env}: {@code FENCELOCK_ZOOKEEPER_URL}, {@code zookeeper://host:port[,host:port...][/chroot]},
 *       someone else's ensemble: tests use unique lock names, and their znodes die with their sessions;</li>
 *   <li>{@code jvm}: a throwaway standalone server from the {@code org.apache.zookeeper:zookeeper}
 *       artifact on the class path, in a child JVM, the only source with {@link #control()} for fault tests.</li>
 * </ol>
 * System property {@code fencelock.zookeeper.source=env|jvm} forces one. Test classes share
 * {@link #shared()}; a test that crashes its server starts its own with {@link #start()}, and
 * {@link #startEnsemble(int)} starts a loopback ensemble whose {@link #members()} can each be killed,
 * with {@link #leader()} to find the one to kill first. No Docker, no packages: the servers come from
 * the same Maven artifact as the client.
 */
public final class ZooKeeperServer extends TestServer {
    public static final String URL_ENV = "FENCELOCK_ZOOKEEPER_URL";
    private static final String SCHEME = "zookeeper://";
    private static final long ENSEMBLE_START_MILLIS = 30_000;

    private static final OnePerJvm<ZooKeeperServer> SHARED = new OnePerJvm<>();

    /** Where a server comes from, in the order they are tried. */
    public enum Source {
        ENV,
        JVM;

        /** The name used in {@code -Dfencelock.zookeeper.source=...}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One member of an ensemble this fixture started.
     *
     * @param name     the member's name ({@code zk1}, {@code zk2}...)
     * @param hostPort its client address, {@code 127.0.0.1:port}
     * @param control  crash, freeze, stop and restart it (same directory and ports)
     */
    public record Member(String name, String hostPort, ServerControl control) {}

    private final Source source;
    private final String hosts;
    private final String chroot;
    private final String description;
    private final List<ZooKeeperProcess> processes;
    private final ReplicaSet<ZooKeeperProcess> replicas;
    private final ServerControl control;

    private ZooKeeperServer(
            Source source,
            String hosts,
            String chroot,
            String description,
            List<ZooKeeperProcess> processes,
            boolean isShared) {
        super(() -> processes.forEach(ZooKeeperProcess::destroy), isShared);
        this.source = source;
        this.hosts = hosts;
        this.chroot = chroot;
        this.description = description;
        this.processes = List.copyOf(processes);
        this.replicas = new ReplicaSet<>(
                "ZooKeeper " + hosts,
                this.processes,
                this::leaderProcess,
                () -> this.processes.size() == 1
                        ? "standalone".equals(this.processes.get(0).mode())
                        : this.processes.isEmpty() || leaderProcess().isPresent());
        this.control = this.processes.isEmpty()
                ? null
                : this.processes.size() == 1
                        ? this.processes.get(0)
                        : new GroupControl(
                                "a ZooKeeper ensemble on " + hosts,
                                this.processes,
                                () -> awaitHealthy(Duration.ofMillis(ENSEMBLE_START_MILLIS)));
    }

    /** The server of this JVM, found on first use and stopped by a shutdown hook; fails in CI, skips elsewhere when none. */
    public static ZooKeeperServer shared() {
        return SHARED.get(() -> locate(locator(true)::locate));
    }

    /** A new server of its own by the usual order (or the forced source); close it when done. */
    public static ZooKeeperServer start() {
        return locate(locator(false)::locate);
    }

    /** A new server of its own from exactly {@code source}; close it when done. */
    public static ZooKeeperServer start(Source source) {
        return locate(() -> locator(false).locateOnly(source.key()));
    }

    /**
     * An ensemble of its own: {@code size} members in child JVMs on loopback ports, ready when every
     * member serves and they agree on one leader (about 2–4 s). Close it when done.
     */
    public static ZooKeeperServer startEnsemble(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("an ensemble needs at least one member, got " + size);
        }
        return locate(() -> ServerLocator.<ZooKeeperServer>forBackend(
                        "zookeeper-ensemble", "put org.apache.zookeeper:zookeeper on the test class path")
                .candidate(Source.JVM.key(), () -> ensembleInJvms(size))
                .locateOnly(Source.JVM.key()));
    }

    private static ZooKeeperServer ensembleInJvms(int size) throws Exception {
        ZooKeeperProcess.requireServerClasses();
        List<ZooKeeperProcess> members = ZooKeeperProcess.startEnsemble(size);
        try {
            String hosts = String.join(
                    ",", members.stream().map(ZooKeeperProcess::hostPort).toList());
            ZooKeeperServer server = new ZooKeeperServer(
                    Source.JVM,
                    hosts,
                    "",
                    "ZooKeeper " + version() + " (QuorumPeerMain in child JVMs), an ensemble of " + size + " on "
                            + hosts + " " + ZooKeeperProcess.TIMING,
                    members,
                    false);
            server.awaitHealthy(Duration.ofMillis(ENSEMBLE_START_MILLIS));
            return server;
        } catch (RuntimeException e) {
            members.forEach(ZooKeeperProcess::destroy);
            throw e;
        }
    }

    private static ZooKeeperServer locate(Supplier<ServerLocator.Located<ZooKeeperServer>> how) {
        return handOut(how.get(), "zookeeper");
    }

    private static ServerLocator<ZooKeeperServer> locator(boolean isShared) {
        return ServerLocator.<ZooKeeperServer>forBackend(
                        "zookeeper",
                        "set " + URL_ENV + ", or put org.apache.zookeeper:zookeeper on the test class path")
                .candidate(Source.ENV.key(), () -> fromEnvironment(isShared))
                .candidate(Source.JVM.key(), () -> inJvm(isShared));
    }

    private static ZooKeeperServer fromEnvironment(boolean isShared) throws ServerLocator.Unavailable {
        String value = System.getenv(URL_ENV);
        if (value == null || value.isBlank()) {
            throw new ServerLocator.Unavailable(URL_ENV + " is not set");
        }
        String v = value.trim();
        if (!v.regionMatches(true, 0, SCHEME, 0, SCHEME.length()) || v.contains("@") || v.length() == SCHEME.length()) {
            throw new IllegalArgumentException(
                    URL_ENV + " must be zookeeper://host:port[,host:port...][/chroot] without" + " credentials, got '"
                            + v.replaceAll("//[^@/]*@", "//***@") + "'");
        }
        String rest = v.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        String chroot = slash < 0 ? "" : rest.substring(slash);
        return new ZooKeeperServer(
                Source.ENV, hosts, chroot, "ZooKeeper from " + URL_ENV + ", " + hosts + chroot, List.of(), isShared);
    }

    private static ZooKeeperServer inJvm(boolean isShared) throws Exception {
        ZooKeeperProcess.requireServerClasses();
        ZooKeeperProcess process = ZooKeeperProcess.startSingle();
        try {
            return new ZooKeeperServer(
                    Source.JVM,
                    process.hostPort(),
                    "",
                    "ZooKeeper " + version() + " (ZooKeeperServerMain in a child JVM), one node on "
                            + process.hostPort() + " " + ZooKeeperProcess.TIMING,
                    List.of(process),
                    isShared);
        } catch (RuntimeException e) {
            process.destroy();
            throw e;
        }
    }

    private static String version() {
        try {
            return (String) Class.forName("org.apache.zookeeper.Version")
                    .getMethod("getVersion")
                    .invoke(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return "?";
        }
    }

    /** {@code zookeeper://host:port,...[/chroot]}, the provider's URI for this server. */
    public String url() {
        return SCHEME + hosts + chroot;
    }

    /** {@code host:port,...[/chroot]}, a ZooKeeper connect string. */
    public String connectString() {
        return hosts + chroot;
    }

    public Source source() {
        return source;
    }

    /**
     * Stop, kill, pause and restart what this fixture runs itself ({@code jvm}): a single node, or
     * every member of an {@link #startEnsemble(int) ensemble} at once (its {@code start()} returns
     * once the members serve and agree on a leader). Each member on its own: {@link #replicaSet()}.
     */
    public Optional<ServerControl> control() {
        return Optional.ofNullable(control);
    }

    /** For an ensemble this fixture runs: each member's controls, who leads, a follower; empty otherwise. */
    public Optional<ReplicaSetControl> replicaSet() {
        return processes.size() < 2 ? Optional.empty() : Optional.of(replicas);
    }

    /**
     * The one address a client may be limited to, for the TCK's fault proxy: a single node's; for an
     * ensemble this fixture runs, its first member's. Empty for several servers named by {@code env}.
     */
    public Optional<InetSocketAddress> address() {
        String first = !processes.isEmpty() ? processes.get(0).hostPort() : hosts.contains(",") ? null : hosts;
        return first == null ? Optional.empty() : Endpoints.single("//" + first, 2181);
    }

    /** {@link #url()} limited to {@code address} (the fault proxy), chroot kept. */
    public String urlVia(InetSocketAddress address) {
        if (address().isEmpty()) {
            throw new UnsupportedOperationException("no single address to proxy: " + description());
        }
        return SCHEME + address.getHostString() + ":" + address.getPort() + chroot;
    }

    /** The members this fixture runs itself, each with its own controls (empty for {@code env}). */
    public List<Member> members() {
        return processes.stream().map(this::member).toList();
    }

    /** The member that says it leads, when exactly one running member does and every other running one follows. */
    public Optional<Member> leader() {
        return replicas.leaderProcess().map(this::member);
    }

    private Optional<ZooKeeperProcess> leaderProcess() {
        ZooKeeperProcess leader = null;
        for (ZooKeeperProcess p : processes) {
            if (!p.isRunning()) {
                continue;
            }
            String mode = p.mode();
            if ("leader".equals(mode)) {
                if (leader != null) {
                    return Optional.empty();
                }
                leader = p;
            } else if (!"follower".equals(mode)) {
                return Optional.empty();
            }
        }
        return Optional.ofNullable(leader);
    }

    /** A running member that follows, for crashing a follower. */
    public Optional<Member> follower() {
        return replicas.followerProcess().map(this::member);
    }

    /** Waits until every running member serves (standalone, or one leader and followers); throws when {@code timeout} passes first. */
    public void awaitHealthy(Duration timeout) {
        replicas.awaitHealthy(timeout);
    }

    private Member member(ZooKeeperProcess p) {
        return new Member(p.name(), p.hostPort(), p);
    }

    @Override
    protected String summary() {
        return description;
    }
}
