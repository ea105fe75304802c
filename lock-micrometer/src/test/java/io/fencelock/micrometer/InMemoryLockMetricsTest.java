package io.fencelock.micrometer;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.tck.ClientConnection;
import java.util.Map;
import java.util.UUID;

/**
 * The meters on the in-memory backend, a store per test; it has no server to stop, so its failing
 * backend is one closed under its client.
 */
class InMemoryLockMetricsTest extends LockMetricsContract {
    private final String store = "metrics-" + UUID.randomUUID();

    @Override
    protected ClientConnection connection() {
        return new ClientConnection("inmemory:" + store, Map.of());
    }

    @Override
    protected String expectedBackendName() {
        return "inmemory";
    }

    @Override
    protected Breakable breakable() {
        return byClosing(InMemoryLockBackend.builder().store(store).build());
    }
}
