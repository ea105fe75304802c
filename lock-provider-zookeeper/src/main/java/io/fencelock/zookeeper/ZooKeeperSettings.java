package io.fencelock.zookeeper;

import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.ProviderProperties;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * What {@link ZooKeeperLockBackend.Builder} was told, each value checked when it is set, before any
 * I/O: the servers, the chroot, the base path and the request timeout; a {@code zookeeper://} URI
 * parsed into them; and the client configuration they make.
 */
final class ZooKeeperSettings {
    static final String DEFAULT_BASE_PATH = "/fencelock";
    static final int MAX_BASE_PATH = 128;
    private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9_\\-:@+=#][A-Za-z0-9._\\-:@+=#]*)+");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.\\-\\[\\]:]+");

    final List<String> servers = new ArrayList<>();
    String chroot = "";
    String basePath = DEFAULT_BASE_PATH;
    Duration requestTimeout = Duration.ofSeconds(5);
    /** How late the leader may hear of a member's request; null: half the server's minSessionTimeout. */
    Duration leaderLag;

    /** {@code host:port}; the message names neither a user-info nor a password. */
    void server(String s) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("a ZooKeeper server is empty");
        }
        String t = s.trim();
        int colon = t.lastIndexOf(':');
        boolean ok = colon > 0
                && !t.contains("@")
                && !t.contains("/")
                && HOST.matcher(t.substring(0, colon)).matches();
        int port = -1;
        if (ok) {
            try {
                port = Integer.parseInt(t.substring(colon + 1));
            } catch (NumberFormatException e) {
                ok = false;
            }
        }
        if (!ok || port < 1 || port > 65535) {
            String shown = t.contains("@") ? "***" : t;
            String portPart = colon > 0 && !t.contains("@") ? "port '" + t.substring(colon + 1) + "' of " : "";
            throw new IllegalArgumentException(portPart + "ZooKeeper server '" + shown
                    + "' is invalid: host:port with a port from 1 to 65535 (no credentials)");
        }
        servers.add(t);
    }

    void chroot(String chroot) {
        this.chroot = chroot == null || chroot.isEmpty() ? "" : requireValidPath("chroot", chroot);
    }

    void basePath(String basePath) {
        this.basePath = requireValidPath("basePath", basePath);
    }

    void requestTimeout(Duration timeout) {
        this.requestTimeout = ProviderProperties.requirePositive("requestTimeout", timeout);
    }

    void leaderLag(Duration lag) {
        this.leaderLag = ProviderProperties.requirePositive("leaderLag", lag);
    }

    /**
     * {@code zookeeper://host:port[,host:port...][/chroot]}: the servers and the chroot. A user-info or
     * parameters are refused (no authentication yet), the URI named only in its redacted form.
     */
    void uri(String uri) {
        ConnectionString parsed = ConnectionString.parse(uri);
        if (parsed.hasUserInfo()) {
            throw new IllegalArgumentException("ZooKeeper URI " + parsed + " has a user-info (user:password@):"
                    + " credentials are not supported yet");
        }
        String hosts = parsed.hosts();
        // without a user-info the URI is the scheme, the hosts, then the rest
        String rest = uri.substring(uri.indexOf("//") + 2 + hosts.length());
        if (rest.chars().anyMatch(c -> c == '?' || c == ';' || c == '#')) {
            throw new IllegalArgumentException("ZooKeeper URI " + parsed + " has parameters: none are supported");
        }
        for (String h : hosts.split(",", -1)) {
            server(h);
        }
        chroot(rest);
    }

    static String requireValidPath(String what, String path) {
        if (path == null
                || path.length() > MAX_BASE_PATH
                || !PATH.matcher(path).matches()
                || path.equals("/zookeeper")
                || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException(what + " " + (path == null ? "null" : "'" + path + "'")
                    + " is invalid: it must be an absolute ZooKeeper path of 2 to " + MAX_BASE_PATH
                    + " characters from A-Z a-z 0-9 . _ - : @ + = # and '/', no trailing '/', not under /zookeeper");
        }
        return path;
    }

    /** The client's connect string, {@code host:port,...[/chroot]}; also what messages name (it holds no secret). */
    String connectString() {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("no ZooKeeper servers given");
        }
        return String.join(",", servers) + chroot;
    }

    ZKClientConfig clientConfig() {
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        // bounds the one blocking call the backend makes, closing a session
        config.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, Long.toString(requestTimeout.toMillis()));
        return config;
    }
}
