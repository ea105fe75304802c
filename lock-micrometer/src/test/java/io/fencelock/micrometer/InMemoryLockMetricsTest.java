package io.fencelock.micrometer;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import java.util.Optional;
import java.util.UUID;

/**
 * The meters on the in-memory backend, a store per test; it has no server to stop, so its failing
 * backend is one closed under its client.
 */
class InMemoryLockMetricsTest extends LockMetricsContract {
    private final String store = "metrics-" + UUID.randomUUID();

    @Override
    protected BackendFixture fixture() {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return InMemoryLockBackend.builder().store(store).build();
            }

            @Override
            public String description() {
                return "in-memory store " + store;
            }

            @Override
            public Optional<ClientConnection> clientConnection() {
                return Optional.of(inMemory(store));
            }
        };
    }

    @Override
    protected String expectedBackendName() {
        return "inmemory";
    }

    @Override
    protected Breakable breakable() {
        return byClosing(fixture().openBackend(), options());
    }
}
