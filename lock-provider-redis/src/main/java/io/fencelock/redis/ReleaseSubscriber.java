package io.fencelock.redis;

import io.fencelock.LockBackendException;
import io.fencelock.spi.ReleaseFeed;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend: one pub/sub connection SUBSCRIBEd to the key prefix's channel;
 * each message is a released name, passed on from Lettuce's I/O thread. Lettuce reconnects and
 * re-subscribes by itself after a lost connection; when the re-subscription is confirmed the feed
 * says so, and the engine wakes every waiter once (releases published meanwhile were missed).
 */
final class ReleaseSubscriber implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseSubscriber.class);

    private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
    private final String channel;
    private final Duration timeout;
    private final String where;
    private volatile StatefulRedisPubSubConnection<String, String> connection;
    private volatile boolean closed;

    /**
     * @param connector opens a new pub/sub connection (blocking), throwing a Lettuce exception on failure
     * @param where     the server for log lines, without credentials
     */
    ReleaseSubscriber(
            Supplier<StatefulRedisPubSubConnection<String, String>> connector,
            String channel,
            Duration timeout,
            String where) {
        this.connector = connector;
        this.channel = channel;
        this.timeout = timeout;
        this.where = where;
    }

    /** SUBSCRIBEs before it returns, so a release right after it is heard. */
    @Override
    public void open(Sink sink) {
        requireOpen();
        StatefulRedisPubSubConnection<String, String> c = null;
        try {
            c = connector.get();
            c.addListener(new Listener(sink));
            c.async().subscribe(channel).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the waiter's own wait will notice
            closeQuietly(c);
            throw new LockBackendException("interrupted while subscribing to releases on " + where, true);
        } catch (Exception e) {
            closeQuietly(c);
            throw new LockBackendException("cannot subscribe to releases on " + where + " (" + e + ")", true);
        }
        StatefulRedisPubSubConnection<String, String> previous = connection;
        connection = c;
        closeQuietly(previous);
        if (closed) {
            closeQuietly(c);
            requireOpen();
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the release subscription of " + where + " is closed");
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(connection);
        connection = null;
    }

    private static void closeQuietly(StatefulRedisPubSubConnection<String, String> c) {
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.debug("fencelock: closing the release subscription failed: {}", e.toString());
            }
        }
    }

    @Override
    public String toString() {
        return where;
    }

    private final class Listener extends RedisPubSubAdapter<String, String> {
        private final Sink sink;
        private volatile boolean confirmedBefore;

        Listener(Sink sink) {
            this.sink = sink;
        }

        @Override
        public void message(String from, String name) {
            if (channel.equals(from) && !closed) {
                sink.released(name);
            }
        }

        @Override
        public void subscribed(String to, long count) {
            // the first confirmation answers our SUBSCRIBE; any later one is Lettuce re-subscribing
            // after a reconnect, and releases may have been missed in between
            if (channel.equals(to)) {
                if (confirmedBefore && !closed) {
                    sink.resumed();
                }
                confirmedBefore = true;
            }
        }
    }
}
