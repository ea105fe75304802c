package io.fencelock.testservers.common;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for the servers the fixtures start, with two promises a kernel-chosen free port
 * ({@code new ServerSocket(0)}, closed at once) does not keep:
 * <ul>
 *   <li><b>Never the same port twice in one JVM.</b> One server often needs several (ZooKeeper's client,
 *       quorum and election ports; etcd's client and peer ports): probing the kernel once per port,
 *       each probe closing its socket before the next, can return one port twice. A ZooKeeper member
 *       then had its election port on its own client port, could not bind it, and exited a few seconds
 *       after it served, leaving an ensemble of two.</li>
 *   <li><b>Never a port another JVM on the machine handed out and still runs.</b> Test JVMs run side by
 *       side (surefire's forks, Maven's parallel modules). A server its fault stopped leaves its port
 *       unbound until it starts again, so a bind probe alone would give that port to a server of the other
 *       JVM, and the restart would fail to bind. Each port handed out is locked in a file of its own under
 *       {@code java.io.tmpdir} (an advisory {@link FileLock}) for as long as this JVM lives; the operating
 *       system drops the lock when the JVM ends, however it ends.</li>
 *   <li><b>Below the kernel's ephemeral range.</b> The restart faults stop a server and start it again
 *       on the same port. Meanwhile its clients reconnect and its cluster's members call it; an
 *       outgoing connection is given a local port from the ephemeral range, so the stopped server's
 *       port, were it there, could be taken (or a client could connect to itself on it) and the restart
 *       fail to bind. The kernel never gives an outgoing connection a port below that range.</li>
 * </ul>
 * Each port is free when handed out (this JVM binds it once to be sure); another process could still
 * bind it before the server does, which the server's start then reports.
 */
public final class LoopbackPorts {
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    /** Ports below this are left to the services a machine runs (databases' defaults among them). */
    static final int LOWEST = 10_000;
    /** Fewer ports than this between {@link #LOWEST} and the ephemeral range: ask the kernel instead. */
    private static final int MIN_SPAN = 2_000;

    private static final int ATTEMPTS = 500;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();
    /** One lock file per port, shared by every JVM of this user on the machine. */
    private static final Path RESERVATIONS =
            Path.of(System.getProperty("java.io.tmpdir"), "fencelock-ports-" + System.getProperty("user.name"));
    /** The channels of this JVM's reservations: a lock lives as long as its channel is open. */
    private static final Queue<FileChannel> RESERVED = new ConcurrentLinkedQueue<>();

    private LoopbackPorts() {}

    /** A loopback port no one listens on right now and this JVM has not handed out before. */
    public static int next() throws IOException {
        Optional<Integer> ephemeralLow = ephemeralRangeStart();
        if (ephemeralLow.isEmpty() || ephemeralLow.get() - LOWEST < MIN_SPAN) {
            return kernelChosen();
        }
        int high = ephemeralLow.get(); // exclusive
        for (int i = 0; i < ATTEMPTS; i++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, high);
            if (HANDED_OUT.add(port) && reserve(port) && bindable(port)) {
                return port;
            }
        }
        throw new IOException("no free loopback port in [" + LOWEST + ", " + high + ") after " + ATTEMPTS
                + " random tries (" + HANDED_OUT.size() + " handed out by this JVM)");
    }

    /** The first port of the kernel's ephemeral range, where the kernel says (Linux); empty elsewhere. */
    static Optional<Integer> ephemeralRangeStart() {
        try {
            // read by lines: Files.readString trusts the size a /proc file reports (none) and returns one byte
            String[] range = Files.readAllLines(EPHEMERAL_RANGE).get(0).trim().split("\\s+");
            return Optional.of(Integer.parseInt(range[0]));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Where the kernel's range is unknown or leaves no room below it: its own choice, still never twice. */
    private static int kernelChosen() throws IOException {
        for (int i = 0; i < ATTEMPTS; i++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                if (HANDED_OUT.add(socket.getLocalPort()) && reserve(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            }
        }
        throw new IOException(
                "the kernel offered only ports this JVM or another one handed out already, " + ATTEMPTS + " times");
    }

    /**
     * Locks {@code port}'s file for the rest of this JVM's life; false when another JVM holds it. The file
     * is never deleted: a JVM could lock a file another one is about to delete, and then two would hold
     * the same port in different files.
     */
    static boolean reserve(int port) throws IOException {
        Files.createDirectories(RESERVATIONS);
        FileChannel channel = FileChannel.open(
                RESERVATIONS.resolve(port + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            if (channel.tryLock() != null) {
                RESERVED.add(channel);
                return true;
            }
        } catch (OverlappingFileLockException e) {
            // this JVM holds it already (HANDED_OUT keeps that from happening): taken all the same
        }
        channel.close();
        return false;
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
