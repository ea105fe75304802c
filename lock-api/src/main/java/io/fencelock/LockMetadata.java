package io.fencelock;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What an acquisition says about itself, stored with the grant in the same round trip and shown by
 * {@link LockClient#inspect} and {@link LockClient#list}: who holds the lock (an owner description),
 * what kind of lock it is (a type) and a small map of user data. Descriptive only: ownership is
 * checked by the random lease id, never by the owner.
 *
 * <p>Validated when made, before any I/O: the owner is at most {@value #MAX_OWNER_LENGTH} characters
 * without control characters; the type at most {@value #MAX_TYPE_LENGTH} characters of
 * {@code [A-Za-z0-9._:-]}; the data at most {@value #MAX_DATA_ENTRIES} entries whose keys are 1 to
 * {@value #MAX_TYPE_LENGTH} characters of {@code [A-Za-z0-9._-]} and whose values have no control
 * characters, and at most {@value #MAX_DATA_BYTES} bytes of UTF-8 in all (keys and values).
 *
 * @param owner who holds the lock, or {@code null} for the client's default (host name, process id
 *              and client id); empty when the backend has no description
 * @param type  a kind of lock the application names (e.g. {@code "job"}), or {@code null}
 * @param data  user data, never {@code null}; sorted by key
 */
public record LockMetadata(String owner, String type, Map<String, String> data) {
    public static final int MAX_OWNER_LENGTH = 200;
    public static final int MAX_TYPE_LENGTH = 64;
    public static final int MAX_DATA_ENTRIES = 16;
    public static final int MAX_DATA_BYTES = 2048;

    /** No owner, no type, no data. */
    public static final LockMetadata NONE = new LockMetadata(null, null, Map.of());

    private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_TYPE_LENGTH + "}");
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_TYPE_LENGTH + "}");

    public LockMetadata {
        if (owner != null) {
            if (owner.length() > MAX_OWNER_LENGTH) {
                throw new IllegalArgumentException(
                        "owner of " + owner.length() + " characters is longer than " + MAX_OWNER_LENGTH);
            }
            requireNoControl("owner", owner);
        }
        if (type != null && !TYPE.matcher(type).matches()) {
            throw new IllegalArgumentException("lock type '" + printable(type) + "' must be 1 to " + MAX_TYPE_LENGTH
                    + " characters of [A-Za-z0-9._:-]");
        }
        if (data == null) {
            data = Map.of();
        } else if (!data.isEmpty()) {
            if (data.size() > MAX_DATA_ENTRIES) {
                throw new IllegalArgumentException(
                        "lock data has " + data.size() + " entries; at most " + MAX_DATA_ENTRIES + " are allowed");
            }
            TreeMap<String, String> sorted = new TreeMap<>();
            int bytes = 0;
            for (Map.Entry<String, String> e : data.entrySet()) {
                String key = e.getKey();
                String value = e.getValue();
                if (key == null || !KEY.matcher(key).matches()) {
                    throw new IllegalArgumentException("lock data key '" + printable(key) + "' must be 1 to "
                            + MAX_TYPE_LENGTH + " characters of [A-Za-z0-9._-]");
                }
                if (value == null) {
                    throw new IllegalArgumentException("lock data value of key '" + key + "' is null");
                }
                requireNoControl("lock data value of key '" + key + "'", value);
                bytes += key.getBytes(StandardCharsets.UTF_8).length + value.getBytes(StandardCharsets.UTF_8).length;
                sorted.put(key, value);
            }
            if (bytes > MAX_DATA_BYTES) {
                throw new IllegalArgumentException(
                        "lock data of " + bytes + " bytes is larger than " + MAX_DATA_BYTES + " bytes (UTF-8)");
            }
            data = Collections.unmodifiableMap(sorted);
        } else {
            data = Map.of();
        }
    }

    public static LockMetadata of(String owner, String type, Map<String, String> data) {
        return new LockMetadata(owner, type, data);
    }

    public LockMetadata withOwner(String newOwner) {
        return new LockMetadata(newOwner, type, data);
    }

    public LockMetadata withType(String newType) {
        return new LockMetadata(owner, newType, data);
    }

    public LockMetadata withData(Map<String, String> newData) {
        return new LockMetadata(owner, type, newData);
    }

    /** Whether there is nothing to store. */
    public boolean isEmpty() {
        return owner == null && type == null && data.isEmpty();
    }

    private static void requireNoControl(String what, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(what + " '" + printable(value)
                        + "' contains control character U+" + String.format("%04X", (int) value.charAt(i))
                        + "; control characters are not allowed");
            }
        }
    }

    /** The value for a message: control characters escaped, at most 80 characters. */
    private static String printable(String value) {
        if (value == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < value.length() && out.length() < 80; i++) {
            char c = value.charAt(i);
            out.append(Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return value.length() > 80 ? out + "..." : out.toString();
    }
}
