package io.fencelock.testservers.common;

import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * The one {@code host:port} of a URL such as {@code jdbc:postgresql://h:5432/db}, {@code redis://u:p@h:6379/0},
 * {@code mongodb://h:27017/db} or {@code http://h:2379}, and the same URL pointed at another address (the
 * TCK's fault proxy). URLs naming several hosts, or none, have no single address: a proxy in front of one
 * of them would not see every request.
 */
public final class Endpoints {

    private Endpoints() {}

    /** The address of a URL with exactly one {@code //host[:port]}, or empty. */
    public static Optional<InetSocketAddress> single(String url, int defaultPort) {
        Authority a = Authority.of(url);
        if (a == null || a.hostPort.isEmpty() || a.hostPort.contains(",")) {
            return Optional.empty();
        }
        String host;
        String port;
        if (a.hostPort.startsWith("[")) { // [ipv6]:port
            int close = a.hostPort.indexOf(']');
            if (close < 0) {
                return Optional.empty();
            }
            host = a.hostPort.substring(1, close);
            port = a.hostPort.substring(close + 1);
        } else {
            int colon = a.hostPort.lastIndexOf(':');
            host = colon < 0 ? a.hostPort : a.hostPort.substring(0, colon);
            port = colon < 0 ? "" : a.hostPort.substring(colon);
        }
        try {
            int p = port.isEmpty() ? defaultPort : Integer.parseInt(port.substring(1));
            return Optional.of(InetSocketAddress.createUnresolved(host, p));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** {@code url} with its one host and port replaced by {@code address}; credentials, path and parameters kept. */
    public static String withAddress(String url, InetSocketAddress address) {
        Authority a = Authority.of(url);
        if (a == null || a.hostPort.contains(",")) {
            throw new IllegalArgumentException("not a URL with a single //host:port");
        }
        String host = address.getHostString();
        String hostPort = (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
        return url.substring(0, a.start) + a.userInfo + hostPort + url.substring(a.end);
    }

    /** Where the authority sits in the URL: {@code start} after {@code //}, {@code end} before the path. */
    private record Authority(int start, int end, String userInfo, String hostPort) {

        static Authority of(String url) {
            int slashes = url.indexOf("//");
            if (slashes < 0) {
                return null;
            }
            int start = slashes + 2;
            int end = url.length();
            for (char c : new char[] {'/', '?', '#'}) {
                int i = url.indexOf(c, start);
                if (i >= 0 && i < end) {
                    end = i;
                }
            }
            String authority = url.substring(start, end);
            int at = authority.lastIndexOf('@'); // a password may contain '@' only percent-encoded, but be lenient
            return new Authority(start, end, authority.substring(0, at + 1), authority.substring(at + 1));
        }
    }
}
