package io.fencelock.bench;

import java.time.Duration;
import java.util.UUID;

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

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        String owner = UUID.randomUUID().toString();
        return BusyRetry.until(wait, () -> raw.tryAcquire(name, owner, ttl) ? () -> raw.release(name, owner) : null);
    }

    @Override
    public void close() throws Exception {
        raw.close();
    }
}
