package io.fencelock.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lettuce's thread pools (event loops, timer), shared by every backend of this JVM that was not
 * given its own {@link ClientResources}, as Lettuce recommends: a backend costs a connection, not a
 * set of threads. Reference-counted: the last backend to close shuts them down.
 *
 * <p>Reconnects are attempted at most {@link #MAX_RECONNECT_DELAY} apart (Lettuce's default backs
 * off to 30 s), so that renewals work again soon after a server comes back.
 */
final class SharedResources {
    static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    private static final ReentrantLock LOCK = new ReentrantLock();
    private static ClientResources resources; // guarded by LOCK
    private static int users; // guarded by LOCK

    private SharedResources() {}

    static ClientResources acquire() {
        LOCK.lock();
        try {
            if (resources == null) {
                resources = DefaultClientResources.builder()
                        .reconnectDelay(
                                Delay.exponential(Duration.ofMillis(2), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
                        .build();
            }
            users++;
            return resources;
        } finally {
            LOCK.unlock();
        }
    }

    static void release(ClientResources released) {
        LOCK.lock();
        try {
            if (released != resources || users == 0) {
                return;
            }
            if (--users == 0) {
                resources.shutdown(0, 2, TimeUnit.SECONDS); // no quiet period: every connection is closed already
                resources = null;
            }
        } finally {
            LOCK.unlock();
        }
    }
}
