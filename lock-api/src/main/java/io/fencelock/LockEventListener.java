package io.fencelock;

import java.time.Duration;

/**
 * Observes the leases of one client: for logging, metrics, or recording a history. Called on the
 * thread that did the operation (the watchdog's for automatic renewals), after the lease's state
 * has changed; keep it short. An exception thrown here is logged and ignored.
 *
 * <p>Every client also writes one structured log line per event to the SLF4J logger
 * {@code io.fencelock.events}: key-value pairs at DEBUG, losses at WARN, never a credential.
 */
public interface LockEventListener {

    /** Every call to acquire a lock, once it ends: granted, refused, timed out or failed, with the time it took. */
    default void acquireFinished(AcquireEvent event) {
        if (event.outcome() == AcquireEvent.Outcome.GRANTED) {
            acquired(event.lease());
        }
    }

    /** A lease was granted; called by {@link #acquireFinished} unless that is overridden. */
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

    /**
     * A renewal did not reach the backend or got no answer. The lease stays held until its local
     * validity deadline; {@code willRetry} says whether the watchdog tries again before it.
     */
    default void renewalFailed(Lease lease, Throwable cause, boolean willRetry) {}

    default void released(Lease lease, boolean freedOnBackend) {}

    /** As {@link #released(Lease, boolean)}, with how long the lease was held; calls it unless overridden. */
    default void released(Lease lease, boolean freedOnBackend, Duration heldFor) {
        released(lease, freedOnBackend);
    }

    default void lost(LeaseLoss loss) {}
}
