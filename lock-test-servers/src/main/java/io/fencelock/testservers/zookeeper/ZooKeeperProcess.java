package io.fencelock.testservers.zookeeper;

import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.ThrowawayServers;
import java.io.IOException;
import java.io.InputStream;
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

/**
 * One ZooKeeper server run from the {@code org.apache.zookeeper:zookeeper} artifact on this JVM's class
 * path, in a child JVM of its own ({@code ZooKeeperServerMain} for a single node, {@code QuorumPeerMain}
 * for a member of an ensemble), so that it can be stopped, crashed, frozen and started again on the
 * same data directory and ports. Its zxids (the fencing tokens) and its sessions live in the
 * transaction log, which ZooKeeper fsyncs before it acknowledges a write, so they survive a SIGKILL.
 *
 * <p>Servers run with {@code tickTime=100}: session expiry is checked per tick and the smallest
 * session timeout is two ticks, so the TCK's sub-second TTLs map to sessions of their own length.
 * {@code maxSessionTimeout=60000} lets TTLs up to a minute through (ZooKeeper's default would be
 * 20 ticks, 2 s here). Election and sync limits are in ticks: 5 s to join, 2 s to stay in sync.
 * An ensemble member's leader election waits at most {@link #MAX_NOTIFICATION_MILLIS} between rounds of
 * votes, and logs its votes (INFO of {@code FastLeaderElection}) for a failing test to show.
 */
final class ZooKeeperProcess extends ServerProcess {
    static final int TICK_MILLIS = 100;
    static final int MAX_SESSION_MILLIS = 60_000;
    /**
     * ZooKeeper's fast leader election doubles its wait for votes, from 200 ms up to 60 s, each round that
     * brings no decision (votes lost while a member's election port is not yet listening, or a member
     * stalled on a busy machine): left at 60 s, one unlucky election outlasts a test's 30 s wait for a new
     * leader. Twenty ticks keep the retries in step with the ensemble's own 100 ms time.
     */
    static final int MAX_NOTIFICATION_MILLIS = 20 * TICK_MILLIS;
    /** The settings every server of this fixture runs with, for descriptions. */
    static final String TIMING =
            "(tickTime " + TICK_MILLIS + " ms, sessions 200 ms to " + MAX_SESSION_MILLIS / 1000 + " s)";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final int PROBE_TIMEOUT_MILLIS = 500;

    private final String name;
    private final int clientPort;
    private final int quorumPort;
    private final int electionPort;
    private final boolean member; // of an ensemble: ready without a quorum
    private String mainClass = "";

    private ZooKeeperProcess(Path dir, String name, int clientPort, int quorumPort, int electionPort, boolean member) {
        super("ZooKeeper " + name, dir, "zookeeper.log", START_TIMEOUT, STOP_TIMEOUT);
        this.name = name;
        this.clientPort = clientPort;
        this.quorumPort = quorumPort;
        this.electionPort = electionPort;
        this.member = member;
    }

    /** Whether the server's classes are on this JVM's class path (they come with the client artifact, plus two it leaves to its users). */
    static void requireServerClasses() throws ServerLocator.Unavailable {
        try {
            for (String name : SERVER_CLASSES.subList(0, SERVER_CLASSES.size() - 1)) {
                Class.forName(name, false, ZooKeeperProcess.class.getClassLoader());
            }
        } catch (ClassNotFoundException | LinkageError e) {
            throw new ServerLocator.Unavailable("the ZooKeeper server's classes are not on the class path ("
                    + e.getMessage() + "): org.apache.zookeeper:zookeeper with metrics-core and snappy-java");
        }
    }

    /** Classes the server needs at run time (the last one, a logging back end, only if present), by the jar each comes from. */
    private static final List<String> SERVER_CLASSES = List.of(
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            "org.apache.jute.Record",
            "org.slf4j.LoggerFactory",
            "com.codahale.metrics.Reservoir",
            "org.xerial.snappy.SnappyInputStream",
            "org.apache.commons.io.FileUtils",
            "org.slf4j.simple.SimpleLogger");

    /**
     * The server's class path: the jars this JVM loaded those classes from, so that it works wherever the
     * fixture runs (under Surefire, or inside Maven's own JVM for the comparison run, whose
     * {@code java.class.path} is Maven's).
     */
    static String serverClassPath() {
        java.util.LinkedHashSet<String> jars = new java.util.LinkedHashSet<>();
        for (String name : SERVER_CLASSES) {
            try {
                Class<?> c = Class.forName(name, false, ZooKeeperProcess.class.getClassLoader());
                java.security.CodeSource source = c.getProtectionDomain().getCodeSource();
                if (source != null && source.getLocation() != null) {
                    jars.add(Path.of(source.getLocation().toURI()).toString());
                }
            } catch (ClassNotFoundException | LinkageError | java.net.URISyntaxException e) {
                // a logging back end is optional; the others are checked by requireServerClasses
            }
        }
        return String.join(java.io.File.pathSeparator, jars);
    }

    /** A standalone server, started and serving. */
    static ZooKeeperProcess startSingle() throws IOException {
        ZooKeeperProcess p = prepare("zk1", false);
        try {
            p.configure(List.of(p), 1);
            p.start();
            return p;
        } catch (IOException | RuntimeException e) {
            p.destroy();
            throw e;
        }
    }

    /** {@code size} members on loopback, all started (each is "ready" once its client port listens), not yet checked for a leader. */
    static List<ZooKeeperProcess> startEnsemble(int size) throws IOException {
        List<ZooKeeperProcess> members = new ArrayList<>();
        try {
            for (int i = 1; i <= size; i++) {
                members.add(prepare("zk" + i, true));
            }
            for (int i = 0; i < size; i++) {
                members.get(i).configure(members, i + 1);
            }
            for (ZooKeeperProcess m : members) {
                m.start();
            }
            return members;
        } catch (IOException | RuntimeException e) {
            members.forEach(ZooKeeperProcess::destroy);
            throw e;
        }
    }

    private static ZooKeeperProcess prepare(String name, boolean member) throws IOException {
        Path dir = newDirectory("zookeeper");
        try {
            return new ZooKeeperProcess(
                    dir,
                    name,
                    ThrowawayServers.freeLoopbackPort(),
                    ThrowawayServers.freeLoopbackPort(),
                    ThrowawayServers.freeLoopbackPort(),
                    member);
        } catch (IOException | RuntimeException e) {
            ThrowawayServers.deleteRecursively(dir);
            throw e;
        }
    }

    private void configure(List<ZooKeeperProcess> ensemble, int myid) throws IOException {
        Path data = Files.createDirectories(dir().resolve("data"));
        List<String> cfg = new ArrayList<>(List.of(
                "tickTime=" + TICK_MILLIS,
                "initLimit=50",
                "syncLimit=20",
                "dataDir=" + data,
                "clientPort=" + clientPort,
                "clientPortAddress=127.0.0.1",
                "maxClientCnxns=0",
                "minSessionTimeout=" + 2 * TICK_MILLIS,
                "maxSessionTimeout=" + MAX_SESSION_MILLIS,
                "admin.enableServer=false",
                "4lw.commands.whitelist=srvr,ruok",
                "autopurge.purgeInterval=0"));
        if (member) {
            Files.writeString(data.resolve("myid"), Integer.toString(myid), StandardCharsets.US_ASCII);
            for (int i = 0; i < ensemble.size(); i++) {
                ZooKeeperProcess m = ensemble.get(i);
                cfg.add("server." + (i + 1) + "=127.0.0.1:" + m.quorumPort + ":" + m.electionPort);
            }
            mainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
        } else {
            mainClass = "org.apache.zookeeper.server.ZooKeeperServerMain";
        }
        Files.write(dir().resolve("zoo.cfg"), cfg, StandardCharsets.UTF_8);
    }

    String name() {
        return name;
    }

    /** {@code 127.0.0.1:port}, as a ZooKeeper connect string names a server. */
    String hostPort() {
        return "127.0.0.1:" + clientPort;
    }

    int clientPort() {
        return clientPort;
    }

    @Override
    protected List<String> command() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(
                java,
                "-Xms32m",
                "-Xmx320m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.jmx.log4j.disable=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.quorum.FastLeaderElection=info",
                "-Dzookeeper.fastleader.maxNotificationInterval=" + MAX_NOTIFICATION_MILLIS,
                "-cp",
                serverClassPath(),
                mainClass,
                dir().resolve("zoo.cfg").toString());
    }

    /**
     * A single node serves when it answers {@code srvr} as standalone; an ensemble member as soon as
     * its client port listens (it serves only once a quorum has formed, which needs the others).
     */
    @Override
    protected boolean serves(Process process) {
        return member ? listening() : "standalone".equals(probeMode());
    }

    private boolean listening() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), clientPort), PROBE_TIMEOUT_MILLIS);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * What this server says it is ({@code standalone}, {@code leader}, {@code follower}) through the
     * {@code srvr} four-letter word, or null when it does not answer or does not serve (no quorum).
     */
    String mode() {
        return isRunning() ? probeMode() : null;
    }

    private String probeMode() {
        String answer = fourLetterWord("srvr");
        if (answer == null) {
            return null;
        }
        for (String line : answer.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return line.substring("Mode: ".length()).trim();
            }
        }
        return null;
    }

    private String fourLetterWord(String word) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), clientPort), PROBE_TIMEOUT_MILLIS);
            socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper " + name + " on " + hostPort();
    }
}
