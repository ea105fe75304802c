package io.fencelock.testservers.common;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The TCK's {@link BackendFixture} on a {@link TestServer}: the description, the controls and the
 * proxy target come from the server; the provider's test says only how its backend is opened, how a
 * client in another JVM opens it, and how it is opened through the fault proxy. Immutable: each
 * {@code with...} returns a new fixture.
 */
public final class ServerFixture implements BackendFixture {
    /** Through the fault proxy a swallowed request must end quickly: the backend's timeouts there. */
    public static final Duration PROXIED_TIMEOUT = Duration.ofSeconds(2);

    private final TestServer server;
    private final Supplier<LockBackend> open;
    private final ClientConnection connection; // null: no client in another JVM
    private final Function<InetSocketAddress, LockBackend> openVia; // null: not through the proxy

    private ServerFixture(
            TestServer server,
            Supplier<LockBackend> open,
            ClientConnection connection,
            Function<InetSocketAddress, LockBackend> openVia) {
        this.server = Objects.requireNonNull(server, "server");
        this.open = Objects.requireNonNull(open, "open");
        this.connection = connection;
        this.openVia = openVia;
    }

    /** A fixture whose {@link #openBackend()} is {@code open} on {@code server}: no client connection, no proxy. */
    public static ServerFixture on(TestServer server, Supplier<LockBackend> open) {
        return new ServerFixture(server, open, null, null);
    }

    /** The same, with {@code connection} for the holders in child JVMs (the same records as {@link #openBackend()}). */
    public ServerFixture withClient(ClientConnection connection) {
        return new ServerFixture(server, open, Objects.requireNonNull(connection, "connection"), openVia);
    }

    /**
     * The same, reachable through the fault proxy at the server's {@link TestServer#address()}:
     * {@code openVia} opens the backend through the given address only, with short timeouts
     * ({@link #PROXIED_TIMEOUT}).
     */
    public ServerFixture withProxy(Function<InetSocketAddress, LockBackend> openVia) {
        return new ServerFixture(server, open, connection, Objects.requireNonNull(openVia, "openVia"));
    }

    @Override
    public LockBackend openBackend() {
        return open.get();
    }

    @Override
    public String description() {
        return server.description();
    }

    @Override
    public Optional<ServerControl> control() {
        return server.control();
    }

    @Override
    public Optional<ReplicaSetControl> replicaSet() {
        return server.replicaSet();
    }

    @Override
    public Optional<ClientConnection> clientConnection() {
        return Optional.ofNullable(connection);
    }

    /** The server's one address, when the backend can be opened through the proxy at all. */
    @Override
    public Optional<InetSocketAddress> proxyTarget() {
        return openVia == null ? Optional.empty() : server.address();
    }

    @Override
    public LockBackend openBackendVia(InetSocketAddress via) {
        if (openVia == null) {
            return BackendFixture.super.openBackendVia(via);
        }
        return openVia.apply(via);
    }

    @Override
    public String toString() {
        return "ServerFixture[" + description() + "]";
    }
}
