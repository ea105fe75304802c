package io.fencelock.spi;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The settings a {@link LockBackendProvider#open} receives, checked the same way by every
 * provider: unknown keys are refused by name (never by value: a value may be a password), and
 * typed values are parsed with a message naming the key and the rule.
 */
public final class ProviderProperties {
    private final Map<String, String> values;

    private ProviderProperties(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Checks that {@code uri} is one {@code provider} accepts and that every key is in {@code known};
     * throws {@link IllegalArgumentException} otherwise (the URI redacted).
     */
    public static ProviderProperties check(
            LockBackendProvider provider, String uri, Map<String, String> properties, Set<String> known) {
        if (uri == null || !provider.accepts(uri)) {
            throw new IllegalArgumentException("not a URI for the " + provider.name() + " provider (it accepts "
                    + String.join(", ", provider.uriPrefixes()) + "): " + Redaction.uri(uri));
        }
        return checkKeys(provider, properties, known);
    }

    /**
     * Checks that every key is in {@code known}, for a backend opened on something other than a URI
     * (e.g. the application's DataSource); throws {@link IllegalArgumentException} otherwise.
     */
    public static ProviderProperties checkKeys(
            LockBackendProvider provider, Map<String, String> properties, Set<String> known) {
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown " + provider.name() + " lock backend properties " + unknown
                    + "; known: " + new TreeSet<>(known));
        }
        return new ProviderProperties(properties);
    }

    /** The raw value, or {@code null} when absent. */
    public String get(String key) {
        return values.get(key);
    }

    /** Passes the value to {@code setter} when the key is present. */
    public ProviderProperties ifPresent(String key, Consumer<String> setter) {
        if (values.containsKey(key)) {
            setter.accept(values.get(key));
        }
        return this;
    }

    /** Passes the value, parsed as {@code true} or {@code false}, to {@code setter} when present. */
    public ProviderProperties ifPresentBoolean(String key, Consumer<Boolean> setter) {
        return ifPresent(key, value -> {
            String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
            if (!v.equals("true") && !v.equals("false")) {
                throw new IllegalArgumentException(key + " must be true or false, got '" + value + "'");
            }
            setter.accept(v.equals("true"));
        });
    }

    /** Passes the value, parsed as a whole number, to {@code setter} when present. */
    public ProviderProperties ifPresentInt(String key, Consumer<Integer> setter) {
        return ifPresent(key, value -> {
            try {
                setter.accept(Integer.parseInt(value == null ? "" : value.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + " must be a whole number, got '" + value + "'");
            }
        });
    }

    /** Passes the value, parsed as an ISO-8601 duration ({@code PT5S}), to {@code setter} when present. */
    public ProviderProperties ifPresentDuration(String key, Consumer<Duration> setter) {
        return ifPresent(key, value -> {
            Duration parsed;
            try {
                parsed = Duration.parse(value);
            } catch (DateTimeParseException | NullPointerException e) {
                throw new IllegalArgumentException(
                        key + " '" + value + "' is not an ISO-8601 duration such as PT5S", e);
            }
            setter.accept(parsed);
        });
    }

    /**
     * {@code value} when it is longer than zero; otherwise an {@link IllegalArgumentException} naming
     * {@code key}. For a builder's timeouts, checked when set, before any I/O.
     */
    public static Duration requirePositive(String key, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(key + " must be positive, got " + value);
        }
        return value;
    }
}
