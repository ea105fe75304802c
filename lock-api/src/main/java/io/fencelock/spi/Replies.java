package io.fencelock.spi;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waiting for the reply to a request a provider has already sent to its server.
 */
public final class Replies {
    private Replies() {}

    /**
     * Waits up to {@code timeoutNanos} for {@code reply}. An interrupt does not abandon the wait: the
     * request is already on its way and the server may still apply it, so giving up would leave its
     * outcome unknown (an acquire whose grant nobody learns of, a release that throws after freeing
     * the lock). The wait goes on to the reply or the timeout, and the interrupt is set again
     * afterwards for the caller to see.
     *
     * @throws ExecutionException    the request failed (its cause)
     * @throws TimeoutException      no reply within the timeout; the future is left as it is
     * @throws CancellationException the future was cancelled
     */
    public static <T> T await(Future<T> reply, long timeoutNanos) throws ExecutionException, TimeoutException {
        boolean interrupted = false;
        long end = System.nanoTime() + timeoutNanos;
        try {
            while (true) {
                try {
                    return reply.get(end - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
