package io.fencelock.tck;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;

/**
 * What the kit does before it judges anything in a JVM: a few grants, renewals and releases of another
 * name, on a client of its own that records nothing. A fresh JVM's first grant and renewal load the
 * driver's and the engine's classes and open connections, which on a slow machine took longer than a
 * 500 ms lock's validity window (the engine then rightly turns the late grant down) or made a 1 s lease's
 * first renewal late enough to lose it: a cost of the machine's warm-up, not a property of the backend.
 * The contract warms up before its properties, every child JVM (a holder, a leader candidate, a
 * task-spreading instance) before its measured work.
 */
public final class WarmUp {
    private WarmUp() {}

    /** Takes, renews and releases {@code name + "-warm-up"} three times on {@code backend}, then closes it. */
    public static void warm(LockBackend backend, String name, LockOptions options) {
        try (LockClient warm = LockClient.create(backend, options)) {
            for (int i = 0; i < 3; i++) {
                warm.tryAcquire(name + "-warm-up").ifPresent(lease -> {
                    lease.renew();
                    lease.release();
                });
            }
        } catch (RuntimeException e) {
            // whatever failed here, the judged work meets and reports
        }
    }
}
