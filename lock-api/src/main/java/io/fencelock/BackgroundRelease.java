package io.fencelock;

import io.fencelock.spi.GrantKind;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One release in the background, on the watchdog's renewer thread; owner-checked, so always safe.
 * A release that fails retryably is tried again with backoff until the grant would have expired on
 * the backend anyway ({@code ttl} after now: every grant of it was sent before now). With
 * {@code unknownOutcome}, the acquire's outcome was unknown: a request already sent may still be
 * applied after the first release (etcd over gRPC, MongoDB on another connection), so the lease id
 * is released again a few times at growing intervals. {@code grant} is the call that granted the lease
 * where the engine knows it (a held lease), else {@link GrantKind#EITHER}.
 */
final class BackgroundRelease implements Watchdog.Chore {
    /** After an acquire of unknown outcome: when (after the attempt) its lease id is released again. */
    static final long[] SWEEP_CHECKS_NANOS = {
        TimeUnit.MILLISECONDS.toNanos(50),
        TimeUnit.MILLISECONDS.toNanos(250),
        TimeUnit.MILLISECONDS.toNanos(1250),
        TimeUnit.MILLISECONDS.toNanos(6250)
    };

    private static final long RETRY_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long RETRY_MAX_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Engine engine;
    private final String name;
    private final String leaseId;
    private final GrantKind grant;
    private final long start;
    private final long giveUpAt;
    private final int checks;
    private int nextCheck;
    private long backoff = RETRY_FIRST_NANOS;

    BackgroundRelease(
            Engine engine, String name, String leaseId, GrantKind grant, long ttlNanos, boolean unknownOutcome) {
        this.engine = engine;
        this.name = name;
        this.leaseId = leaseId;
        this.grant = grant;
        this.start = engine.clock.getAsLong();
        this.checks = unknownOutcome ? SWEEP_CHECKS_NANOS.length : 0;
        this.giveUpAt = start + Math.max(ttlNanos, checks == 0 ? 0 : SWEEP_CHECKS_NANOS[checks - 1]);
    }

    @Override
    public long run() {
        try {
            engine.releaseOnBackend(name, leaseId, grant);
        } catch (LockBackendException e) {
            long now = engine.clock.getAsLong();
            if (e.isRetryable() && now - giveUpAt < 0) {
                long pause = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
                backoff = Math.min(RETRY_MAX_NANOS, backoff * 2);
                return pause;
            }
            if (checks == 0) { // a known grant (a sweep may have nothing to free: not worth a warning)
                Engine.LOG.warn(
                        "fencelock: could not release lease {} of '{}' in the background; it expires on the backend by itself: {}",
                        leaseId,
                        name,
                        e.toString());
            }
            return -1;
        }
        long now = engine.clock.getAsLong();
        while (nextCheck < checks && start + SWEEP_CHECKS_NANOS[nextCheck] - now <= 0) {
            nextCheck++; // its time passed while this release was retried: this release covers it
        }
        return nextCheck < checks ? start + SWEEP_CHECKS_NANOS[nextCheck++] - now : -1;
    }
}
