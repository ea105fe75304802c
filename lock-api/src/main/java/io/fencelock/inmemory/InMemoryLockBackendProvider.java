package io.fencelock.inmemory;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@code inmemory:<store name>}: an {@link InMemoryLockBackend} on the store of that name,
 * shared by every backend of this JVM opened on it. Takes no properties.
 */
public final class InMemoryLockBackendProvider implements LockBackendProvider {
    static final String PREFIX = "inmemory:";

    @Override
    public String name() {
        return "inmemory";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of(PREFIX);
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        ProviderProperties.check(this, uri, properties, Set.of());
        String store = uri.substring(PREFIX.length());
        if (store.isBlank()) {
            throw new IllegalArgumentException("'" + uri + "' names no store: write inmemory:<store name>");
        }
        return InMemoryLockBackend.builder().store(store).build();
    }
}
