package io.fencelock.certify;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;

/**
 * Certifies a backend with the whole contract, from a module that depends on lock-tck alone: all a
 * third party writes is this class and a {@link BackendFixture} that opens its backend. Every
 * {@link #fixture()} call opens a new client of one shared in-memory store, as separate processes
 * would open connections to one server; the fault properties that need a server to crash or a
 * proxy to break are recorded as not injected.
 */
class InMemoryContractTest extends LockBackendContract {
    private static final InMemoryBackend.Store STORE = new InMemoryBackend.Store();

    @Override
    protected BackendFixture fixture() {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return new InMemoryBackend(STORE);
            }

            @Override
            public String description() {
                return "in-memory backend (one JVM)";
            }
        };
    }
}
