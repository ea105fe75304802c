package io.fencelock.bench;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.tck.InstrumentedBackend;
import java.time.Duration;
import java.util.Optional;

/** fencelock as users run it: one {@link LockClient} per process, leases released on close. */
final class FencelockContender implements LockContender {
    static final String LABEL = "fencelock";

    private final LockClient client;
    /** The client's backend seen through a counter of its calls, or null where nothing is counted. */
    private final InstrumentedBackend counted;

    FencelockContender(LockClient client) {
        this(client, null);
    }

    /** @param counted the backend {@code client} was created on, wrapped to count its acquire calls */
    FencelockContender(LockClient client, InstrumentedBackend counted) {
        this.client = client;
        this.counted = counted;
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        Optional<Lease> lease = client.acquire(name, wait);
        return lease.<Held>map(l -> l::release).orElse(null);
    }

    /** The engine's attempts through the provider (a hand-over, which is one too, included). */
    @Override
    public long acquireAttempts() {
        return counted == null ? NOT_COUNTED : counted.acquireCalls() + counted.handOverCalls();
    }

    @Override
    public void close() {
        client.close();
    }
}
