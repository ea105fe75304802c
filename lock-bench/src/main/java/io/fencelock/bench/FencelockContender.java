package io.fencelock.bench;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.InstrumentedBackend;
import java.time.Duration;
import java.util.Optional;

/** fencelock as users run it: one {@link LockClient} per process, leases released on close. */
final class FencelockContender implements LockContender {
    static final String LABEL = "fencelock";

    private final LockClient client;
    /** The client's backend seen through a counter of its calls, or null where nothing is counted. */
    private final InstrumentedBackend counted;
    /** The client's backend seen through a timer of its calls, or null where nothing is timed. */
    private final CallTimedBackend timed;

    private FencelockContender(LockClient client, InstrumentedBackend counted, CallTimedBackend timed) {
        this.client = client;
        this.counted = counted;
        this.timed = timed;
    }

    /** A client with the default options on {@code backend}, its calls timed. */
    static FencelockContender timed(LockBackend backend) {
        CallTimedBackend timed = new CallTimedBackend(backend);
        return new FencelockContender(LockClient.create(timed, LockOptions.defaults()), null, timed);
    }

    /** A client with the default options on {@code backend}, its acquire calls counted. */
    static FencelockContender counted(LockBackend backend) {
        InstrumentedBackend counted = new InstrumentedBackend(backend);
        return new FencelockContender(LockClient.create(counted, LockOptions.defaults()), counted, null);
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
    public long nanosInBackendCalls() {
        return timed == null ? NOT_COUNTED : timed.callingThreadNanos();
    }

    @Override
    public void close() {
        client.close();
    }
}
