package io.fencelock.testservers.common;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The lifecycle every server fixture shares: a server is found by a {@link ServerLocator}, handed
 * out with a shutdown hook that ends it when the JVM exits, and ended at most once, by
 * {@link #close()} for a server of its own or by the hook for the shared one (other test classes
 * still use it, so {@code close()} leaves it running).
 */
public abstract class TestServer implements AutoCloseable {
    private final Runnable shutdown;
    private final boolean isShared;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile String locatedAs = ""; // set once by handOut(), before the server is handed out
    private volatile Thread shutdownHook;

    /**
     * @param shutdown ends the server and deletes its data (a no-op for someone else's server)
     * @param isShared whether this is the JVM's shared server, which {@link #close()} leaves running
     */
    protected TestServer(Runnable shutdown, boolean isShared) {
        this.shutdown = shutdown;
        this.isShared = isShared;
    }

    /** The located server, with how it was found and a shutdown hook (thread {@code fencelock-<kind>-shutdown}). */
    protected static <S extends TestServer> S handOut(ServerLocator.Located<S> located, String kind) {
        S server = located.server();
        TestServer base = server;
        base.locatedAs = located.description();
        base.shutdownHook = new Thread(base::shutDownQuietly, "fencelock-" + kind + "-shutdown");
        Runtime.getRuntime().addShutdownHook(base.shutdownHook);
        return server;
    }

    /** Whether this is the JVM's shared server, which other test classes use too. */
    protected final boolean isShared() {
        return isShared;
    }

    /** What the server is and where it runs (version, origin, address), without how it was found; never credentials. */
    protected abstract String summary();

    /** Work before the server ends, e.g. dropping the test databases on someone else's server. */
    protected void beforeShutdown() {}

    /**
     * Version, origin and address, then how it was found, e.g. "PostgreSQL 15.13 from
     * /usr/lib/postgresql/15/bin, 127.0.0.1:41234 [source 'binaries' (skipped env: ...)]"; never credentials.
     */
    public String description() {
        return summary() + " [" + locatedAs + "]";
    }

    /** Stop, kill, pause and restart, for a server this fixture runs itself; empty for the others. */
    public Optional<ServerControl> control() {
        return Optional.empty();
    }

    /** For a replicated server this fixture runs (e.g. a cluster): controls per member and who leads. */
    public Optional<ReplicaSetControl> replicaSet() {
        return Optional.empty();
    }

    /** The one address every request of a client goes to, for the TCK's fault proxy; empty where there is none. */
    public Optional<InetSocketAddress> address() {
        return Optional.empty();
    }

    /**
     * Ends a server of its own and deletes its data. The shared server ignores this: other test
     * classes still use it, and a shutdown hook ends it.
     */
    @Override
    public void close() {
        if (isShared) {
            return;
        }
        Thread hook = shutdownHook;
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or about to: it does the same
            }
        }
        shutDown();
    }

    private void shutDown() {
        if (closed.compareAndSet(false, true)) {
            try {
                beforeShutdown();
            } finally {
                shutdown.run();
            }
        }
    }

    private void shutDownQuietly() {
        try {
            shutDown();
        } catch (RuntimeException e) {
            System.err.println("fencelock: stopping " + summary() + " failed: " + e);
        }
    }

    /** Whether an optional source's library is there: third parties may leave it off their test class path. */
    protected static boolean onClassPath(String className) {
        try {
            Class.forName(className, false, TestServer.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    @Override
    public String toString() {
        return description();
    }
}
