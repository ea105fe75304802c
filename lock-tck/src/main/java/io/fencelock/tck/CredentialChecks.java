package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;

/**
 * What the providers' credential tests share: passwords with the characters that break naive
 * parsing, and checks that no form of a secret reaches a message, a cause, or a pool's
 * configuration dump.
 */
public final class CredentialChecks {
    /** A password with every character that ends a user-info, a path or a parameter, and a percent-escape. */
    public static final String SPECIAL = "p@ss:w/rd%40?&=#;,";

    private CredentialChecks() {}

    /** {@code secret} percent-encoded, as a URL carries it. */
    public static String encoded(String secret) {
        return URLEncoder.encode(secret, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A fresh password: {@link #SPECIAL} and a random tail, so that it appears nowhere by chance. */
    public static String special(String tag) {
        return tag + "-" + SPECIAL + java.util.UUID.randomUUID().toString().substring(0, 8);
    }

    /** {@code uri} with {@code userInfo} (as given, unencoded) before its hosts. */
    public static String withUserInfo(String uri, String userInfo) {
        return uri.replaceFirst("//", "//" + java.util.regex.Matcher.quoteReplacement(userInfo) + "@");
    }

    /** {@code uri} with {@code parameters} ({@code a=1&b=2}) appended to its query. */
    public static String withParameters(String uri, String parameters) {
        return uri + (uri.contains("?") ? "&" : "?") + parameters;
    }

    /** No form (as given, percent-encoded) of any secret in the failure, its causes or suppressed ones. */
    public static void assertNoSecret(Throwable failure, String... secrets) {
        assertThat(failure).as("a failure").isNotNull();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            assertNoSecret(String.valueOf(t.getMessage()), secrets);
            assertNoSecret(t.toString(), secrets);
            for (Throwable s : t.getSuppressed()) {
                assertNoSecret(s.toString(), secrets);
            }
        }
    }

    /** No form (as given, percent-encoded) of any secret in {@code text}. */
    public static void assertNoSecret(String text, String... secrets) {
        for (String secret : secrets) {
            assertThat(text).doesNotContain(secret).doesNotContain(encoded(secret));
        }
    }

    /**
     * What HikariCP's {@code HikariConfig.logConfiguration()} prints at DEBUG for {@code config}:
     * every bean property, except those whose name contains "password" (it masks them) and the
     * {@code password} entry of {@code dataSourceProperties}. By reflection, so that the TCK needs
     * no HikariCP; a pool built with a secret in its URL or its properties shows it here.
     */
    public static String hikariConfigurationDump(Object config) {
        StringBuilder dump = new StringBuilder();
        List<Method> getters = Arrays.stream(config.getClass().getMethods())
                .filter(m -> m.getParameterCount() == 0
                        && !Modifier.isStatic(m.getModifiers())
                        && (m.getName().startsWith("get") || m.getName().startsWith("is"))
                        && !m.getName().equals("getClass")
                        && m.getReturnType() != void.class)
                .sorted(Comparator.comparing(Method::getName))
                .toList();
        for (Method getter : getters) {
            String property = getter.getName().replaceFirst("^(get|is)", "");
            if (property.toLowerCase(java.util.Locale.ROOT).contains("password")
                    || property.equals("Connection")
                    || property.equals("HikariPoolMXBean")
                    || property.equals("LogWriter")
                    || property.equals("ParentLogger")) {
                continue;
            }
            Object value;
            try {
                value = getter.invoke(config);
            } catch (ReflectiveOperationException | RuntimeException e) {
                continue; // a getter that needs a running pool, as Hikari skips it too
            }
            if (value instanceof Properties properties) {
                Properties copy = new Properties();
                copy.putAll(properties);
                copy.remove("password");
                value = copy;
            }
            dump.append(property).append('=').append(value).append('\n');
        }
        return dump.toString();
    }
}
