package io.fencelock.etcd;

import io.etcd.jetcd.Client;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.ProviderProperties;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What {@link EtcdLockBackend.Builder} was told, each value checked when it is set, before any I/O:
 * the client endpoints, the key prefix and the request timeout; and the jetcd client they make.
 */
final class EtcdSettings {
    static final String DEFAULT_PREFIX = "fencelock/";
    static final int MAX_PREFIX = 64;
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._\\-:/@+=#]{0," + (MAX_PREFIX - 1) + "}/");

    final List<URI> endpoints = new ArrayList<>();
    String keyPrefix = DEFAULT_PREFIX;
    Duration requestTimeout = Duration.ofSeconds(5);

    void endpoint(String e) {
        if (e == null || e.isBlank()) {
            throw new IllegalArgumentException("an etcd endpoint is empty");
        }
        // named by structure only: a user-info or parameter in it may be a secret
        ConnectionString parsed = ConnectionString.parse(e.trim()).requireValidPorts();
        URI u;
        try {
            u = URI.create(e.trim());
        } catch (IllegalArgumentException ex) {
            // no cause: its message quotes the endpoint
            throw new IllegalArgumentException("etcd endpoint '" + parsed + "' is not a URI");
        }
        if (!"http".equalsIgnoreCase(u.getScheme())
                || u.getHost() == null
                || u.getPort() <= 0
                || parsed.hasUserInfo()) {
            throw new IllegalArgumentException("etcd endpoint '" + parsed
                    + "' must be http://host:port (TLS and credentials are not supported yet)");
        }
        endpoints.add(u);
    }

    void keyPrefix(String keyPrefix) {
        this.keyPrefix = requireValidPrefix(keyPrefix);
    }

    void requestTimeout(Duration timeout) {
        this.requestTimeout = ProviderProperties.requirePositive("requestTimeout", timeout);
    }

    static String requireValidPrefix(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("keyPrefix " + (prefix == null ? "null" : "'" + prefix + "'")
                    + " is invalid: it must be 1 to " + MAX_PREFIX + " characters from A-Z a-z 0-9 . _ - : / @ + = #"
                    + " and end with '/'");
        }
        return prefix;
    }

    /** The endpoints as {@code host:port,...}, for messages and log lines. */
    String where() {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("no etcd endpoints given");
        }
        return String.join(
                ",",
                endpoints.stream().map(u -> u.getHost() + ":" + u.getPort()).toList());
    }

    /**
     * The jetcd client (no I/O until its first call). jetcd retries a failed call internally, for no
     * longer than the request timeout that bounds the wait for it anyway.
     */
    Client client() {
        return Client.builder()
                .endpoints(endpoints.toArray(URI[]::new))
                .connectTimeout(requestTimeout)
                .retryMaxDuration(requestTimeout)
                .keepaliveTime(Duration.ofSeconds(10))
                .keepaliveTimeout(Duration.ofSeconds(5))
                .build();
    }
}
