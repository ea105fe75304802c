package io.fencelock;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Calls every listener of a client, isolating their failures. */
final class EventFanout implements LockEventListener {
    final List<LockEventListener> listeners = new CopyOnWriteArrayList<>();

    EventFanout(List<LockEventListener> initial) {
        listeners.addAll(initial);
    }

    @Override
    public void acquired(Lease lease) {
        listeners.forEach(l -> safely(() -> l.acquired(lease)));
    }

    @Override
    public void renewed(Lease lease, long sentNanos) {
        listeners.forEach(l -> safely(() -> l.renewed(lease, sentNanos)));
    }

    @Override
    public void released(Lease lease, boolean freedOnBackend) {
        listeners.forEach(l -> safely(() -> l.released(lease, freedOnBackend)));
    }

    @Override
    public void lost(LeaseLoss loss) {
        Engine.LOG.warn(
                "fencelock: lease {} on '{}' lost ({})",
                loss.lease().leaseId(),
                loss.lease().name(),
                loss.reason());
        listeners.forEach(l -> safely(() -> l.lost(loss)));
    }

    private static void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            Engine.LOG.warn("fencelock: a LockEventListener failed", e);
        }
    }
}
