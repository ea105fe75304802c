package io.fencelock.spring;

import io.fencelock.LeaseLoss;
import io.fencelock.LockClient;
import io.fencelock.LockEventListener;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;

/** The client's recent lease losses, for the health indicator and the Actuator endpoint (the last 100). */
public class LeaseLossHistory {
    private static final int KEPT = 100;

    /**
     * One loss.
     *
     * @param name   the lock name
     * @param token  the lease's fencing token
     * @param reason why it was lost
     * @param at     when this application learned of it
     */
    public record Loss(String name, long token, LeaseLoss.Reason reason, Instant at) {}

    private final Deque<Loss> losses = new ConcurrentLinkedDeque<>();
    private final Clock clock;

    public LeaseLossHistory(LockClient client) {
        this(client, Clock.systemUTC());
    }

    LeaseLossHistory(LockClient client, Clock clock) {
        this.clock = clock;
        // a listener of its own, not a bean: the client takes the application's listener beans when built
        client.addListener(new LockEventListener() {
            @Override
            public void lost(LeaseLoss loss) {
                record(loss);
            }
        });
    }

    private void record(LeaseLoss loss) {
        losses.addFirst(new Loss(loss.lease().name(), loss.lease().fencingToken(), loss.reason(), clock.instant()));
        while (losses.size() > KEPT) {
            losses.pollLast();
        }
    }

    /** The losses within {@code window} of now, newest first. */
    public List<Loss> within(Duration window) {
        Instant since = clock.instant().minus(window);
        return losses.stream().filter(l -> l.at().isAfter(since)).toList();
    }
}
