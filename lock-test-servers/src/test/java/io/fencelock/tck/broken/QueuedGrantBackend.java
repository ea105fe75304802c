package io.fencelock.tck.broken;

import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.ReleaseFeed;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-memory backend, whose release grants the first queued waiting client ({@code GRANT_ON_RELEASE}),
 * with one seeded flaw of a provider that queues grants:
 * <ul>
 *   <li>{@link Flaw#SILENT_GRANT}: the release grants the queued client but tells nobody (no grant on the
 *       feed, a plain refusal to the client's later attempts), so the client waits for a lock it holds;</li>
 *   <li>{@link Flaw#UNRELEASABLE_QUEUED_GRANT}: a client keeps its queue place after its waiters stopped
 *       waiting (its leave and the release of its queued lease withdraw nothing), and a grant a release made
 *       cannot be released
 *       (a provider that records it under something else than the lease id it told): a grant to a client
 *       that left stands until it expires;</li>
 *   <li>{@link Flaw#KEEPS_PLACES_OF_WAITERS_THAT_LEFT}: the sound variant of the last one: the place is kept,
 *       the grant to it is released as any grant, and the engine lets it go;</li>
 *   <li>{@link Flaw#PLACE_NOT_WITHDRAWN}: the place is kept, and the release of the lease a client is queued
 *       under (holding nothing) does not withdraw it, so the next release grants a client nobody waits in;
 *       its grants reach the client 50 ms after the release (as over a network), so the grant stands when the
 *       next caller asks.</li>
 * </ul>
 */
final class QueuedGrantBackend extends OnInMemoryStore {
    enum Flaw {
        SILENT_GRANT,
        UNRELEASABLE_QUEUED_GRANT,
        KEEPS_PLACES_OF_WAITERS_THAT_LEFT,
        PLACE_NOT_WITHDRAWN
    }

    /** Delivers PLACE_NOT_WITHDRAWN's grants late; one daemon thread for all such backends. */
    private static final java.util.concurrent.ScheduledExecutorService LATE =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "late-grants");
                t.setDaemon(true);
                return t;
            });

    private final Flaw flaw;
    /** Lease ids a release granted to this client. */
    private final Set<String> grantedByRelease = ConcurrentHashMap.newKeySet();

    QueuedGrantBackend(String storeName, Flaw flaw) {
        super(storeName);
        this.flaw = flaw;
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        AcquireResult result = store.tryAcquire(name, leaseId, ttl, metadata);
        if (flaw == Flaw.SILENT_GRANT && result.queuedGrant()) {
            return AcquireResult.held(null);
        }
        return result;
    }

    @Override
    public boolean release(String name, String leaseId) {
        if (flaw == Flaw.UNRELEASABLE_QUEUED_GRANT && grantedByRelease.contains(leaseId)) {
            return false;
        }
        if ((flaw == Flaw.PLACE_NOT_WITHDRAWN || flaw == Flaw.UNRELEASABLE_QUEUED_GRANT)
                && !store.inspect(name).map(i -> leaseId.equals(i.leaseId())).orElse(false)) {
            return false; // holds nothing: the queue place stays
        }
        return store.release(name, leaseId);
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return store.releaseFeed().map(Feed::new);
    }

    @Override
    public String toString() {
        return "QueuedGrantBackend[" + flaw + "]";
    }

    /** The store's feed, with the flaw's view of grants and of waiters that left. */
    private final class Feed implements ReleaseFeed {
        private final ReleaseFeed feed;

        Feed(ReleaseFeed feed) {
            this.feed = feed;
        }

        @Override
        public void open(Sink sink) {
            feed.open(new Sink() {
                @Override
                public void released(String name) {
                    sink.released(name);
                }

                @Override
                public void granted(String name, String leaseId, long token, Instant expiresAt) {
                    grantedByRelease.add(leaseId);
                    if (flaw == Flaw.PLACE_NOT_WITHDRAWN) {
                        LATE.schedule(
                                () -> sink.granted(name, leaseId, token, expiresAt),
                                50,
                                java.util.concurrent.TimeUnit.MILLISECONDS);
                    } else if (flaw != Flaw.SILENT_GRANT) {
                        sink.granted(name, leaseId, token, expiresAt);
                    }
                }

                @Override
                public void broken(Throwable cause) {
                    sink.broken(cause);
                }

                @Override
                public void resumed() {
                    sink.resumed();
                }
            });
        }

        @Override
        public void watch(String name) {
            feed.watch(name);
        }

        @Override
        public void unwatch(String name) {
            if (flaw == Flaw.SILENT_GRANT) {
                feed.unwatch(name);
            } // otherwise the place stays, as where a leave runs later
        }

        @Override
        public void close() {
            feed.close();
        }
    }
}
