package io.fencelock.tck.fault;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.tck.ClientConnection;

/**
 * What a child JVM of the TCK does before its measured work: a few grants, renewals and releases of
 * another name, on a client of its own that records nothing. A cold JVM's first grant and renewal load
 * the driver's and the engine's classes and open connections, which on a slow machine made a 1 s
 * lease's first renewal late enough to lose it: a failure of the machine's warm-up, not of the backend.
 */
final class ChildWarmUp {
    private ChildWarmUp() {}

    static void warm(ClientConnection connection, String name, LockOptions options) {
        try (LockClient warm = LockClient.create(connection.open(), options)) {
            for (int i = 0; i < 3; i++) {
                warm.tryAcquire(name + "-warm-up").ifPresent(lease -> {
                    lease.renew();
                    lease.release();
                });
            }
        } catch (RuntimeException e) {
            // the measured work meets and reports whatever failed here
        }
    }
}
