package io.fencelock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Schema and table names reach SQL as text, so they must be plain identifiers: a letter or
 * underscore, then letters, digits or underscores, at most 63 characters (PostgreSQL's limit,
 * below MySQL's 64). Everything else (quotes, dots, spaces, dashes) is refused.
 */
public final class SqlIdentifiers {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private SqlIdentifiers() {}

    /** Returns {@code value} if it is a plain identifier, else throws naming {@code what} and the rule. */
    public static String require(String what, String value) {
        if (value == null || !PLAIN.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " " + (value == null ? "null" : "'" + value + "'")
                    + " is not a plain SQL identifier: it must match [A-Za-z_][A-Za-z0-9_]* and be 1 to 63 characters");
        }
        return value;
    }

    /**
     * The SHA-256 of {@code text} in hex: a stable stand-in for names derived from identifiers that
     * would be too long as they are (a notification channel, a named lock).
     */
    public static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
