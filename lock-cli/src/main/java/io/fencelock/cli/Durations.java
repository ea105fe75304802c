package io.fencelock.cli;

import io.fencelock.LockOptions;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Durations as operators write them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h30m},
 * {@code 2d}, or ISO-8601 ({@code PT1H}); zero or positive, at most {@link LockOptions#MAX_TTL}.
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern PART = Pattern.compile("(\\d{1,15})(ms|s|m|h|d)");
    private static final String RULE = "write e.g. 500ms, 30s, 5m, 1h30m, 2d or ISO-8601 PT1H";

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String value) {
        String v = value == null ? "" : value.strip();
        Duration d;
        if (v.startsWith("P") || v.startsWith("p")) {
            try {
                d = Duration.parse(v);
            } catch (DateTimeParseException e) {
                throw invalid(value, RULE);
            }
        } else {
            d = Duration.ZERO;
            Matcher m = PART.matcher(v);
            int at = 0;
            while (at < v.length() && m.find(at) && m.start() == at) {
                long n = Long.parseLong(m.group(1));
                d = d.plus(
                        switch (m.group(2)) {
                            case "ms" -> Duration.ofMillis(n);
                            case "s" -> Duration.ofSeconds(n);
                            case "m" -> Duration.ofMinutes(n);
                            case "h" -> Duration.ofHours(n);
                            default -> Duration.ofDays(n);
                        });
                at = m.end();
            }
            if (v.isEmpty() || at != v.length()) {
                throw invalid(value, RULE);
            }
        }
        if (d.isNegative()) {
            throw invalid(value, "a duration must be zero or positive");
        }
        if (d.compareTo(LockOptions.MAX_TTL) > 0) {
            throw invalid(value, "at most " + LockOptions.MAX_TTL.toDays() + " days");
        }
        return d;
    }

    private static CommandLine.TypeConversionException invalid(String value, String rule) {
        return new CommandLine.TypeConversionException("'" + value + "' is not a valid duration: " + rule);
    }
}
