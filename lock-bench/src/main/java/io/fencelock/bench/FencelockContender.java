package io.fencelock.bench;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import java.time.Duration;
import java.util.Optional;

/** fencelock as users run it: one {@link LockClient} per process, leases released on close. */
final class FencelockContender implements LockContender {
    static final String LABEL = "fencelock";

    private final LockClient client;

    FencelockContender(LockClient client) {
        this.client = client;
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        Optional<Lease> lease = client.acquire(name, wait);
        return lease.<Held>map(l -> l::release).orElse(null);
    }

    @Override
    public void close() {
        client.close();
    }
}
