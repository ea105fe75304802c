package io.fencelock;

/**
 * Observes the leases of one client: for logging, metrics, or recording a history. Called on the
 * thread that did the operation (the watchdog's for automatic renewals), after the lease's state
 * has changed; keep it short. An exception thrown here is logged and ignored.
 */
public interface LockEventListener {
    default void acquired(Lease lease) {
    }

    default void renewed(Lease lease) {
    }

    default void released(Lease lease, boolean freedOnBackend) {
    }

    default void lost(LeaseLoss loss) {
    }
}
