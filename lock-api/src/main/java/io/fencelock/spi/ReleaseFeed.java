package io.fencelock.spi;

import java.time.Duration;

/**
 * Where a backend's release signals come from ({@link io.fencelock.Capability#WAKE_ON_RELEASE}):
 * the backend's primitive for them, and nothing more. The engine drives it: it opens the feed
 * before the first wait, tells it which names have waiters (for a feed that listens per name),
 * reads it (for a feed that must be read), reopens it with backoff when it broke, and fans each
 * signal out to the waiters of the name, waking every waiter after a break. A feed never sleeps,
 * retries or schedules; every method but {@link #read} is one attempt that returns promptly.
 *
 * <p>Signals may be missed (a lost connection): the engine polls as well. The engine opens the
 * feed, and {@linkplain #watch watches} a name, before its first attempt on that name and waits only
 * after an attempt was refused, so a feed need signal only a release of a lock on which a
 * {@code tryAcquire} was refused after that; the PostgreSQL and Redis providers do just that, to keep
 * the uncontended release free of a signal.
 */
public interface ReleaseFeed extends AutoCloseable {

    /**
     * Starts listening in one attempt: every release heard from now until {@link #close()} (or
     * until the feed breaks) goes to {@code sink}. When it returns, a release that follows is heard.
     * May be called again after the feed broke, to reopen it (no name is watched then: the engine
     * watches them again). One engine drives a feed; a backend returns one feed per call or the same.
     *
     * @throws io.fencelock.LockBackendException when the backend cannot be reached now
     */
    void open(Sink sink);

    /**
     * Whether the engine must call {@link #read} in a loop (a connection that is read, like
     * PostgreSQL's {@code LISTEN}); a feed whose driver calls the sink by itself (the default) says no.
     */
    default boolean needsReading() {
        return false;
    }

    /**
     * Blocks up to {@code max}, passing the signals that arrive to the sink; returns early when
     * closed. Only called when {@link #needsReading()}, by one engine thread at a time.
     *
     * @throws io.fencelock.LockBackendException when the feed broke (the engine reopens it)
     */
    default void read(Duration max) {
        throw new UnsupportedOperationException("this feed calls its sink by itself");
    }

    /** A waiter for {@code name} begins (the first of this feed's); a feed that listens per name starts here. */
    default void watch(String name) {}

    /** The last waiter for {@code name} is gone. */
    default void unwatch(String name) {}

    /**
     * Stops listening for good; the sink is called no more, and {@link #open} and {@link #read}
     * throw {@link IllegalStateException} from now on (the backend's close closes its feed too).
     */
    @Override
    void close();

    /** Where a feed delivers; its methods return quickly and never throw. */
    interface Sink {
        /** A release of {@code name} was heard. */
        void released(String name);

        /**
         * A release granted {@code name} to {@code leaseId}, the lease under which a waiter of this client was
         * queued ({@link io.fencelock.Capability#GRANT_ON_RELEASE}), with {@code token}, expiring at
         * {@code expiresAt} on the backend's clock (for display). The engine's registry gives it to the waiter
         * or, when none takes it, releases it; a sink that cannot take grants wakes the name's waiters.
         */
        default void granted(String name, String leaseId, long token, java.time.Instant expiresAt) {
            released(name);
        }

        /**
         * The feed broke (outside a {@link #read}); signals are missed until the engine has reopened it.
         * Logged by the engine, without credentials: the cause's message must carry none.
         */
        void broken(Throwable cause);

        /** The driver reconnected by itself after a break: signals may have been missed, so every waiter is woken. */
        void resumed();
    }
}
