package io.fencelock.tck.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy between one client's connections and a real server (PostgreSQL, MariaDB, Redis,
 * etcd's gRPC, MongoDB's wire protocol: it never looks at the bytes) that injects connection
 * faults while the client runs: {@link #latency(Duration)}, {@link #blackhole()},
 * {@link #dropResponses()}, {@link #reset()} and {@link #refuse()}, undone by {@link #heal()}.
 * A fault applies at once to the open connections and to new ones.
 *
 * <p>The TCK has its own rather than Toxiproxy because Toxiproxy is a separate Go server
 * process to install and drive over HTTP, and it has no "forward the request, drop the response"
 * fault in this form; yet that fault is the one that makes outcomes indeterminate (the server
 * granted the lock, the client never heard), which is what a lock's fault properties are about.
 *
 * <p>How faults are modelled:
 * <ul>
 *   <li>Bytes that a fault discards are lost for good, as on a partitioned network: after
 *       {@link #heal()} a surviving connection forwards new bytes only, so the protocol stream may
 *       be corrupted and the client library has to cope.</li>
 *   <li>The fault is checked when a chunk is read and again when it is due to be written, so
 *       bytes in flight (delayed by {@link #latency}) are lost too when a blackhole starts.</li>
 *   <li>A connection accepted during a blackhole is connected upstream at once (the server sees
 *       a connection that sends nothing); its bytes are discarded until healed.</li>
 *   <li>The end of a stream is not subject to faults: when one side closes, what is already
 *       queued towards the other side is delivered (or discarded) and both sides are closed.</li>
 *   <li>An I/O error on either side (or no server to connect to) resets the client's connection
 *       and closes the server's.</li>
 * </ul>
 *
 * <p>Threads: one acceptor, and per connection a reader and a writer per direction (the writer
 * holds back delayed chunks, the reader keeps the socket drained), all daemon platform threads.
 * A direction's queue is bounded, so a slow or delayed destination pushes back on the sender as
 * a real network would. {@link #close()} ends and joins them all.
 */
public final class FaultProxy implements AutoCloseable {
    private static final int CHUNK_SIZE = 16 * 1024;
    /** Chunks a direction may hold in flight before its reader blocks: 4 MiB at most. */
    private static final int QUEUE_CAPACITY = 256;

    private static final int UPSTREAM_CONNECT_TIMEOUT_MILLIS = 5_000;
    /** After an unexpected accept failure (e.g. out of file descriptors): retry, but not in a busy loop. */
    private static final long ACCEPT_RETRY_MILLIS = 100;

    private static final Duration CLOSE_JOIN_TIMEOUT = Duration.ofSeconds(10);

    private enum Kind {
        PASS,
        LATENCY,
        BLACKHOLE,
        DROP_RESPONSES,
        REFUSE
    }

    /** The current fault; {@code delay} is only used by LATENCY. */
    private record Fault(Kind kind, Duration delay) {
        static final Fault PASS = new Fault(Kind.PASS, Duration.ZERO);

        boolean discards(Direction direction) {
            return kind == Kind.BLACKHOLE || (kind == Kind.DROP_RESPONSES && direction == Direction.RESPONSES);
        }

        long delayNanos() {
            return kind == Kind.LATENCY ? delay.toNanos() : 0;
        }

        String describe() {
            return switch (kind) {
                case PASS -> "pass";
                case LATENCY -> "latency " + delay.toMillis() + "ms";
                case BLACKHOLE -> "blackhole";
                case DROP_RESPONSES -> "drop responses";
                case REFUSE -> "refuse";
            };
        }
    }

    private enum Direction {
        REQUESTS("c>s"),
        RESPONSES("s>c");

        final String threadTag;

        Direction(String threadTag) {
            this.threadTag = threadTag;
        }
    }

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final InetSocketAddress address;
    private final String threadPrefix;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong discarded = new AtomicLong();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private volatile Fault fault = Fault.PASS;

    private FaultProxy(InetSocketAddress target, ServerSocket listener) {
        this.target = target;
        this.listener = listener;
        // the literal address, not "localhost": a client resolving that name may try ::1 first, where nothing listens
        this.address = new InetSocketAddress(listener.getInetAddress().getHostAddress(), listener.getLocalPort());
        this.threadPrefix = "fault-proxy-" + listener.getLocalPort();
    }

    /** A proxy to {@code target}, listening on a free port of 127.0.0.1, forwarding everything until told otherwise. */
    public static FaultProxy start(InetSocketAddress target) {
        Objects.requireNonNull(target, "target");
        ServerSocket listener = null;
        try {
            InetSocketAddress resolved = target.isUnresolved() ? reachable(target) : target;
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            FaultProxy proxy = new FaultProxy(resolved, listener);
            proxy.startThread("accept", proxy::acceptLoop);
            return proxy;
        } catch (IOException e) {
            closeQuietly(listener);
            throw new UncheckedIOException("cannot listen on 127.0.0.1 for a proxy to " + target, e);
        }
    }

    /**
     * The first address of an unresolved target's host that accepts a connection: a name like
     * {@code localhost} resolves to ::1 and 127.0.0.1, and the server may listen on one of them only.
     */
    private static InetSocketAddress reachable(InetSocketAddress target) throws IOException {
        IOException last = null;
        for (InetAddress candidate : InetAddress.getAllByName(target.getHostString())) {
            InetSocketAddress address = new InetSocketAddress(candidate, target.getPort());
            try (Socket probe = new Socket()) {
                probe.connect(address, UPSTREAM_CONNECT_TIMEOUT_MILLIS);
                return address;
            } catch (IOException e) {
                last = e;
            }
        }
        throw last != null ? last : new IOException("no address for " + target.getHostString());
    }

    /** Where clients connect: 127.0.0.1 and the proxy's port. */
    public InetSocketAddress address() {
        return address;
    }

    /** The server the proxy forwards to. */
    public InetSocketAddress target() {
        return target;
    }

    /** Forward everything, on the surviving connections and new ones (bytes lost before stay lost). */
    public void heal() {
        fault = Fault.PASS;
    }

    /** Delay every chunk, in each direction, by {@code delay} after it was read; the order is kept. */
    public void latency(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative: " + delay);
        }
        fault = new Fault(Kind.LATENCY, delay);
    }

    /** Discard the bytes of both directions, keeping the sockets open, as a network partition would. */
    public void blackhole() {
        fault = new Fault(Kind.BLACKHOLE, Duration.ZERO);
    }

    /** Forward requests but discard responses: the server acts, the client never hears the outcome. */
    public void dropResponses() {
        fault = new Fault(Kind.DROP_RESPONSES, Duration.ZERO);
    }

    /**
     * Once: reset every current connection (RST to the client, close to the server). The fault
     * stays as it was, so new connections work unless {@link #refuse()} or another fault is on.
     */
    public void reset() {
        resetAll();
    }

    /** Reset every current connection, and every new one right after accepting it, until {@link #heal()}. */
    public void refuse() {
        // The fault first, then the reset: a connection registered meanwhile is either seen by
        // resetAll() or sees REFUSE itself (see acceptLoop).
        fault = new Fault(Kind.REFUSE, Duration.ZERO);
        resetAll();
    }

    /** The current fault for reports: "pass", "latency 300ms", "blackhole", "drop responses" or "refuse". */
    public String mode() {
        return fault.describe();
    }

    /** Client connections accepted since the start, including those reset at once by {@link #refuse()}. */
    public int connectionsAccepted() {
        return accepted.get();
    }

    /** Bytes a fault has discarded since the start, both directions: what a client sent into a blackhole, for one. */
    public long bytesDiscarded() {
        return discarded.get();
    }

    /** Client connections currently open through the proxy. */
    public int openConnections() {
        return connections.size();
    }

    /** Closes the listener and every connection and joins the proxy's threads; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closeQuietly(listener);
        for (Connection connection : List.copyOf(connections)) {
            connection.close(false);
        }
        joinThreads();
    }

    @Override
    public String toString() {
        return "FaultProxy " + address.getAddress().getHostAddress() + ":" + address.getPort() + " -> " + target + " ("
                + mode() + ")";
    }

    private void resetAll() {
        for (Connection connection : List.copyOf(connections)) {
            connection.close(true);
        }
    }

    private void acceptLoop() {
        int id = 0;
        while (!closed.get() && !listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                if (!closed.get() && !pauseAfterAcceptFailure()) {
                    return;
                }
                continue;
            }
            accepted.incrementAndGet();
            Connection connection = new Connection(++id, client);
            connections.add(connection);
            // Registered first, checked second: refuse() and close() set their flag first and
            // look at the registered connections second, so one of the two sides catches it.
            if (closed.get()) {
                connection.close(false);
            } else if (fault.kind() == Kind.REFUSE) {
                connection.close(true);
            } else {
                connection.start();
            }
        }
    }

    /** False when interrupted: nobody should interrupt the acceptor, so it stops taking connections. */
    private boolean pauseAfterAcceptFailure() {
        try {
            TimeUnit.MILLISECONDS.sleep(ACCEPT_RETRY_MILLIS);
            return true;
        } catch (InterruptedException e) {
            closeQuietly(listener);
            return false;
        }
    }

    private void startThread(String name, Runnable work) {
        Thread thread = new Thread(
                () -> {
                    try {
                        work.run();
                    } finally {
                        threads.remove(Thread.currentThread());
                    }
                },
                threadPrefix + "-" + name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private void joinThreads() {
        long deadline = System.nanoTime() + CLOSE_JOIN_TIMEOUT.toNanos();
        // Loop: a connection's first thread may have started its others just before being closed.
        while (!threads.isEmpty()) {
            for (Thread thread : List.copyOf(threads)) {
                if (thread == Thread.currentThread()) {
                    threads.remove(thread); // close() called from a proxy thread: it ends by itself
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return; // daemon threads: they cannot keep the JVM alive
                }
                try {
                    thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception expected) {
            // closing is best effort: the socket may already be broken
        }
    }

    /** One chunk of bytes in flight, or the end of its stream (data == null), due at {@code dueNanos}. */
    private record Chunk(byte[] data, long dueNanos) {
        boolean isEnd() {
            return data == null;
        }
    }

    /** A client connection, its server connection and the four threads that pump between them. */
    private final class Connection {
        private final String name;
        private final Socket client;
        private final Socket server = new Socket();
        private final AtomicBoolean connectionClosed = new AtomicBoolean();
        private final BlockingQueue<Chunk> toServer = new LinkedBlockingQueue<>(QUEUE_CAPACITY);
        private final BlockingQueue<Chunk> toClient = new LinkedBlockingQueue<>(QUEUE_CAPACITY);
        private final Set<Thread> pumps = ConcurrentHashMap.newKeySet();

        Connection(int id, Socket client) {
            this.name = "c" + id;
            this.client = client;
        }

        void start() {
            startThread(name + "-" + Direction.REQUESTS.threadTag + "-read", this::connectAndPumpRequests);
        }

        /** Connects upstream off the acceptor thread (a slow server must not hold up other clients), then pumps. */
        private void connectAndPumpRequests() {
            try {
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(target, UPSTREAM_CONNECT_TIMEOUT_MILLIS);
            } catch (IOException e) {
                close(true); // as if the server had refused: the client sees a reset
                return;
            }
            if (connectionClosed.get()) {
                return;
            }
            startThread(
                    name + "-" + Direction.REQUESTS.threadTag + "-write",
                    () -> write(toServer, server, Direction.REQUESTS));
            startThread(
                    name + "-" + Direction.RESPONSES.threadTag + "-write",
                    () -> write(toClient, client, Direction.RESPONSES));
            startThread(
                    name + "-" + Direction.RESPONSES.threadTag + "-read",
                    () -> read(server, toClient, Direction.RESPONSES));
            read(client, toServer, Direction.REQUESTS);
        }

        private void read(Socket source, BlockingQueue<Chunk> queue, Direction direction) {
            if (!registerPump()) {
                return;
            }
            byte[] buffer = new byte[CHUNK_SIZE];
            try {
                InputStream in = source.getInputStream();
                while (true) {
                    int n = in.read(buffer);
                    Fault now = fault;
                    long due = System.nanoTime() + now.delayNanos();
                    if (n < 0) {
                        queue.put(new Chunk(null, due));
                        return;
                    }
                    // Discarded as soon as read: a partition loses what it carried.
                    if (now.discards(direction)) {
                        discarded.addAndGet(n);
                    } else {
                        queue.put(new Chunk(Arrays.copyOf(buffer, n), due));
                    }
                }
            } catch (IOException e) {
                close(true); // silent: a broken side, or our own close()
            } catch (InterruptedException e) {
                // close() stops a reader blocked on a full queue this way
            }
        }

        private void write(BlockingQueue<Chunk> queue, Socket destination, Direction direction) {
            if (!registerPump()) {
                return;
            }
            try {
                OutputStream out = destination.getOutputStream();
                while (true) {
                    Chunk chunk = queue.take();
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    if (chunk.isEnd()) {
                        close(false);
                        return;
                    }
                    // Checked again when due: bytes still in flight are lost too when a fault starts.
                    if (fault.discards(direction)) {
                        discarded.addAndGet(chunk.data().length);
                    } else {
                        out.write(chunk.data());
                        out.flush();
                    }
                }
            } catch (IOException e) {
                close(true);
            } catch (InterruptedException e) {
                // close() stops a writer waiting for a chunk this way
            }
        }

        /** False when the connection is already closed: close() may have interrupted the pumps before this one registered. */
        private boolean registerPump() {
            pumps.add(Thread.currentThread());
            return !connectionClosed.get();
        }

        /** Closes both sides once; {@code abrupt} resets the client's side (RST) instead of a normal close. */
        void close(boolean abrupt) {
            if (!connectionClosed.compareAndSet(false, true)) {
                return;
            }
            connections.remove(this);
            if (abrupt) {
                try {
                    client.setSoLinger(true, 0); // a close with linger 0 sends RST, not FIN
                } catch (IOException alreadyBroken) {
                    // the reset is moot then
                }
            }
            closeQuietly(client);
            closeQuietly(server); // also aborts a connect() in progress
            for (Thread pump : pumps) {
                // Closed sockets end blocked reads and writes; this ends waits on a queue or a delayed chunk.
                pump.interrupt();
            }
        }
    }
}
