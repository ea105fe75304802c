package io.fencelock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls every listener of a client, isolating their failures, and writes the structured event log:
 * one line of key-value pairs per event on {@code io.fencelock.events} (DEBUG; losses at WARN). The
 * lines name the lock, the lease, the token and the owner, never a connection string or credential.
 */
final class EventFanout implements LockEventListener {
    static final Logger EVENTS = LoggerFactory.getLogger("io.fencelock.events");

    final List<LockEventListener> listeners = new CopyOnWriteArrayList<>();
    private final String client;

    EventFanout(String client, List<LockEventListener> initial) {
        this.client = client;
        listeners.addAll(initial);
    }

    /**
     * Whether anyone takes events: a listener, or the event log at DEBUG. When not, the engine builds no
     * event on the acquire and release path.
     */
    boolean listening() {
        return !listeners.isEmpty() || EVENTS.isDebugEnabled();
    }

    @Override
    public void acquireFinished(AcquireEvent event) {
        if (EVENTS.isDebugEnabled()) {
            Lease lease = event.lease();
            EVENTS.debug(
                    "event=acquire outcome={} lock={} client={} wait_ms={} ttl_ms={}{}{}",
                    event.outcome().name().toLowerCase(java.util.Locale.ROOT),
                    quoted(event.name()),
                    client,
                    millis(event.waited()),
                    event.ttl() == null ? "" : millis(event.ttl()),
                    lease == null
                            ? ""
                            : " lease=" + lease.leaseId() + " token=" + lease.fencingToken() + " owner="
                                    + quoted(String.valueOf(lease.metadata().owner())),
                    event.failure() == null
                            ? ""
                            : " error=" + quoted(event.failure().toString()));
        }
        listeners.forEach(l -> safely(() -> l.acquireFinished(event)));
    }

    @Override
    public void renewed(Lease lease, long sentNanos) {
        if (EVENTS.isTraceEnabled()) {
            EVENTS.trace(
                    "event=renewed lock={} client={} lease={} token={}",
                    quoted(lease.name()),
                    client,
                    lease.leaseId(),
                    lease.fencingToken());
        }
        listeners.forEach(l -> safely(() -> l.renewed(lease, sentNanos)));
    }

    @Override
    public void renewalFailed(Lease lease, Throwable cause, boolean willRetry) {
        if (EVENTS.isDebugEnabled()) {
            EVENTS.debug(
                    "event=renewal_failed lock={} client={} lease={} token={} retry={} valid_ms={} error={}",
                    quoted(lease.name()),
                    client,
                    lease.leaseId(),
                    lease.fencingToken(),
                    willRetry,
                    lease.remainingValidity().toMillis(),
                    quoted(String.valueOf(cause)));
        }
        listeners.forEach(l -> safely(() -> l.renewalFailed(lease, cause, willRetry)));
    }

    @Override
    public void released(Lease lease, boolean freedOnBackend, Duration heldFor) {
        if (EVENTS.isDebugEnabled()) {
            EVENTS.debug(
                    "event=released lock={} client={} lease={} token={} freed={} held_ms={}",
                    quoted(lease.name()),
                    client,
                    lease.leaseId(),
                    lease.fencingToken(),
                    freedOnBackend,
                    millis(heldFor));
        }
        listeners.forEach(l -> safely(() -> l.released(lease, freedOnBackend, heldFor)));
    }

    @Override
    public void lost(LeaseLoss loss) {
        Lease lease = loss.lease();
        EVENTS.warn(
                "event=lost lock={} client={} lease={} token={} reason={}{}",
                quoted(lease.name()),
                client,
                lease.leaseId(),
                lease.fencingToken(),
                loss.reason().name().toLowerCase(java.util.Locale.ROOT),
                loss.cause() == null ? "" : " error=" + quoted(loss.cause().toString()));
        listeners.forEach(l -> safely(() -> l.lost(loss)));
    }

    private static String millis(Duration d) {
        return String.format(java.util.Locale.ROOT, "%.3f", d.toNanos() / 1e6);
    }

    /** A value in double quotes, escaped as in JSON, so that a line stays one line. */
    static String quoted(String value) {
        return io.fencelock.spi.MetadataCodec.quote(value);
    }

    private static void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            Engine.LOG.warn("fencelock: a LockEventListener failed", e);
        }
    }
}
