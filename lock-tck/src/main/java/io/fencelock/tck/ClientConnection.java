package io.fencelock.tck;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * A connection string and provider properties, as {@code LockClient.builder().uri(..).property(..)}
 * takes them: how a client in another process opens a fixture's backend. May hold credentials,
 * so {@link #toString()} shows neither.
 */
public record ClientConnection(String uri, Map<String, String> properties) {

    public ClientConnection {
        properties = Map.copyOf(properties);
    }

    /**
     * A connection with {@code user} and {@code password} (each left out when null) added to
     * {@code properties}: what a JDBC provider takes.
     */
    public static ClientConnection withCredentials(
            String uri, String user, String password, Map<String, String> properties) {
        Map<String, String> all = new HashMap<>(properties);
        if (user != null) {
            all.put("user", user);
        }
        if (password != null) {
            all.put("password", password);
        }
        return new ClientConnection(uri, all);
    }

    /** Opens the backend through the provider {@code ServiceLoader} finds for the URI. */
    public LockBackend open() {
        for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
            if (provider.accepts(uri)) {
                return provider.open(uri, properties);
            }
        }
        throw new IllegalStateException("no LockBackendProvider on the class path accepts this connection string");
    }

    @Override
    public String toString() {
        return "ClientConnection[uri and " + properties.size() + " properties hidden]";
    }
}
