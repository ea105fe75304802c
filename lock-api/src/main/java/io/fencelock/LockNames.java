package io.fencelock;

/**
 * The rules for lock names, the same for every backend so that a name valid on one is valid on
 * all: 1 to 255 characters from {@code A-Z a-z 0-9 . _ - : / @ + = #}. No spaces, quotes, braces
 * (Redis hash tags) or control characters.
 */
public final class LockNames {
    public static final int MAX_LENGTH = 255;
    /** The allowed characters, looked up per character rather than by a regex: this runs on every acquire. */
    private static final boolean[] ALLOWED = new boolean[128];

    static {
        for (char c = 'A'; c <= 'Z'; c++) {
            ALLOWED[c] = true;
            ALLOWED[Character.toLowerCase(c)] = true;
        }
        for (char c = '0'; c <= '9'; c++) {
            ALLOWED[c] = true;
        }
        for (char c : "._-:/@+=#".toCharArray()) {
            ALLOWED[c] = true;
        }
    }

    static final String RULE = "1 to " + MAX_LENGTH + " characters from A-Z a-z 0-9 . _ - : / @ + = #";

    private LockNames() {}

    /** Returns {@code name} if it follows the rules, else throws naming the value and the rule. */
    public static String requireValid(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name is null; a lock name is " + RULE);
        }
        if (name.isEmpty() || name.length() > MAX_LENGTH || !allowed(name)) {
            throw new IllegalArgumentException("lock name '" + shorten(name) + "' (length " + name.length()
                    + ") is invalid; a lock name is " + RULE);
        }
        return name;
    }

    /** Returns {@code prefix} if it is empty or a valid start of a name, else throws. */
    public static String requireValidPrefix(String prefix) {
        if (prefix == null || prefix.length() > MAX_LENGTH || !allowed(prefix)) {
            throw new IllegalArgumentException("lock name prefix '" + shorten(prefix)
                    + "' is invalid; a prefix is empty or the start of a name of " + RULE);
        }
        return prefix;
    }

    private static boolean allowed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= ALLOWED.length || !ALLOWED[c]) {
                return false;
            }
        }
        return true;
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
