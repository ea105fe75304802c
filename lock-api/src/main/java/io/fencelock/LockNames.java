package io.fencelock;

import java.util.regex.Pattern;

/**
 * The rules for lock names, the same for every backend so that a name valid on one is valid on
 * all: 1 to 255 characters from {@code A-Z a-z 0-9 . _ - : / @ + = #}. No spaces, quotes, braces
 * (Redis hash tags) or control characters.
 */
public final class LockNames {
    public static final int MAX_LENGTH = 255;
    private static final Pattern ALLOWED = Pattern.compile("[A-Za-z0-9._\\-:/@+=#]*");
    static final String RULE = "1 to " + MAX_LENGTH + " characters from A-Z a-z 0-9 . _ - : / @ + = #";

    private LockNames() {}

    /** Returns {@code name} if it follows the rules, else throws naming the value and the rule. */
    public static String requireValid(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name is null; a lock name is " + RULE);
        }
        if (name.isEmpty()
                || name.length() > MAX_LENGTH
                || !ALLOWED.matcher(name).matches()) {
            throw new IllegalArgumentException("lock name '" + shorten(name) + "' (length " + name.length()
                    + ") is invalid; a lock name is " + RULE);
        }
        return name;
    }

    /** Returns {@code prefix} if it is empty or a valid start of a name, else throws. */
    public static String requireValidPrefix(String prefix) {
        if (prefix == null
                || prefix.length() > MAX_LENGTH
                || !ALLOWED.matcher(prefix).matches()) {
            throw new IllegalArgumentException("lock name prefix '" + shorten(prefix)
                    + "' is invalid; a prefix is empty or the start of a name of " + RULE);
        }
        return prefix;
    }

    private static String shorten(String s) {
        if (s == null) {
            return "null";
        }
        String printable = s.codePoints()
                .map(c -> Character.isISOControl(c) ? '?' : c)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
        return printable.length() <= 64 ? printable : printable.substring(0, 61) + "...";
    }
}
