package io.fencelock.cli;

import io.fencelock.spi.Redaction;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What must never be printed, gathered from the raw arguments and the environment before parsing
 * (so that even a parse error cannot echo it): connection strings, the values of {@code -p}
 * properties other than the known harmless ones, and {@code FENCELOCK_PASSWORD}. Every message the
 * command line prints passes through {@link #scrub}; the providers' own messages are redacted
 * already, this is the second line.
 */
final class Secrets {
    static final String MASK = "***";
    /** Provider properties whose values are names and numbers, never credentials. */
    private static final Set<String> HARMLESS = Set.of(
            "user",
            "schema",
            "table",
            "createTable",
            "poolSize",
            "keyPrefix",
            "requestTimeout",
            "basePath",
            "database",
            "collection");

    private final List<String> uris = new ArrayList<>();
    private final List<String> values = new ArrayList<>();

    private Secrets() {}

    static Secrets of(String[] args, Map<String, String> env) {
        Secrets s = new Secrets();
        s.addUri(env.get(Connection.URI_ENV));
        s.addValue(env.get(Connection.PASSWORD_ENV));
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String next = i + 1 < args.length ? args[i + 1] : null;
            if (arg.equals("--uri")) {
                s.addUri(next);
            } else if (arg.startsWith("--uri=")) {
                s.addUri(arg.substring("--uri=".length()));
            } else if (arg.equals("-p") || arg.equals("--property")) {
                s.addProperty(next);
            } else if (arg.startsWith("--property=")) {
                s.addProperty(arg.substring("--property=".length()));
            } else if (arg.startsWith("-p") && !arg.startsWith("--")) {
                s.addProperty(arg.substring(arg.startsWith("-p=") ? 3 : 2));
            } else if (arg.contains("://")) {
                s.addUri(arg); // a connection string in the wrong place
            }
        }
        s.values.sort(Comparator.comparingInt(String::length).reversed()); // longest first: no half-masked value
        return s;
    }

    private void addUri(String uri) {
        if (uri != null && !uri.isBlank()) {
            uris.add(uri);
        }
    }

    private void addValue(String value) {
        if (value != null && !value.isEmpty()) {
            values.add(value);
        }
    }

    private void addProperty(String keyValue) {
        if (keyValue == null) {
            return;
        }
        int eq = keyValue.indexOf('=');
        if (eq < 0) {
            addValue(keyValue); // no key: it may be a value typed alone
        } else if (!HARMLESS.contains(keyValue.substring(0, eq))) {
            addValue(keyValue.substring(eq + 1));
        }
    }

    /** {@code text} with every connection string redacted and every secret value masked. */
    String scrub(String text) {
        if (text == null) {
            return "";
        }
        String out = Redaction.message(text);
        for (String uri : uris) {
            out = Redaction.message(out, uri);
            out = out.replace(uri, Redaction.uri(uri));
        }
        for (String value : values) {
            out = out.replace(value, MASK);
        }
        return out;
    }
}
