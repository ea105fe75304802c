package io.fencelock;

/**
 * Observes the leases of one client: for logging, metrics, or recording a history. Called on the
 * thread that did the operation (the watchdog's for automatic renewals), after the lease's state
 * has changed; keep it short. An exception thrown here is logged and ignored.
 */
public interface LockEventListener {
    default void acquired(Lease lease) {}

    default void renewed(Lease lease) {}

    /**
     * As {@link #renewed(Lease)}, with the {@link System#nanoTime()} at which the renewal was sent
     * (a watchdog renewal's answer may arrive well after it left). Calls {@link #renewed(Lease)}
     * unless overridden.
     */
    default void renewed(Lease lease, long sentNanos) {
        renewed(lease);
    }

    default void released(Lease lease, boolean freedOnBackend) {}

    default void lost(LeaseLoss loss) {}
}
