package io.fencelock.spi;

import java.util.regex.Pattern;

/** Removes credentials from connection strings before they reach a message or a log line. */
public final class Redaction {
    private static final Pattern SECRET_PARAMS = Pattern.compile(
            "(?i)((?:password|passwd|pwd|secret|token|sslpassword|user|username)=)[^&;]*");

    private Redaction() {
    }

    /**
     * The connection string with user info ({@code //user:pw@host}, {@code thin:user/pw@//host})
     * and secret parameters replaced by {@code ***}.
     */
    public static String uri(String uri) {
        if (uri == null) {
            return "null";
        }
        String out = uri;
        int query = firstOf(out, '?', ';');
        int at = out.lastIndexOf('@', query - 1);
        if (at > 0) {
            int slashes = out.lastIndexOf("//", at);
            // "//user:pw@host" keeps the slashes; "thin:user/pw@//host" keeps the scheme's last colon
            int start = slashes >= 0 && out.substring(slashes + 2, at).indexOf('/') < 0
                    ? slashes + 2 : out.lastIndexOf(':', at) + 1;
            out = out.substring(0, start) + "***" + out.substring(at);
        }
        return SECRET_PARAMS.matcher(out).replaceAll("$1***");
    }

    private static int firstOf(String s, char a, char b) {
        int i = s.indexOf(a);
        int j = s.indexOf(b);
        if (i < 0) {
            return j < 0 ? s.length() : j;
        }
        return j < 0 ? i : Math.min(i, j);
    }
}
