package io.fencelock.redis;

import io.fencelock.LockBackendException;
import io.fencelock.spi.ReleaseFeed;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release feed of one backend: one pub/sub connection SUBSCRIBEd to the key prefix's channel and
 * to this backend's own wake channel; each message is a released name, passed on from Lettuce's I/O
 * thread. Lettuce reconnects and re-subscribes by itself after a lost connection; when the
 * re-subscription is confirmed the feed says so, and the engine wakes every waiter once (releases
 * published meanwhile were missed).
 *
 * <p>It also keeps this backend's places in the names' wake-up queues (KeyLayout): the engine
 * watches a name before its head's first attempt, so an attempt on a watched name is a waiter's,
 * and its refusal puts the backend in the queue (at the place of its first refusal, kept until it
 * stops waiting). When the engine unwatches a name this backend still queues for, or a wake-up
 * arrives for a name nobody here waits for any more, the backend leaves the queue and passes the
 * wake-up on ({@code leave}), so no wake-up is lost with a waiter that left.
 */
final class ReleaseSubscriber implements ReleaseFeed {
    private static final Logger log = LoggerFactory.getLogger(ReleaseSubscriber.class);

    private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
    private final String channel;
    private final String wakeChannel;
    private final String waiterId;
    private final Consumer<String> leave;
    private final Duration timeout;
    private final String where;
    /** Names the engine waits for. */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    /** Names whose queue holds this backend, with its place (server ms of its first refusal). */
    private final ConcurrentHashMap<String, String> places = new ConcurrentHashMap<>();
    /** Names for which this backend's grant request stands: the lease it was written with, when, for which TTL. */
    private final ConcurrentHashMap<String, Request> requests = new ConcurrentHashMap<>();

    /**
     * A grant request as written: a release grants {@code leaseId} ({@code GRANT_ON_RELEASE}); {@code granted}
     * once a release did (the request is gone, but an attempt still learns of the grant by its lease).
     */
    record Request(String leaseId, long writtenAt, Duration ttl, boolean granted) {
        /** Whether a refusal at {@code now} (nanoTime) rewrites it: granted, another TTL, or a quarter of its TTL old. */
        boolean stale(Duration asked, long now) {
            return granted || !ttl.equals(asked) || now - writtenAt >= ttl.toNanos() / 4;
        }
    }

    private volatile StatefulRedisPubSubConnection<String, String> connection;
    private volatile boolean closed;

    /**
     * @param connector opens a new pub/sub connection (blocking), throwing a Lettuce exception on failure
     * @param where     the server for log lines, without credentials
     */
    ReleaseSubscriber(
            Supplier<StatefulRedisPubSubConnection<String, String>> connector,
            KeyLayout keys,
            String waiterId,
            Consumer<String> leave,
            Duration timeout,
            String where) {
        this.connector = connector;
        this.channel = keys.channel;
        this.wakeChannel = keys.wakeChannel(waiterId);
        this.waiterId = waiterId;
        this.leave = leave;
        this.timeout = timeout;
        this.where = where;
    }

    String waiterId() {
        return waiterId;
    }

    /** This backend's id in the wake-up queues, or '' when the engine does not wait for {@code name}. */
    String waiterFor(String name) {
        return watched.contains(name) ? waiterId : "";
    }

    /** This backend's place in {@code name}'s queue, or '' when it has none. */
    String placeIn(String name) {
        return places.getOrDefault(name, "");
    }

    /** An attempt of a waiter was refused at server time {@code nowMs}: its place is kept from the first refusal. */
    void refused(String name, long nowMs) {
        if (watched.contains(name)) {
            places.putIfAbsent(name, Long.toString(nowMs));
        }
    }

    /** An attempt was granted: the grant took this backend out of the queue, with its grant request. */
    void granted(String name) {
        places.remove(name);
        requests.remove(name);
    }

    /** This backend's standing grant request for {@code name}, or null. */
    Request request(String name) {
        return requests.get(name);
    }

    /** A waiter's refusal wrote this backend's grant request for {@code name} with {@code leaseId}. */
    void requested(String name, String leaseId, long writtenAt, Duration ttl) {
        if (watched.contains(name)) {
            requests.put(name, new Request(leaseId, writtenAt, ttl, false));
        }
    }

    /** The release of {@code leaseId} withdrew this backend's request for {@code name} if it was written with it. */
    void withdrawn(String name, String leaseId) {
        Request r = requests.get(name);
        if (r != null && r.leaseId().equals(leaseId) && requests.remove(name, r)) {
            places.remove(name);
        }
    }

    @Override
    public void watch(String name) {
        watched.add(name);
    }

    @Override
    public void unwatch(String name) {
        watched.remove(name);
        requests.remove(name);
        if (places.remove(name) != null) {
            leave.accept(name);
        }
    }

    /** SUBSCRIBEs before it returns, so a release right after it is heard. */
    @Override
    public void open(Sink sink) {
        requireOpen();
        StatefulRedisPubSubConnection<String, String> c = null;
        try {
            c = connector.get();
            c.addListener(new Listener(sink));
            c.async().subscribe(channel, wakeChannel).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
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
            if (closed) {
                return;
            }
            if (channel.equals(from)) {
                sink.released(name);
            } else if (wakeChannel.equals(from)) {
                int lf = name.indexOf('\n');
                if (lf >= 0) {
                    granted(name, lf);
                } else if (watched.contains(name)) {
                    sink.released(name);
                } else {
                    places.remove(name);
                    leave.accept(name); // woken after the wait ended: pass the wake-up on
                }
            }
        }

        /**
         * A release granted this backend's request ({@code name LF lease LF token LF expiry ms}, GRANT_NEXT): it
         * took the place and the request, and the engine takes the grant or, when nobody waits under that
         * lease and this client does not hold it already (its waiter may have learned of it from an attempt),
         * releases it, which grants the next.
         */
        private void granted(String message, int lf) {
            String[] parts = message.split("\n", -1);
            String name = message.substring(0, lf);
            if (parts.length != 4) {
                log.debug("fencelock: an unreadable grant message for '{}' on {}", name, where);
                sink.released(name);
                return;
            }
            places.remove(name);
            Request r = requests.get(name);
            if (r != null && r.leaseId().equals(parts[1])) {
                requests.replace(name, r, new Request(r.leaseId(), r.writtenAt(), r.ttl(), true));
            }
            try {
                sink.granted(name, parts[1], Long.parseLong(parts[2]), Instant.ofEpochMilli(Long.parseLong(parts[3])));
            } catch (NumberFormatException unreadable) {
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
