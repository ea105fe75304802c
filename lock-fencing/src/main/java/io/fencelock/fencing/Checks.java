package io.fencelock.fencing;

/** The input rules of the kit, checked before any I/O so that bad input changes nothing anywhere. */
final class Checks {
    /** Longest value quoted back in a message: keys and header values may come from untrusted clients. */
    private static final int QUOTED = 80;

    private Checks() {}

    /** Fencing tokens from fencelock (and from most lock services) are positive longs. */
    static long token(long token) {
        if (token <= 0) {
            throw new IllegalArgumentException("fencing token " + token
                    + " is not positive: a fencing token is a positive long, as Lease.fencingToken() returns");
        }
        return token;
    }

    /** A resource key: not null, not empty, at most {@code maxLength} characters, no NUL (PostgreSQL text refuses it). */
    static String key(String what, String key, int maxLength) {
        if (key == null) {
            throw new IllegalArgumentException(what + " is null: every fenced write names the resource it protects");
        }
        if (key.isEmpty() || key.length() > maxLength || key.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " " + quote(key) + " (" + key.length()
                    + " characters) breaks the rule: 1 to " + maxLength + " characters, no NUL character");
        }
        return key;
    }

    static <T> T notNull(String what, T value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is null: it is required");
        }
        return value;
    }

    static String quote(String value) {
        String shown = value.length() <= QUOTED ? value : value.substring(0, QUOTED) + "...";
        return "'" + shown + "'";
    }
}
