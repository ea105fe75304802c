package io.fencelock.tck;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * What a provider's TCK test supplies: a way to open backends on a real server. Each call of
 * {@link #openBackend()} must return an independent backend (its own connections), as another
 * process would open; the TCK closes what it opens.
 *
 * <p>The optional methods feed the fault properties. A fixture that leaves them out still runs
 * every fault property it can, and the guarantee matrix says which faults were not injected.
 */
public interface BackendFixture {

    /** A new backend on the fixture's server, with the provider's schema ready. */
    LockBackend openBackend();

    /** For reports: which backend, which version, where it came from. Never credentials. */
    String description();

    /**
     * The server's controls (stop, kill, pause, restart on the same data) when the fixture runs the
     * server itself; for a cluster, controls that act on every member at once.
     */
    default Optional<ServerControl> control() {
        return Optional.empty();
    }

    /** For a replicated backend (e.g. a 3-node etcd cluster): controls per member and who leads. */
    default Optional<ReplicaSetControl> replicaSet() {
        return Optional.empty();
    }

    /**
     * How a client in another JVM opens this backend through {@code ServiceLoader}: the paused
     * holder of {@code exclusionUnderHolderPauses} runs in a child JVM that it can freeze with
     * {@code SIGSTOP}. Holds credentials: the TCK passes it on stdin and never prints it.
     */
    default Optional<ClientConnection> clientConnection() {
        return Optional.empty();
    }

    /**
     * Why no client in another process can ever reach this backend (one that lives in this JVM), or
     * empty. The properties that need a holder in another JVM are then recorded as not run, also in
     * CI, where a missing {@link #clientConnection()} otherwise fails them.
     */
    default Optional<String> inThisJvmOnly() {
        return Optional.empty();
    }

    /**
     * The one address through which every request of a client can reach the server, for the TCK's
     * fault proxy; empty when the topology redirects clients elsewhere (e.g. a Redis Cluster
     * answers with its nodes' own addresses).
     */
    default Optional<InetSocketAddress> proxyTarget() {
        return Optional.empty();
    }

    /**
     * Like {@link #openBackend()}, but connecting to {@code via} (the TCK's fault proxy, which
     * forwards to {@link #proxyTarget()}) instead of the server. The backend's request timeouts
     * should be short (about 2 s): the proxy swallows requests and answers, and a faulted call
     * must end within the test's time.
     */
    default LockBackend openBackendVia(InetSocketAddress via) {
        throw new UnsupportedOperationException(description() + " cannot be reached through a proxy");
    }
}
