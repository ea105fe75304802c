package io.fencelock.bench;

import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The provider alone, called through the SPI without the engine (no lease object, watchdog or
 * wake-up subscription): set next to fencelock and the raw primitive, it shows whether an overhead
 * comes from the provider's statement or from the engine around it.
 *
 * <p>Its lease ids are what a minimal caller would make: unique, in the canonical UUID form the
 * engine's ids have (so the backend stores and compares the same 36 characters), from a random
 * half per client and a counter. Not {@link UUID#randomUUID()}: its one shared SecureRandom is a
 * monitor that 64 threads queue on (seconds of blocked time per second in a profile), which
 * measured the JDK's generator rather than the provider.
 */
final class ProviderSpiContender implements LockContender {
    static final String LABEL = "fencelock provider SPI only (no engine)";

    private final LockBackend backend;
    private final long clientBits = ThreadLocalRandom.current().nextLong();
    private final AtomicLong issued = new AtomicLong();

    ProviderSpiContender(LockBackend backend) {
        this.backend = backend;
    }

    /** The provider alone on {@code backend}, its calls timed as fencelock's are ({@link FencelockContender#timed}). */
    static ProviderSpiContender timed(LockBackend backend) {
        return new ProviderSpiContender(new CallTimedBackend(backend));
    }

    @Override
    public long nanosInBackendCalls() {
        return backend instanceof CallTimedBackend timed ? timed.callingThreadNanos() : NOT_COUNTED;
    }

    private final LongAdder attempts = new LongAdder();

    @Override
    public long acquireAttempts() {
        return attempts.sum();
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        return BusyRetry.until(wait, attempts, () -> {
            String leaseId = new UUID(clientBits, issued.incrementAndGet()).toString();
            return backend.tryAcquire(name, leaseId, BackendUnderTest.WORK_TTL).acquired()
                    ? () -> backend.release(name, leaseId, GrantKind.MUTEX)
                    : null;
        });
    }

    @Override
    public void close() {
        backend.close();
    }
}
