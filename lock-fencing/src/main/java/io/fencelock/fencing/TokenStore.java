package io.fencelock.fencing;

import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Where a {@link TokenGuard} keeps the highest token of each resource: memory by default, or the
 * service's own store (a row per resource, a Redis key...). One operation must be atomic.
 */
public interface TokenStore {

    /**
     * Atomically raises the stored token of {@code resource} to {@code token} if {@code token} is at
     * least the stored one (or none is stored), and returns the stored token after the call: equal
     * to {@code token} when it was accepted, higher when it was not. Arguments are validated.
     */
    long advance(String resource, long token);

    /** The stored token of {@code resource}, empty when none is. */
    OptionalLong current(String resource);

    /** A store in this JVM's memory: one entry per resource, kept until the JVM ends. */
    static TokenStore inMemory() {
        ConcurrentMap<String, Long> tokens = new ConcurrentHashMap<>();
        return new TokenStore() {
            @Override
            public long advance(String resource, long token) {
                return tokens.merge(resource, token, Math::max); // atomic per key
            }

            @Override
            public OptionalLong current(String resource) {
                Long token = tokens.get(resource);
                return token == null ? OptionalLong.empty() : OptionalLong.of(token);
            }

            @Override
            public String toString() {
                return "TokenStore.inMemory[" + tokens.size() + " resources]";
            }
        };
    }
}
