package io.fencelock.spi;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps credentials out of messages and log lines by the structure of a connection string (see
 * {@link ConnectionString}): its user-info is removed and every parameter value replaced by
 * {@code ***}, whatever the parameter's name (any value may be a secret: {@code password1},
 * {@code sslkey}, a token...); scheme, hosts, ports, path and parameter names stay. A driver's
 * own message is never edited letter by letter: only the connection string's echoes in it are
 * replaced, and a message that still quotes a part of the credentials is withheld as a whole.
 */
public final class Redaction {
    static final String MASK = "***";
    static final String WITHHELD =
            "(the driver's message is withheld: it quotes part of the connection string's credentials)";
    private static final Pattern URL_IN_TEXT =
            Pattern.compile("(?<![A-Za-z0-9+.\\-])(?:[A-Za-z][A-Za-z0-9+.\\-]*:)+//[^\\s\"'`<>]*");
    private static final Pattern QUOTED = Pattern.compile("'([^']*)'|\"([^\"]*)\"|`([^`]*)`");

    private Redaction() {}

    /** The connection string without its user-info and with every parameter value {@code ***}. */
    public static String uri(String uri) {
        return uri == null ? "null" : ConnectionString.parse(uri).toString();
    }

    /**
     * A message (a driver's) with every connection string quoted in it ({@code scheme://...}, up
     * to a space or a quote) redacted; the rest of the message unchanged.
     */
    public static String message(String message) {
        if (message == null) {
            return "null";
        }
        Matcher m = URL_IN_TEXT.matcher(message);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(uri(m.group())));
        }
        return m.appendTail(sb).toString();
    }

    /**
     * A driver's message about a connection made with {@code uri}: its echoes of {@code uri} and
     * of its parts ({@code userinfo@}, {@code key=value}, raw or percent-decoded) redacted, the rest
     * unchanged (user names in "Access denied for user 'app'@'host'" stay). When the user-info's
     * password, or a quoted piece of the user-info beyond the user name, is still in it (a parser
     * that split a raw URI at the wrong place quotes such pieces), the whole message is withheld.
     */
    public static String message(String message, String uri) {
        String out = message(message);
        if (message == null || uri == null) {
            return out;
        }
        ConnectionString parsed = ConnectionString.parse(uri);
        String userInfo = parsed.userInfo();
        for (String[] parameter : parsed.parameters()) {
            for (String value : forms(parameter[1])) {
                if (!parameter[0].isEmpty() && !value.isEmpty()) {
                    out = out.replace(parameter[0] + "=" + value, parameter[0] + "=" + MASK);
                }
            }
        }
        if (userInfo == null || userInfo.isEmpty()) {
            return out;
        }
        List<String> whole = forms(userInfo);
        for (String form : whole) {
            out = out.replace(form + "@", "");
        }
        int colon = userInfo.indexOf(':');
        List<String> user = forms(colon < 0 ? userInfo : userInfo.substring(0, colon));
        if (colon >= 0) {
            for (String password : forms(userInfo.substring(colon + 1))) {
                if (!password.isEmpty() && out.contains(password)) {
                    return WITHHELD;
                }
            }
        }
        return quotesPartOf(out, whole, user) ? WITHHELD : out;
    }

    /** Whether a quoted piece of {@code message} is part of the user-info but not of the user name. */
    private static boolean quotesPartOf(String message, List<String> userInfo, List<String> user) {
        Matcher m = QUOTED.matcher(message);
        while (m.find()) {
            String quoted = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
            if (quoted.isEmpty()) {
                continue;
            }
            if (userInfo.stream().anyMatch(u -> u.contains(quoted))
                    && user.stream().noneMatch(u -> u.contains(quoted))) {
                return true;
            }
        }
        return false;
    }

    /** {@code s} as written and percent-decoded ({@code +} stays a plus, as in user-info). */
    private static List<String> forms(String s) {
        List<String> out = new ArrayList<>(2);
        out.add(s);
        try {
            String decoded = URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
            if (!decoded.equals(s)) {
                out.add(decoded);
            }
        } catch (IllegalArgumentException notEncoded) {
            // a raw '%': the string as written is the only form
        }
        return out;
    }
}
