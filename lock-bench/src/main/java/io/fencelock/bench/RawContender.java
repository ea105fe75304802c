package io.fencelock.bench;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

/**
 * The raw primitive as a lock: one attempt per round trip, and a waiter that simply tries again at
 * once (no release signal), which is what a hand-written lock on the primitive would do.
 */
final class RawContender implements LockContender {
    static final String WAITS_BY = "busy retry of the primitive";

    private final RawPrimitive raw;
    private final Duration ttl;

    RawContender(RawPrimitive raw, Duration ttl) {
        this.raw = raw;
        this.ttl = ttl;
    }

    private final LongAdder attempts = new LongAdder();

    @Override
    public long acquireAttempts() {
        return attempts.sum();
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        String owner = UUID.randomUUID().toString();
        return BusyRetry.until(
                wait, attempts, () -> raw.tryAcquire(name, owner, ttl) ? () -> raw.release(name, owner) : null);
    }

    @Override
    public void close() throws Exception {
        raw.close();
    }
}
