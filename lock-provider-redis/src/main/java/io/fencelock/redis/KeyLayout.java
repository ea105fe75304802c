package io.fencelock.redis;

import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.regex.Pattern;

/**
 * Where one lock lives. For a name {@code N} and the key prefix {@code P} (default {@code fencelock:}):
 * <ul>
 *   <li>{@code P{N}} is the lock: a string holding the lease id, the grant's time and the metadata
 *       (HeldValue), with the lease's expiry as its Redis expiry; it exists only while the lock is
 *       held (or, holding a lone line feed, while shared grants or waiters of N live);</li>
 *   <li>{@code P{N}:token} is the token record: a hash {@code n} (the last fencing token issued for
 *       N), {@code t} (when a renewal last replaced it, server microseconds; a grant's token dates from
 *       the grant time in the lock's value) and {@code w} (the lease id of the holder that refused an
 *       attempt, or 1 after a shared refusal: its release publishes), which never expires and is never deleted, so tokens keep rising
 *       across release, expiry and takeover;</li>
 *   <li>{@code P{N}:shared} is the shared record: a hash of N's semaphore, read-write or fair grants
 *       and waiters (see SharedScripts), expiring with the latest of them;</li>
 *   <li>{@code P{N}:queue} is the wake-up queue: a sorted set of the ids of clients waiting for N,
 *       by place (the server time of a waiter's first refusal); a release takes the first out and
 *       publishes N on that client's own channel {@code Preleased:<waiter id>}, so it wakes one
 *       client, not all; the queue expires a minute after its holder when nobody refreshes it;</li>
 *   <li>releases after another refused attempt (one that named no waiter, or a shared one) are
 *       published on the channel {@code Preleased} (one per prefix and database) with N as the
 *       message.</li>
 * </ul>
 * All keys carry the hash tag {@code {N}}, so they are in one Cluster slot and one script can
 * touch them all. Lock names cannot contain braces (LockNames), so the tag is exactly the name; the
 * prefix cannot either (checked here), and neither contains a glob character, so
 * {@code P{X*}} matches exactly the locks whose names start with X.
 */
final class KeyLayout {
    static final String DEFAULT_PREFIX = "fencelock:";
    static final int MAX_PREFIX = 64;
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._\\-:/@+=#]{1," + MAX_PREFIX + "}");
    private static final String TOKEN_SUFFIX = ":token";
    private static final String SHARED_SUFFIX = ":shared";
    private static final String QUEUE_SUFFIX = ":queue";
    private static final String GRANTS_SUFFIX = ":grants";

    final String prefix;
    final String channel;
    /** Each backend's own wake channel is this followed by its waiter id. */
    final String wakePrefix;

    private KeyLayout(String prefix, int database) {
        this.prefix = prefix;
        // pub/sub ignores databases: without the number two databases would wake each other's waiters
        this.channel = prefix + "released" + (database == 0 ? "" : "@" + database);
        this.wakePrefix = channel + ":";
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

    /** The name's wake-up queue: waiter ids by place, only a hint of whom a release wakes (Scripts). */
    String queueKey(String name) {
        return prefix + "{" + name + "}" + QUEUE_SUFFIX;
    }

    /**
     * The grants the name's queued waiters ask for (waiter id → lease id, TTL ms, metadata), which a
     * release makes ({@code GRANT_ON_RELEASE}, Scripts).
     */
    String grantsKey(String name) {
        return prefix + "{" + name + "}" + GRANTS_SUFFIX;
    }

    /**
     * The lock, token record, shared record, wake-up queue and queued grants of {@code name}, the KEYS of the
     * mutex's acquire, hand-over and release.
     */
    String[] mutexKeysOf(String name) {
        return new String[] {lockKey(name), tokenKey(name), sharedKey(name), queueKey(name), grantsKey(name)};
    }

    /** The channel on which a release wakes the waiter {@code waiterId}: one per backend instance. */
    String wakeChannel(String waiterId) {
        return wakePrefix + waiterId;
    }

    String sharedKey(String name) {
        return prefix + "{" + name + "}" + SHARED_SUFFIX;
    }

    /** The lock, token record and shared record of {@code name}, the KEYS of a script on one name. */
    String[] keysOf(String name) {
        return new String[] {lockKey(name), tokenKey(name), sharedKey(name)};
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

    /**
     * The indexes 0..n-1 in groups that one script call may take: one group (split every {@code max})
     * on a single server, one group per slot on Cluster (names at index i: {@code nameAt}).
     */
    List<List<Integer>> groups(int n, IntFunction<String> nameAt, int max, boolean cluster) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        List<List<Integer>> groups = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int slot = cluster ? slot(nameAt.apply(i)) : 0;
            List<Integer> group = bySlot.computeIfAbsent(slot, s -> new ArrayList<>());
            group.add(i);
            if (group.size() == max) {
                groups.add(group);
                bySlot.remove(slot);
            }
        }
        groups.addAll(bySlot.values());
        return groups;
    }
}
