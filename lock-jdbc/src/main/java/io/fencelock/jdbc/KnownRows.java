package io.fencelock.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Names whose row in the lock table this backend has seen, so that their acquire can be a plain
 * {@code UPDATE} of the row instead of an insert attempt, with what a new row needs first (a token
 * floor's read, a guard against a purge). Only a hint: the update of a row a purge deleted since matches
 * nothing, and the caller then takes the insert, as for a new name: one more statement, never a lower
 * token. Bounded: when full it forgets every name, whose next acquires take the insert again.
 */
public final class KnownRows {
    /** At most this many names: a few megabytes of strings, which the application holds anyway while it uses them. */
    public static final int LIMIT = 16_384;

    private final Set<String> names = ConcurrentHashMap.newKeySet();

    public boolean contains(String name) {
        return names.contains(name);
    }

    public void add(String name) {
        if (names.size() >= LIMIT) {
            names.clear();
        }
        names.add(name);
    }
}
