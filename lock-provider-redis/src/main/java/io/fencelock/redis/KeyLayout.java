package io.fencelock.redis;

import io.lettuce.core.cluster.SlotHash;
import java.util.regex.Pattern;

/**
 * Where one lock lives. For a name {@code N} and the key prefix {@code P} (default {@code fencelock:}):
 * <ul>
 *   <li>{@code P{N}} is the lock: a string holding the lease id, the grant's time and the metadata
 *       (HeldValue), with the lease's expiry as its Redis expiry; it exists only while the lock is
 *       held;</li>
 *   <li>{@code P{N}:token} is the token record: a hash {@code n} (the last fencing token issued for
 *       N), {@code t} (when it was issued, server microseconds) and {@code w} (1 when an attempt was
 *       refused since the grant), which never expires and is never deleted, so tokens keep rising
 *       across release, expiry and takeover;</li>
 *   <li>releases after a refused attempt are published on the channel {@code Preleased} (one per
 *       prefix and database) with N as the message.</li>
 * </ul>
 * Both keys carry the hash tag {@code {N}}, so they are in one Cluster slot and one script can
 * touch both. Lock names cannot contain braces (LockNames), so the tag is exactly the name; the
 * prefix cannot either (checked here), and neither contains a glob character, so
 * {@code P{X*}} matches exactly the locks whose names start with X.
 */
final class KeyLayout {
    static final String DEFAULT_PREFIX = "fencelock:";
    static final int MAX_PREFIX = 64;
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._\\-:/@+=#]{1," + MAX_PREFIX + "}");
    private static final String TOKEN_SUFFIX = ":token";

    final String prefix;
    final String channel;

    private KeyLayout(String prefix, int database) {
        this.prefix = prefix;
        // pub/sub ignores databases: without the number two databases would wake each other's waiters
        this.channel = prefix + "released" + (database == 0 ? "" : "@" + database);
    }

    /** Validates the prefix (no I/O). */
    static KeyLayout of(String prefix, int database) {
        return new KeyLayout(requireValidPrefix(prefix), database);
    }

    static String requireValidPrefix(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("keyPrefix " + (prefix == null ? "null" : "'" + prefix + "'")
                    + " is invalid: it must be 1 to " + MAX_PREFIX + " characters from A-Z a-z 0-9 . _ - : / @ + = #"
                    + " (no braces, which would move the hash tag, and no glob characters, which would break list())");
        }
        return prefix;
    }

    String lockKey(String name) {
        return prefix + "{" + name + "}";
    }

    String tokenKey(String name) {
        return prefix + "{" + name + "}" + TOKEN_SUFFIX;
    }

    /** The SCAN pattern of the lock keys (not the token keys) whose names start with {@code namePrefix}. */
    String lockKeyPattern(String namePrefix) {
        return prefix + "{" + namePrefix + "*}";
    }

    /** The name of a lock key found by {@link #lockKeyPattern(String)}, or null for any other key. */
    String nameOf(String lockKey) {
        int start = prefix.length() + 1;
        if (lockKey.length() <= start + 1 || !lockKey.startsWith(prefix + "{") || !lockKey.endsWith("}")) {
            return null;
        }
        String name = lockKey.substring(start, lockKey.length() - 1);
        return name.indexOf('{') < 0 && name.indexOf('}') < 0 ? name : null;
    }

    /** The Cluster slot of both keys of {@code name} (the slot of their hash tag). */
    int slot(String name) {
        return SlotHash.getSlot(lockKey(name));
    }
}
