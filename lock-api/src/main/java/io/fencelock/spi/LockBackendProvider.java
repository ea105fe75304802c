package io.fencelock.spi;

import java.util.List;
import java.util.Map;

/**
 * Found through {@link java.util.ServiceLoader}: opens a {@link LockBackend} from a connection
 * string. Register an implementation in {@code META-INF/services/io.fencelock.spi.LockBackendProvider}
 * and with {@code provides} in {@code module-info.java}.
 */
public interface LockBackendProvider {

    /** A short name users can pick the provider by, e.g. {@code "postgres"}. */
    String name();

    /** The connection-string prefixes this provider accepts, e.g. {@code "jdbc:postgresql:"}. */
    List<String> uriPrefixes();

    /**
     * Opens a backend. {@code properties} holds provider-specific settings (schema, table, user,
     * password...). Validates everything before any I/O and throws {@link IllegalArgumentException}
     * for bad settings; never puts credentials into a message.
     */
    LockBackend open(String uri, Map<String, String> properties);

    default boolean accepts(String uri) {
        String lower = uri.toLowerCase(java.util.Locale.ROOT);
        return uriPrefixes().stream().anyMatch(p -> lower.startsWith(p.toLowerCase(java.util.Locale.ROOT)));
    }
}
