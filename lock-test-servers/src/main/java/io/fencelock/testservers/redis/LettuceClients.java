package io.fencelock.testservers.redis;

import io.lettuce.core.AbstractRedisClient;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Shutting a Lettuce client down without the risk of waiting forever. {@code AbstractRedisClient.shutdown}
 * waits on its shutdown future with no bound, and that future sometimes never completes (Lettuce issue
 * 2278, seen here: a fixture thread parked for 17 minutes with every Lettuce thread gone). Tests and
 * fixtures shut their clients down through this class, so a stuck shutdown costs seconds, not the run.
 */
public final class LettuceClients {
    private static final long SHUTDOWN_TIMEOUT_SECONDS = 2;
    private static final long WAIT_SECONDS = 10; // beyond the shutdown's own timeout: the future then is stuck

    private LettuceClients() {}

    /** Closes the client's connections and its own resources; returns within about ten seconds in any case. */
    public static void shutDown(AbstractRedisClient client) {
        try {
            // no quiet period: a test's client has nothing left to send
            client.shutdownAsync(0, SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS).get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the client's threads are daemons and its connections are closed or being closed: nothing to wait for
        }
    }
}
