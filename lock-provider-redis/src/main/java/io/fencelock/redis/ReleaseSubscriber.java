package io.fencelock.redis;

import io.fencelock.spi.WakeUpSubscription;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Hears releases for one backend: one pub/sub connection, opened by the first subscription,
 * SUBSCRIBEd to the key prefix's channel; each message is a released name, and its subscribers are
 * called on Lettuce's I/O thread. Lettuce reconnects and re-subscribes by itself after a lost
 * connection; releases published meanwhile are missed, which is safe because the engine also polls,
 * and when the re-subscription is confirmed every subscriber is woken once so that nobody waits for
 * a missed signal. If the first connect fails, waiters poll and a later subscription tries again.
 */
final class ReleaseSubscriber implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReleaseSubscriber.class);
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
    private final String channel;
    private final Duration timeout;
    private final String where;
    private final ConcurrentHashMap<String, Set<Subscription>> subscribers = new ConcurrentHashMap<>();
    private final AtomicBoolean confirmedBefore = new AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();
    private StatefulRedisPubSubConnection<String, String> connection; // guarded by lock
    private long retryAt; // guarded by lock; System.nanoTime() before which no new connect is tried
    private boolean failedBefore; // guarded by lock
    private volatile boolean closed;

    /**
     * @param connector opens a new pub/sub connection (blocking), throwing a Lettuce exception on failure
     * @param where     the server for log lines, without credentials
     */
    ReleaseSubscriber(Supplier<StatefulRedisPubSubConnection<String, String>> connector, String channel,
                      Duration timeout, String where) {
        this.connector = connector;
        this.channel = channel;
        this.timeout = timeout;
        this.where = where;
    }

    WakeUpSubscription subscribe(String name, Runnable onRelease) {
        Subscription subscription = new Subscription(name, onRelease);
        subscribers.compute(name, (n, set) -> {
            Set<Subscription> s = set == null ? ConcurrentHashMap.newKeySet() : set;
            s.add(subscription);
            return s;
        });
        listenIfNeeded();
        return subscription;
    }

    /** SUBSCRIBEs before the first subscription returns, so a release right after it is heard. */
    private void listenIfNeeded() {
        lock.lock();
        try {
            if (connection != null || closed || (failedBefore && System.nanoTime() - retryAt < 0)) {
                return;
            }
            StatefulRedisPubSubConnection<String, String> c = null;
            try {
                c = connector.get();
                c.addListener(new Listener());
                c.async().subscribe(channel).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                connection = c;
                failedBefore = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the waiter's own wait will notice
                closeQuietly(c);
            } catch (Exception e) {
                closeQuietly(c);
                failedBefore = true;
                retryAt = System.nanoTime() + RETRY_NANOS;
                log.warn("fencelock: cannot subscribe to releases on {} ({}); waiters poll until a later subscription connects",
                        where, e.toString());
            }
        } finally {
            lock.unlock();
        }
    }

    private void fire(String name) {
        Set<Subscription> set = subscribers.get(name);
        if (set != null) {
            set.forEach(Subscription::fire);
        }
    }

    @Override
    public void close() {
        StatefulRedisPubSubConnection<String, String> c;
        lock.lock();
        try {
            closed = true;
            c = connection;
            connection = null;
        } finally {
            lock.unlock();
        }
        closeQuietly(c);
        subscribers.clear();
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

    private final class Listener extends RedisPubSubAdapter<String, String> {
        @Override
        public void message(String from, String name) {
            if (channel.equals(from)) {
                fire(name);
            }
        }

        @Override
        public void subscribed(String to, long count) {
            // the first confirmation answers our SUBSCRIBE; any later one is Lettuce re-subscribing
            // after a reconnect, and releases may have been missed in between
            if (channel.equals(to) && confirmedBefore.getAndSet(true) && !closed) {
                log.info("fencelock: release subscription on {} is back; waking every waiter once", where);
                subscribers.values().forEach(set -> set.forEach(Subscription::fire));
            }
        }
    }

    private final class Subscription implements WakeUpSubscription {
        private final String name;
        private final Runnable onRelease;

        Subscription(String name, Runnable onRelease) {
            this.name = name;
            this.onRelease = onRelease;
        }

        void fire() {
            try {
                onRelease.run();
            } catch (RuntimeException e) {
                log.warn("fencelock: a release callback for '{}' failed", name, e);
            }
        }

        @Override
        public void close() {
            subscribers.computeIfPresent(name, (n, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
