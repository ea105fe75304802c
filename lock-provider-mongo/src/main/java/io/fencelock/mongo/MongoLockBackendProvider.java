package io.fencelock.mongo;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link MongoLockBackend}s from {@code mongodb:} and {@code mongodb+srv:} connection strings.
 * Properties: {@code database}, {@code collection}, and {@code user} / {@code password} when the URI
 * carries no credentials.
 */
public final class MongoLockBackendProvider implements LockBackendProvider {
    private static final Set<String> KEYS = Set.of("database", "collection", "user", "password");

    @Override
    public String name() {
        return "mongo";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("mongodb:", "mongodb+srv:");
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        ProviderProperties props = ProviderProperties.check(this, uri, properties, KEYS);
        MongoLockBackend.Builder builder =
                MongoLockBackend.builder().uri(uri).user(props.get("user")).password(props.get("password"));
        props.ifPresent("database", builder::database).ifPresent("collection", builder::collection);
        return builder.build();
    }
}
