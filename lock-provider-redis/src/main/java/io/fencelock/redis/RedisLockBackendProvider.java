package io.fencelock.redis;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link RedisLockBackend}s from Redis URIs: a single server ({@code redis:}, {@code rediss:},
 * {@code redis+ssl:}, {@code redis+tls:}, {@code redis-socket:}), Sentinel ({@code redis-sentinel:},
 * {@code rediss-sentinel:}) or Cluster seed nodes ({@code redis-cluster:}, {@code rediss-cluster:}).
 * Properties: {@code user}, {@code password} and {@code keyPrefix}.
 */
public final class RedisLockBackendProvider implements LockBackendProvider {
    static final List<String> PREFIXES = List.of(
            "redis:",
            "rediss:",
            "redis+ssl:",
            "redis+tls:",
            "redis-socket:",
            "redis+socket:",
            "redis-sentinel:",
            "rediss-sentinel:",
            "redis-cluster:",
            "rediss-cluster:");
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
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        RedisLockBackend.Builder builder =
                RedisLockBackend.builder().uri(uri).user(settings.get("user")).password(settings.get("password"));
        settings.ifPresent("keyPrefix", builder::keyPrefix);
        return builder.build();
    }
}
