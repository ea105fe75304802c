package io.fencelock.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A connection string split by its structure: {@code scheme://[userinfo@]hosts[/path][?query | ;params][#fragment]}
 * ({@code jdbc:mysql:}, {@code jdbc:postgresql:}, {@code mongodb(+srv):}, {@code redis(s):},
 * {@code redis-sentinel:}, {@code etcd:} and the like, hosts comma-separated), or Oracle's
 * {@code thin:userinfo@...}. Its {@link #toString()} is the {@linkplain Redaction#uri redacted} form.
 *
 * <p>Where the user-info ends is decided without trusting that it is percent-encoded: the
 * user-info of RFC 3986 ends at the last {@code @} before the first {@code / ? # ;}, but an
 * {@code @} further on that is not inside a parameter value ({@code ?key=va@lue}) means a raw
 * {@code / ? # ;} in the password, and the user-info then runs to the last such {@code @}.
 */
public final class ConnectionString {
    private static final Pattern SCHEME = Pattern.compile("^(?:[A-Za-z][A-Za-z0-9+.\\-]*:)+");

    private final String scheme; // "jdbc:mysql:", with "//" when the string has an authority
    private final String userInfo; // raw, null when none
    private final String hosts; // raw, may be empty
    private final String rest; // path, query or params, fragment: raw

    private ConnectionString(String scheme, String userInfo, String hosts, String rest) {
        this.scheme = scheme;
        this.userInfo = userInfo;
        this.hosts = hosts;
        this.rest = rest;
    }

    /** Splits {@code s}; never fails (a string without a scheme is all path and parameters). */
    public static ConnectionString parse(String s) {
        Matcher m = SCHEME.matcher(s);
        String scheme = m.find() ? m.group() : "";
        String tail = s.substring(scheme.length());
        if (tail.startsWith("//")) {
            return authority(scheme + "//", tail.substring(2));
        }
        int at = tail.lastIndexOf('@');
        if (at >= 0 && indexOfAny(tail.substring(0, at), "?;=", 0) < 0) {
            // Oracle's thin:user/password@host or thin:user/password@//host
            String after = tail.substring(at + 1);
            if (after.startsWith("//")) {
                ConnectionString inner = authority("", after.substring(2));
                return new ConnectionString(scheme + "@//", tail.substring(0, at), inner.hosts, inner.rest);
            }
            return new ConnectionString(scheme + "@", tail.substring(0, at), "", after);
        }
        return new ConnectionString(scheme, null, "", tail);
    }

    private static ConnectionString authority(String scheme, String t) {
        int end = indexOfAny(t, "/?#;", 0);
        int authorityEnd = end < 0 ? t.length() : end;
        int at = t.lastIndexOf('@', authorityEnd - 1);
        for (int i = t.lastIndexOf('@'); i >= authorityEnd; i = t.lastIndexOf('@', i - 1)) {
            if (!isInAValue(t, authorityEnd, i)) {
                at = i;
                break;
            }
        }
        String userInfo = at >= 0 ? t.substring(0, at) : null;
        String after = t.substring(at + 1);
        int hostsEnd = indexOfAny(after, "/?#;", 0);
        return hostsEnd < 0
                ? new ConnectionString(scheme, userInfo, after, "")
                : new ConnectionString(scheme, userInfo, after.substring(0, hostsEnd), after.substring(hostsEnd));
    }

    /** Whether the {@code @} at {@code at} sits in a parameter's value: after the first {@code ?} or {@code ;} from {@code from}, and after a {@code key=}. */
    private static boolean isInAValue(String t, int from, int at) {
        int query = indexOfAny(t, "?;", from);
        if (query < 0 || at < query) {
            return false; // in the path
        }
        int segment = Math.max(t.lastIndexOf('&', at), Math.max(t.lastIndexOf(';', at), t.lastIndexOf('?', at))) + 1;
        int eq = t.indexOf('=', segment);
        return eq > segment && eq < at; // a key, then '=', then the '@'
    }

    static int indexOfAny(String s, String chars, int from) {
        for (int i = from; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    /** The raw user-info ({@code user:password}), or {@code null}; a secret, for redaction only. */
    String userInfo() {
        return userInfo;
    }

    /** The raw {@code key=value} parameters (query or {@code ;params}); values are secrets, for redaction only. */
    List<String[]> parameters() {
        List<String[]> out = new ArrayList<>();
        int start = indexOfAny(rest, "?;", 0);
        if (start < 0) {
            return out;
        }
        for (String segment : rest.substring(start + 1).split("[&;]")) {
            int eq = segment.indexOf('=');
            out.add(
                    eq < 0
                            ? new String[] {"", segment}
                            : new String[] {segment.substring(0, eq), segment.substring(eq + 1)});
        }
        return out;
    }

    /** Whether the string names a user or password before its hosts. */
    public boolean hasUserInfo() {
        return userInfo != null;
    }

    /** The hosts as written ({@code host[:port]}, comma-separated), without user-info. */
    public String hosts() {
        return hosts;
    }

    /**
     * Checks the port of every {@code host:port} (and {@code [v6]:port}): a whole number from 1 to
     * 65535, so that a typo is refused here and not sent to DNS or a connect attempt. Hosts in
     * another syntax (MySQL's {@code address=(host=..)(port=..)}) are left to the driver.
     *
     * @throws IllegalArgumentException naming the port, the host and the redacted string
     */
    public ConnectionString requireValidPorts() {
        for (String host : hosts.split(",", -1)) {
            String h = host.trim();
            if (h.contains("(") || h.contains("=")) {
                continue;
            }
            int colon = h.startsWith("[") ? h.indexOf("]:") + 1 : h.indexOf(':');
            if (colon <= 0 || (!h.startsWith("[") && h.indexOf(':', colon + 1) >= 0)) {
                continue; // no port, or an IPv6 address without brackets
            }
            String port = h.substring(colon + 1);
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException("port '" + port + "' of host " + h.substring(0, colon) + " in "
                        + this + " is invalid: it must be a whole number from 1 to 65535");
            }
        }
        return this;
    }

    /** The redacted form: no user-info, every parameter value {@code ***}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(scheme);
        sb.append(hosts.replaceAll("=[^(),\\[\\]]+", "=" + Redaction.MASK)); // MySQL's (host=..)(password=..)
        int params = indexOfAny(rest, "?;", 0);
        if (params < 0) {
            return sb.append(rest).toString();
        }
        sb.append(rest, 0, params + 1);
        String query = rest.substring(params + 1);
        int i = 0;
        while (i <= query.length()) {
            int end = indexOfAny(query, "&;", i);
            String segment = query.substring(i, end < 0 ? query.length() : end);
            int eq = segment.indexOf('=');
            sb.append(
                    eq >= 0 ? segment.substring(0, eq + 1) + Redaction.MASK : segment.isEmpty() ? "" : Redaction.MASK);
            if (end < 0) {
                break;
            }
            sb.append(query.charAt(end));
            i = end + 1;
        }
        return sb.toString();
    }
}
