package io.fencelock.bench;

import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.UUID;

/**
 * The provider alone, called through the SPI without the engine (no lease object, watchdog or
 * wake-up subscription): set next to fencelock and the raw primitive, it shows whether an overhead
 * comes from the provider's statement or from the engine around it.
 */
final class ProviderSpiContender implements LockContender {
    static final String LABEL = "fencelock provider SPI only (no engine)";

    private final LockBackend backend;

    ProviderSpiContender(LockBackend backend) {
        this.backend = backend;
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        return BusyRetry.until(wait, () -> {
            String leaseId = UUID.randomUUID().toString();
            return backend.tryAcquire(name, leaseId, BackendUnderTest.WORK_TTL).acquired()
                    ? () -> backend.release(name, leaseId)
                    : null;
        });
    }

    @Override
    public void close() {
        backend.close();
    }
}
