package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens {@link RedisLockBackend}s from Redis URIs: a single server ({@code redis:}, {@code rediss:},
 * {@code redis+ssl:}, {@code redis+tls:}, {@code redis-socket:}), Sentinel ({@code redis-sentinel:},
 * {@code rediss-sentinel:}) or Cluster seed nodes ({@code redis-cluster:}, {@code rediss-cluster:}).
 * Properties: {@code user}, {@code password} and {@code keyPrefix}.
 */
public final class RedisLockBackendProvider implements LockBackendProvider {
    static final List<String> PREFIXES = List.of("redis:", "rediss:", "redis+ssl:", "redis+tls:", "redis-socket:",
            "redis+socket:", "redis-sentinel:", "rediss-sentinel:", "redis-cluster:", "rediss-cluster:");
    private static final Set<String> KEYS = Set.of("user", "password", "keyPrefix");

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public List<String> uriPrefixes() {
        return PREFIXES;
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        if (uri == null || !accepts(uri)) {
            throw new IllegalArgumentException("not a Redis URI (" + String.join(", ", PREFIXES) + "): " + Redaction.uri(uri));
        }
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown Redis lock backend properties " + unknown + "; known: " + new TreeSet<>(KEYS));
        }
        RedisLockBackend.Builder builder = RedisLockBackend.builder().uri(uri)
                .user(properties.get("user"))
                .password(properties.get("password"));
        if (properties.containsKey("keyPrefix")) {
            builder.keyPrefix(properties.get("keyPrefix"));
        }
        return builder.build();
    }
}
