package io.fencelock.certify;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import java.util.Optional;
import java.util.UUID;

/**
 * Certifies a backend with the whole contract, from a module that depends on lock-tck alone: all a
 * third party writes is this class and a {@link BackendFixture} that opens its backend. Here the
 * backend is lock-api's in-memory one: every backend the TCK opens shares one named store, as
 * clients of one server do. Properties that need a holder in another JVM, a fault proxy or a
 * restart are recorded as not run: the backend lives in this JVM.
 */
class InMemoryContractTest extends LockBackendContract {
    private final String store = "tck-" + UUID.randomUUID();

    @Override
    protected BackendFixture fixture() {
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return InMemoryLockBackend.builder().store(store).build();
            }

            @Override
            public String description() {
                return "in-memory store of this JVM";
            }

            @Override
            public Optional<String> inThisJvmOnly() {
                return Optional.of("the in-memory backend lives in this JVM: no other process reaches its store");
            }
        };
    }
}
