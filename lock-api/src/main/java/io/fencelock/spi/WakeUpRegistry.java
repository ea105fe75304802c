package io.fencelock.spi;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's one wake-up registry over a backend's {@link ReleaseFeed}: lock name to
 * subscribers, each callback isolated from the others, every subscriber woken once after the feed
 * was broken (signals may have been missed), and one reconnect policy (jittered backoff from
 * 100 ms to 5 s). The feed is opened by the first subscription, before it returns, so a release
 * right after it is heard. One daemon thread drives the feed: it reads a feed that must be read,
 * and reopens a broken one; a feed whose driver calls it back needs that thread only after a break.
 *
 * <p>Public so that a provider's tests and the TCK listen to a feed exactly as the engine does.
 */
public final class WakeUpRegistry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WakeUpRegistry.class);
    private static final Duration READ_MAX = Duration.ofSeconds(10);
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long JOIN_MILLIS = 5_000;

    private final ReleaseFeed feed;
    private final String threadName;
    private final Grants grants;
    /**
     * Each watched name's subscribers, an array replaced (never changed) inside the map's compute: an
     * acquire subscribes and unsubscribes once each, usually alone on its name, and a one-element
     * array is all that costs (a concurrent set per name cost more than the rest of the subscription).
     */
    private final ConcurrentHashMap<String, Subscription[]> subscribers = new ConcurrentHashMap<>();

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private volatile boolean started;
    private volatile boolean open;
    private Thread driver; // guarded by lock
    private volatile boolean closed;

    /**
     * @param feed       the backend's feed; the registry closes it
     * @param threadName the name of the thread that drives it
     */
    public WakeUpRegistry(ReleaseFeed feed, String threadName) {
        this(feed, threadName, null);
    }

    /**
     * @param feed       the backend's feed; the registry closes it
     * @param threadName the name of the thread that drives it
     * @param grants     takes the grants a release made to this client's queued waiters
     *                   ({@link io.fencelock.Capability#GRANT_ON_RELEASE}); null: such a grant wakes the
     *                   name's subscribers, as a release does
     */
    public WakeUpRegistry(ReleaseFeed feed, String threadName, Grants grants) {
        this.feed = java.util.Objects.requireNonNull(feed, "feed");
        this.threadName = threadName;
        this.grants = grants;
    }

    /** Where the grants a release made to a queued waiter of this client go; called on a feed thread, returns quickly. */
    @FunctionalInterface
    public interface Grants {
        void granted(String name, String leaseId, long token, java.time.Instant expiresAt);
    }

    /** Calls {@code onRelease} (on a feed or registry thread; it must return quickly) for each release of {@code name} heard. */
    public WakeUpSubscription subscribe(String name, Runnable onRelease) {
        Subscription subscription = new Subscription(name, onRelease);
        startIfNeeded();
        subscribers.compute(name, (n, current) -> {
            if (current == null) {
                watch(n); // inside compute: a watch and an unwatch of one name never cross
                return new Subscription[] {subscription};
            }
            Subscription[] more = Arrays.copyOf(current, current.length + 1);
            more[current.length] = subscription;
            return more;
        });
        return subscription;
    }

    private void startIfNeeded() {
        if (started) {
            return;
        }
        lock.lock();
        try {
            if (started || closed) {
                return;
            }
            started = true;
            // opened before the first subscribe() returns; a failure leaves the reconnecting to the driver
            tryOpen(false);
            if (!open || feed.needsReading()) {
                startDriver();
            }
        } finally {
            lock.unlock();
        }
    }

    /** One attempt to open the feed. */
    private void tryOpen(boolean reopening) {
        try {
            feed.open(sink);
            open = true;
            if (closed) {
                return;
            }
            if (reopening) {
                LOG.info("fencelock: the release feed {} is back; waking every waiter once", feed);
                for (String name : subscribers.keySet()) {
                    subscribers.computeIfPresent(name, (n, current) -> {
                        watch(n); // inside compute, as in subscribe
                        return current;
                    });
                }
            }
        } catch (IllegalStateException feedClosed) {
            closed = true; // its backend closed it: nothing more to hear
            LOG.debug("fencelock: the release feed {} is closed", feed);
        } catch (RuntimeException e) {
            if (reopening) {
                LOG.debug("fencelock: cannot reopen the release feed {}: {}", feed, e.toString());
            } else {
                LOG.warn(
                        "fencelock: cannot listen for releases on {} ({}); waiters poll until it reconnects",
                        feed,
                        e.toString());
            }
        }
    }

    private void startDriver() {
        if (driver == null && !closed) {
            driver = new Thread(this::drive, threadName);
            driver.setDaemon(true);
            driver.start();
        }
    }

    private void drive() {
        long backoff = MIN_BACKOFF_NANOS;
        while (!closed) {
            if (!open) {
                if (!pause(backoff)) {
                    return;
                }
                tryOpen(true);
                backoff = open ? MIN_BACKOFF_NANOS : Math.min(backoff * 2, MAX_BACKOFF_NANOS);
                if (open) {
                    wakeEveryone();
                }
            } else if (feed.needsReading()) {
                try {
                    feed.read(READ_MAX);
                } catch (IllegalStateException feedClosed) {
                    return;
                } catch (RuntimeException e) {
                    broken(e);
                }
            } else if (!awaitBreak()) {
                return;
            }
        }
    }

    /** Sleeps a jittered {@code backoff}; false when closed meanwhile. */
    private boolean pause(long backoff) {
        lock.lock();
        try {
            long left = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
            while (!closed && left > 0) {
                left = changed.awaitNanos(left);
            }
            return !closed;
        } catch (InterruptedException e) {
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Sleeps while a feed that calls back by itself is open; false when closed. */
    private boolean awaitBreak() {
        lock.lock();
        try {
            while (!closed && open) {
                changed.await();
            }
            return !closed;
        } catch (InterruptedException e) {
            return false;
        } finally {
            lock.unlock();
        }
    }

    private void broken(Throwable cause) {
        lock.lock();
        try {
            if (closed || !open) {
                return;
            }
            open = false;
            LOG.warn(
                    "fencelock: lost the release feed {} ({}); reconnecting, waiters poll meanwhile",
                    feed,
                    cause.toString());
            changed.signalAll();
            startDriver();
        } finally {
            lock.unlock();
        }
    }

    private void watch(String name) {
        try {
            feed.watch(name);
        } catch (RuntimeException e) {
            LOG.warn("fencelock: cannot watch '{}' on {} ({}); its waiters poll", name, feed, e.toString());
        }
    }

    private void wakeEveryone() {
        subscribers.values().forEach(WakeUpRegistry::fire);
    }

    private final ReleaseFeed.Sink sink = new ReleaseFeed.Sink() {
        @Override
        public void released(String name) {
            Subscription[] current = subscribers.get(name);
            if (current != null) {
                fire(current);
            }
        }

        @Override
        public void granted(String name, String leaseId, long token, java.time.Instant expiresAt) {
            if (grants == null) {
                released(name);
                return;
            }
            try {
                grants.granted(name, leaseId, token, expiresAt);
            } catch (RuntimeException e) {
                LOG.warn("fencelock: taking a grant of '{}' by a release failed", name, e);
            }
        }

        @Override
        public void broken(Throwable cause) {
            WakeUpRegistry.this.broken(cause);
        }

        @Override
        public void resumed() {
            if (!closed) {
                LOG.info("fencelock: the release feed {} reconnected; waking every waiter once", feed);
                wakeEveryone();
            }
        }
    };

    /** Closes the feed and stops the driver; no callback runs afterwards. */
    @Override
    public void close() {
        Thread running;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            changed.signalAll();
            running = driver;
        } finally {
            lock.unlock();
        }
        try {
            feed.close(); // ends a read in progress
        } catch (RuntimeException e) {
            LOG.debug("fencelock: closing the release feed {} failed: {}", feed, e.toString());
        }
        if (running != null && running != Thread.currentThread()) {
            try {
                running.join(JOIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        subscribers.values().forEach(current -> {
            for (Subscription s : current) {
                s.done = true;
            }
        });
        subscribers.clear();
    }

    private static void fire(Subscription[] subscriptions) {
        for (Subscription s : subscriptions) {
            s.fire();
        }
    }

    private final class Subscription implements WakeUpSubscription {
        private final String name;
        private final Runnable onRelease;
        private volatile boolean done;

        Subscription(String name, Runnable onRelease) {
            this.name = name;
            this.onRelease = onRelease;
        }

        void fire() {
            if (done) {
                return;
            }
            try {
                onRelease.run();
            } catch (RuntimeException e) {
                LOG.warn("fencelock: a release callback for '{}' failed", name, e);
            }
        }

        @Override
        public void close() {
            done = true;
            subscribers.computeIfPresent(name, (n, current) -> {
                int at = 0;
                while (at < current.length && current[at] != this) {
                    at++;
                }
                if (at == current.length) {
                    return current; // closed before
                }
                if (current.length > 1) {
                    Subscription[] fewer = new Subscription[current.length - 1];
                    System.arraycopy(current, 0, fewer, 0, at);
                    System.arraycopy(current, at + 1, fewer, at, fewer.length - at);
                    return fewer;
                }
                try {
                    feed.unwatch(n);
                } catch (RuntimeException e) {
                    LOG.debug("fencelock: unwatching '{}' on {} failed: {}", n, feed, e.toString());
                }
                return null;
            });
        }
    }
}
