package io.fencelock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Time to and from SQL: durations as the microseconds the statements compute with, the checks of
 * duration settings, and instants read from the two kinds of timestamp column the backends use.
 */
public final class SqlTime {

    /** Reads an instant from a column; null for SQL NULL. */
    @FunctionalInterface
    public interface Reader {
        Instant read(ResultSet rs, int column) throws SQLException;
    }

    /** A {@code timestamptz} (PostgreSQL): an instant whatever the session's time zone. */
    public static final Reader TIMESTAMPTZ = (rs, column) -> {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    };

    /** A {@code DATETIME(6)} written from {@code UTC_TIMESTAMP(6)} (MySQL): read as it is, no session time zone involved. */
    public static final Reader UTC_DATETIME = (rs, column) -> {
        LocalDateTime time = rs.getObject(column, LocalDateTime.class);
        return time == null ? null : time.toInstant(ZoneOffset.UTC);
    };

    private SqlTime() {}

    /** {@code d} in whole microseconds (the finest unit both databases store); throws on overflow. */
    public static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    /** {@code d} rounded up to whole seconds, at least 1 (for drivers that take timeouts in seconds). */
    public static int seconds(Duration d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (d.toMillis() + 999) / 1000));
    }

    /** Returns {@code d} if it is positive, else throws naming {@code what} and the rule. */
    public static Duration requirePositive(String what, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    /** Returns {@code d} if it is zero or positive, else throws naming {@code what} and the rule. */
    public static Duration requireNotNegative(String what, Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + d);
        }
        return d;
    }
}
