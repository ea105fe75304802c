package io.fencelock;

import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.spi.WakeUpRegistry;
import io.fencelock.spi.WakeUpSubscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's shared state and its work, behind the {@link LockClient} facade: the backend, the
 * held leases, the local wait lines, the events, the wake-up registry and the background work (the
 * {@link Watchdog}). {@link ManagedLease} and the watchdog work on this object, never on the facade.
 *
 * <p>Time is read from {@link #clock} (monotonic nanoseconds): {@link System#nanoTime()} in use,
 * a clock the test moves in the engine's unit tests, which then drive the watchdog by hand
 * ({@code runThreads} false) instead of by its threads.
 */
final class Engine implements AutoCloseable {
    static final Logger LOG = LoggerFactory.getLogger(LockClient.class);
    private static final AtomicInteger CLIENT_NUMBER = new AtomicInteger();

    final LockBackend backend;
    final LockOptions options;
    final Set<Capability> capabilities;
    final LongSupplier clock;
    final WaitLines waitLines = new WaitLines();
    /** Where no release signal wakes a waiter: when each name is likely released, learned from this client's waits. */
    final ReleaseForecasts forecasts = new ReleaseForecasts();

    final EventFanout events;
    final Watchdog watchdog;
    /** The provider's name, or the backend's class name. */
    final String backendName;
    /** This client's name in threads and logs ({@code fencelock-N}). */
    final String clientId;
    /** The owner description of grants that name none. */
    final String defaultOwner;
    /** The metadata of a grant that names none: only the default owner, validated once rather than per acquire. */
    private final LockMetadata defaultMetadata;

    private final Map<String, ManagedLease> held = new ConcurrentHashMap<>();
    /**
     * This client's mutex grants by name, from the grant until the backend answered their release (or
     * they were lost): while one stands, an attempt of this client at the name could only be refused.
     */
    private final Map<String, ManagedLease> mutexesHeldHere = new ConcurrentHashMap<>();

    /** Whether a release of this client's mutex hands it to a waiter of this client in one step ({@link Capability#HAND_OVER}). */
    private final boolean handOvers;
    /** A release grants the first queued waiter (GRANT_ON_RELEASE, with a feed to hear of it). */
    private final boolean grantsOnRelease;

    private final WakeUpRegistry wakeUps; // null: no feed (a backend on the deprecated subscribe, or no signal)
    private volatile boolean closed;

    /** The latest TTL that passed {@link #requireUsableTtl}, usually the only one a client uses. */
    private volatile Duration usableTtl;

    /** The backend's longest TTL, asked once (it may ask the server). */
    private volatile Duration maxTtl;

    Duration maxTtl() {
        Duration max = maxTtl;
        if (max == null) {
            max = maxTtl = backend.maxTtl();
        }
        return max;
    }

    Engine(
            LockBackend backend,
            String backendName,
            LockOptions options,
            List<LockEventListener> listeners,
            LongSupplier clock,
            boolean runThreads) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.backendName = backendName;
        this.options = Objects.requireNonNull(options, "options");
        this.clock = clock;
        Set<Capability> declared = backend.capabilities();
        this.capabilities = declared.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(declared));
        String name = "fencelock-" + CLIENT_NUMBER.incrementAndGet();
        this.clientId = name;
        this.defaultOwner = options.owner() != null ? options.owner() : DefaultOwner.of(name);
        this.defaultMetadata = LockMetadata.NONE.withOwner(defaultOwner);
        this.events = new EventFanout(name, listeners);
        this.wakeUps = capabilities.contains(Capability.WAKE_ON_RELEASE)
                ? backend.releaseFeed()
                        .map(feed -> new WakeUpRegistry(feed, name + "-wake-ups", this::grantedByRelease))
                        .orElse(null)
                : null;
        this.handOvers = capabilities.contains(Capability.HAND_OVER);
        this.grantsOnRelease = wakeUps != null && capabilities.contains(Capability.GRANT_ON_RELEASE);
        this.watchdog = new Watchdog(this, name, runThreads);
    }

    // ---------------------------------------------------------------- acquiring

    /**
     * What one acquire call asks for, validated: the name, the TTL, whether the watchdog renews the
     * lease, the metadata stored with the grant (owner filled in), and for a shared grant what it
     * asks of the name ({@code null} for the mutex; its waiter id is this call's, for all its attempts).
     */
    record AcquireSpec(String name, Duration ttl, boolean autoRenew, LockMetadata metadata, SharedRequest shared) {
        /** Whether a refused attempt leaves something on the backend (a writer's intent, a queue place) to withdraw. */
        boolean leavesWaiter() {
            return shared != null && shared.waits() && (shared.mode() == LockMode.WRITE || shared.fair());
        }
    }

    /** A spec with the client's defaults for what the caller left out ({@code null}), checked before any I/O. */
    AcquireSpec spec(String name, Duration ttl, Boolean autoRenew, LockMetadata metadata) {
        LockNames.requireValid(name);
        Duration usedTtl = requireUsableTtl(ttl != null ? ttl : options.ttl());
        LockMetadata meta = metadata == null ? defaultMetadata : metadata;
        if (meta.owner() == null) {
            meta = meta.withOwner(defaultOwner);
        }
        return new AcquireSpec(name, usedTtl, autoRenew != null ? autoRenew : options.autoRenew(), meta, null);
    }

    /**
     * A spec for a shared grant (or a fair mutex): {@code mode}, {@code permits} of {@code limit}, whether the
     * call waits, whether it is fair; the backend's capabilities are checked before any I/O.
     */
    AcquireSpec sharedSpec(
            String name,
            Duration ttl,
            Boolean autoRenew,
            LockMetadata metadata,
            LockMode mode,
            int permits,
            int limit,
            boolean waits,
            boolean fair) {
        requireShared(fair);
        SharedRequest shared = new SharedRequest(mode, permits, limit, LeaseIds.SHARED.next(), waits, fair);
        AcquireSpec plain = spec(name, ttl, autoRenew, metadata);
        return new AcquireSpec(plain.name(), plain.ttl(), plain.autoRenew(), plain.metadata(), shared);
    }

    /** Semaphores, read-write locks and fairness only where the backend declares them; else before any I/O. */
    void requireShared(boolean fair) {
        if (!capabilities.contains(Capability.SHARED_LOCKS)) {
            throw new UnsupportedOperationException("this backend (" + backendName
                    + ") does not declare SHARED_LOCKS: no semaphores or read-write locks");
        }
        if (fair && !capabilities.contains(Capability.FAIR_ORDER)) {
            throw new UnsupportedOperationException(
                    "this backend (" + backendName + ") does not declare FAIR_ORDER: it cannot order waiters");
        }
    }

    /** The TTL, if a lease of it is possible with these options on this backend; else an IllegalArgumentException. */
    Duration requireUsableTtl(Duration ttl) {
        if (ttl.equals(usableTtl)) {
            // the options and the backend's longest TTL never change: a TTL checked once is checked
            requireOpen();
            return ttl;
        }
        options.requireUsableTtl(ttl);
        requireOpen();
        Duration max = maxTtl();
        if (ttl.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    "ttl " + ttl + " is longer than " + max + ", the longest TTL this backend honours");
        }
        usableTtl = ttl;
        return ttl;
    }

    Optional<Lease> tryAcquire(AcquireSpec spec) {
        long start = clock.getAsLong();
        try {
            ManagedLease lease = attempt(spec).lease;
            finished(
                    spec,
                    start,
                    lease != null ? AcquireEvent.Outcome.GRANTED : AcquireEvent.Outcome.REFUSED,
                    lease,
                    null);
            return Optional.ofNullable(lease);
        } catch (RuntimeException e) {
            finished(spec, start, AcquireEvent.Outcome.FAILED, null, e);
            throw e;
        }
    }

    /** Waits in the name's local line, then, at its head, attempts until granted or the wait runs out. */
    Optional<Lease> acquire(AcquireSpec spec, Duration wait) throws InterruptedException {
        long start = clock.getAsLong();
        boolean granted = false;
        try {
            Optional<Lease> lease = waitInLine(spec, start + saturatedNanos(wait));
            granted = lease.isPresent();
            finished(
                    spec,
                    start,
                    lease.isPresent() ? AcquireEvent.Outcome.GRANTED : AcquireEvent.Outcome.TIMED_OUT,
                    lease.orElse(null),
                    null);
            return lease;
        } catch (InterruptedException | RuntimeException e) {
            finished(spec, start, AcquireEvent.Outcome.FAILED, null, e);
            throw e;
        } finally {
            if (!granted && spec.leavesWaiter()) {
                // A writer's intent or a fair queue place would hold others back until it expired: withdraw it.
                releaseInBackground(spec.name(), spec.shared().waiterId(), spec.ttl(), false);
            }
        }
    }

    private void finished(AcquireSpec spec, long start, AcquireEvent.Outcome outcome, Lease lease, Throwable failure) {
        if (!events.listening()) {
            return;
        }
        Duration waited = Duration.ofNanos(Math.max(0, clock.getAsLong() - start));
        events.acquireFinished(new AcquireEvent(spec.name(), outcome, waited, spec.ttl(), lease, failure));
    }

    private Optional<Lease> waitInLine(AcquireSpec spec, long deadline) throws InterruptedException {
        String name = spec.name();
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + name + "'");
        }
        // Callers of this client that wait for one name queue here: only the head of the line talks to the
        // backend, so a crowd of waiters neither floods the backend nor queues for pooled connections.
        WaitLines.Waiter waiter = waitLines.join(name, handOvers && spec.shared() == null ? spec : null);
        try {
            while (!waiter.isHead()) {
                long left = deadline - clock.getAsLong();
                if (left <= 0) {
                    // made head just now, a holder may have handed the name over already: a grant is not dropped
                    return Optional.ofNullable(waiter.settleHandOver());
                }
                waiter.await(left);
            }
            return waitAtHead(spec, deadline, waiter);
        } catch (InterruptedException e) {
            throw new InterruptedException("interrupted while waiting for lock '" + name + "'");
        } finally {
            waitLines.leave(waiter);
            // Out of the line, no holder can claim an offer any more: a grant handed over to it as it left (an
            // interrupt, a wait that ran out, a failure) is let go here.
            ManagedLease stray = waiter.settleHandOver();
            if (stray != null) {
                stray.close();
            }
        }
    }

    /**
     * The head of the name's line: attempts, and between attempts sleeps until a release signal or the next poll.
     * Where a release grants the first queued waiter, its refusals queue its client on the backend, and a head
     * that ends its wait without holding lets its queued lease go.
     */
    private Optional<Lease> waitAtHead(AcquireSpec spec, long deadline, WaitLines.Waiter waiter)
            throws InterruptedException {
        WaitLines.Waiter queuing = grantsOnRelease && spec.shared() == null ? waiter : null;
        Optional<Lease> outcome = null;
        try {
            outcome = acquireAtHead(spec, deadline, waiter, queuing);
            return outcome;
        } finally {
            if (queuing != null) {
                letQueuedLeaseGo(spec, waiter, outcome == null ? null : outcome.map(Lease::leaseId), outcome != null);
            }
        }
    }

    /** The head's attempts, and its sleeps between them until a release signal (or grant) or the next poll. */
    private Optional<Lease> acquireAtHead(
            AcquireSpec spec, long deadline, WaitLines.Waiter waiter, WaitLines.Waiter queuing)
            throws InterruptedException {
        String name = spec.name();
        // Without a release signal the pause follows the name's forecast release; with one, the poll is a fallback.
        ForecastWait forecast = capabilities.contains(Capability.WAKE_ON_RELEASE) ? null : new ForecastWait(name);
        boolean woken = false;
        // The release signal is subscribed to at the first attempt that does not hold, and the head then asks
        // again at once, so a release between that attempt and the subscription is not missed; an acquire
        // granted at once (the usual case) costs no subscription, and the backend no watched name.
        boolean subscribes = capabilities.contains(Capability.WAKE_ON_RELEASE);
        WakeUpSubscription subscription = null;
        try {
            int misses = 0;
            boolean answered = false;
            while (true) {
                // Forgotten first: a holder that claims the offer after this look signals the wait below.
                waiter.forgetSignals();
                ManagedLease handedOver = waiter.takeHandedOver();
                if (handedOver != null) {
                    return handedOver(handedOver, forecast);
                }
                if (queuing != null) {
                    WaitLines.Grant grant = waiter.takeGrant();
                    ManagedLease granted = grant == null ? null : grantedByRelease(spec, waiter, grant);
                    if (granted != null) {
                        return Optional.of(granted);
                    }
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                long ownGrantStands = ownMutexNanos(spec);
                if (ownGrantStands > 0) {
                    // This client holds the name: asking would only be refused, and on some backends a
                    // refusal is a write (a queue place, a contention mark) that makes the release
                    // signal. Its release here, or its loss, signals this line at once; where the backend
                    // hands a grant over, the releasing holder asks for this waiter in the same step.
                    // For the forecast, the wait counts as refused from now.
                    long now = clock.getAsLong();
                    if (forecast != null) {
                        forecast.refusedAt(now);
                    }
                    long left = deadline - now;
                    if (left <= 0) {
                        // a holder may have claimed the offer as the wait ran out: a grant is not dropped
                        return Optional.ofNullable(waiter.settleHandOver());
                    }
                    // The offer stands across wake-ups that are not this release (on some backends, every
                    // change of another client's waiting), so the release always finds it.
                    waiter.offerHandOver();
                    woken = waiter.await(
                            Math.min(left, ownGrantStands)); // an interrupt settles the offer in waitInLine
                    if (woken) {
                        misses = 0;
                    }
                    continue;
                }
                handedOver = waiter.settleHandOver(); // withdrawn before asking: no holder asks for it meanwhile
                if (handedOver != null) {
                    return handedOver(handedOver, forecast);
                }
                Attempt attempt;
                long sent = clock.getAsLong();
                try {
                    attempt = attemptAsHead(spec, queuing);
                    answered = true;
                } catch (LockBackendException e) {
                    if (Thread.interrupted()) {
                        // the interrupt cut the request short (a driver or pool that answers it with a failure):
                        // the caller asked to stop waiting, so that is what it hears; the attempt's lease is swept
                        InterruptedException interrupted = new InterruptedException();
                        interrupted.initCause(e);
                        throw interrupted;
                    }
                    if (!e.isRetryable()) {
                        throw e;
                    }
                    if (clock.getAsLong() - deadline >= 0) {
                        // A backend that answered during the wait was busy, not down: the wait simply ran out.
                        if (answered) {
                            return Optional.empty();
                        }
                        throw e;
                    }
                    LOG.debug("fencelock: acquire of '{}' failed, retrying within the wait: {}", name, e.toString());
                    attempt = Attempt.MISS;
                }
                if (attempt.lease != null) {
                    if (forecast != null) {
                        forecast.grantedAt(sent, woken);
                    }
                    return Optional.of(attempt.lease);
                }
                if (forecast != null && attempt != Attempt.MISS) { // a holder's refusal, not a failure
                    forecast.refusedAt(sent);
                }
                long now = clock.getAsLong();
                long left = deadline - now;
                if (left <= 0) {
                    return Optional.empty();
                }
                if (subscribes && subscription == null) {
                    subscription = subscribe(name, waiter::signal);
                    continue;
                }
                long pause = forecast != null
                        ? ReleaseForecasts.pauseNanos(
                                options,
                                misses++,
                                forecast.refusedFor(now),
                                forecast.expectedSpan(),
                                attempt.holderRemaining,
                                ThreadLocalRandom.current().nextDouble())
                        : pollPauseNanos(options, misses++, attempt.holderRemaining);
                woken = waiter.await(Math.min(left, pause));
                if (woken) {
                    misses = 0;
                }
            }
        } finally {
            if (subscription != null) {
                subscription.close();
            }
        }
    }

    /**
     * The head's grant by a release to its queued lease: valid from the queuing attempt's send time (the
     * release came after that attempt was refused, so the backend's lease ends no earlier than that plus the
     * TTL), and renewed soon when that was long ago. Null when it is not this head's, or already unusable.
     */
    private ManagedLease grantedByRelease(AcquireSpec spec, WaitLines.Waiter waiter, WaitLines.Grant grant) {
        WaitLines.Sent queued = waiter.queuedUnder(grant.leaseId());
        if (queued == null) {
            releaseInBackground(spec.name(), grant.leaseId(), spec.ttl(), false);
            return null;
        }
        return holding(spec, queued.leaseId(), grant.token(), grant.expiresAt(), queued.sentNanos()).lease;
    }

    /**
     * A head that stops waiting without holding its queued lease releases it (owner-checked): a release may
     * have granted it, or still may until the backend hears that nobody here waits, and a grant nobody takes
     * would keep the name until it expired. When the wait simply ran out, on the caller's thread (the release
     * of a lease that holds nothing withdraws its queue place, so a release right after the call grants no
     * one here); else, and when that fails, in the background.
     */
    private void letQueuedLeaseGo(
            AcquireSpec spec, WaitLines.Waiter waiter, Optional<String> outcome, boolean answered) {
        String holding = outcome == null ? null : outcome.orElse(null);
        WaitLines.Sent queued = waiter.queued();
        WaitLines.Grant untaken = waiter.takeGrant();
        boolean letQueuedGo = queued != null && holding == null;
        if (letQueuedGo) {
            boolean released = false;
            if (answered && !closed) {
                try {
                    withoutInterrupt(() -> releaseOnBackend(spec.name(), queued.leaseId()));
                    released = true;
                } catch (RuntimeException e) {
                    LOG.debug(
                            "fencelock: letting go of the queued lease of '{}' failed: {}", spec.name(), e.toString());
                }
            }
            if (!released) {
                releaseInBackground(spec.name(), queued.leaseId(), spec.ttl(), false);
            }
        }
        // a grant that came too late for the waiter, unless it is the queued lease let go just above
        if (untaken != null
                && !untaken.leaseId().equals(holding)
                && !(letQueuedGo && untaken.leaseId().equals(queued.leaseId()))) {
            releaseInBackground(spec.name(), untaken.leaseId(), spec.ttl(), false);
        }
    }

    /**
     * A release granted a lease of this client's queue: its waiter takes it, or, when none does, it is let go,
     * unless this client holds it already (its waiter learned of the grant from an attempt before the feed
     * told it: the lease enters {@link #held} before its waiter leaves the line, so one of the two sees it).
     */
    private void grantedByRelease(String name, String leaseId, long token, java.time.Instant expiresAt) {
        if (!waitLines.offerGrant(name, new WaitLines.Grant(leaseId, token, expiresAt))
                && !closed
                && !held.containsKey(leaseId)) {
            // nobody here waits under that lease any more: its release grants the backend's next waiter
            releaseInBackground(name, leaseId, options.ttl(), false);
        }
    }

    private Optional<Lease> handedOver(ManagedLease lease, ForecastWait forecast) {
        if (forecast != null) {
            forecast.grantedAt(clock.getAsLong(), true);
        }
        return Optional.of(lease);
    }

    /**
     * One head's wait as the name's release forecast sees it: from its first refusal (or its own client's
     * hold) to its grant. Only where no release signal wakes a waiter.
     */
    private final class ForecastWait {
        private final String name;
        private boolean missed;
        private long firstMiss;
        private long lastMiss;
        private long expectedSpan = ReleaseForecasts.NONE;

        ForecastWait(String name) {
            this.name = name;
        }

        void refusedAt(long at) {
            if (!missed) {
                missed = true;
                firstMiss = at;
                expectedSpan = forecasts.expectedSpanNanos(name);
            }
            lastMiss = at;
        }

        /** Granted at {@code sent}: released just before a local release's signal, else midway since the last refusal. */
        void grantedAt(long sent, boolean woken) {
            if (missed) {
                long width = woken ? 0 : sent - lastMiss;
                forecasts.observed(name, sent - width / 2 - firstMiss, width);
            }
        }

        long refusedFor(long now) {
            return missed ? now - firstMiss : 0;
        }

        long expectedSpan() {
            return missed ? expectedSpan : ReleaseForecasts.NONE;
        }
    }

    /** How long this client's own grant of the mutex {@code spec} asks for may still stand; 0 when none does. */
    private long ownMutexNanos(AcquireSpec spec) {
        if (spec.shared() != null) {
            return 0;
        }
        ManagedLease own = mutexesHeldHere.get(spec.name());
        return own == null ? 0 : own.deadlineNanos() - clock.getAsLong();
    }

    @SuppressWarnings("deprecation") // a backend without a feed still signals through subscribe
    private WakeUpSubscription subscribe(String name, Runnable onRelease) {
        if (!capabilities.contains(Capability.WAKE_ON_RELEASE)) {
            return WakeUpSubscription.NONE;
        }
        return wakeUps != null ? wakeUps.subscribe(name, onRelease) : backend.subscribe(name, onRelease);
    }

    private record Attempt(ManagedLease lease, Duration holderRemaining) {
        static final Attempt MISS = new Attempt(null, null);
    }

    /** A plain attempt ({@code tryAcquire}): not a head's. */
    private Attempt attempt(AcquireSpec spec) {
        return attemptAsHead(spec, null, spec.shared() == null);
    }

    private Attempt attemptAsHead(AcquireSpec spec, WaitLines.Waiter queuing) {
        return attemptAsHead(spec, queuing, false);
    }

    /**
     * One attempt; {@code queuing} is the head of the name's line where a refusal queues it for a grant by a
     * release; {@code plain}: a plain mutex attempt, which a backend that grants on release may take for the
     * waiter's of a head of this client.
     */
    private Attempt attemptAsHead(AcquireSpec spec, WaitLines.Waiter queuing, boolean plain) {
        requireOpen();
        SharedRequest shared = spec.shared();
        return attempt(
                spec,
                leaseId -> shared == null
                        ? backend.tryAcquire(spec.name(), leaseId, spec.ttl(), spec.metadata())
                        : backend.tryAcquireShared(spec.name(), leaseId, spec.ttl(), shared, spec.metadata()),
                queuing,
                plain);
    }

    /** One backend request for a grant under a fresh lease id: {@link LockBackend#tryAcquire} or a hand-over. */
    private interface GrantRequest {
        AcquireResult ask(String leaseId);
    }

    private Attempt attempt(AcquireSpec spec, GrantRequest request) {
        return attempt(spec, request, null, false);
    }

    private Attempt attempt(AcquireSpec spec, GrantRequest request, WaitLines.Waiter queuing, boolean plain) {
        String name = spec.name();
        Duration ttl = spec.ttl();
        String leaseId = LeaseIds.SHARED.next();
        long sent = clock.getAsLong();
        AcquireResult result;
        if (queuing != null) {
            queuing.attempting(leaseId, sent);
        }
        // A head of this client waiting for the name takes a release's grant to this attempt's lease while it is
        // in flight (the backend may queue the client under it): registered before it is sent.
        WaitLines.Sent plainSent = plain ? plainAttempting(name, leaseId, sent) : null;
        try {
            result = request.ask(leaseId);
        } catch (IllegalArgumentException | UnsupportedOperationException refused) {
            if (plainSent != null) {
                waitLines.plainAnswered(name, plainSent, false, held::containsKey);
            }
            throw refused; // the backend refused the request itself (another kind of lock): nothing was granted
        } catch (RuntimeException e) {
            // The backend may have granted before the failure or the interrupt, or may still apply the request:
            // sweep the lease id so nobody waits a TTL (or, on a shared etcd lease, longer) for a ghost. A lease
            // being swept is never taken, also not as one a release granted to the queue; a plain attempt's lease
            // that a head took a release's grant to already is that head's to hold or let go.
            if (queuing != null) {
                queuing.attemptFailed(leaseId);
            }
            if (plainSent == null || !plainLeaseTaken(name, plainSent)) {
                releaseInBackground(name, leaseId, ttl, true);
            }
            throw e;
        }
        if (plain && !result.acquired()) {
            plainRefused(spec, leaseId, sent, plainSent, result);
            return new Attempt(null, result.holderRemaining());
        }
        if (plainSent != null) {
            waitLines.plainAnswered(name, plainSent, false, held::containsKey);
        }
        if (!result.acquired()) {
            if (queuing != null && result.queuedAs() != null) {
                if (result.queuedGrant()) {
                    // a release granted the head's queued lease and its feed has not told yet (or lost it)
                    WaitLines.Sent queued = queuing.queuedUnder(result.queuedAs());
                    if (queued != null && !queued.leaseId().equals(leaseId)) {
                        return holding(spec, queued.leaseId(), result.token(), result.expiresAt(), queued.sentNanos());
                    }
                } else {
                    queuing.queuedAs(result.queuedAs());
                }
            }
            return new Attempt(null, result.holderRemaining());
        }
        return holding(spec, leaseId, result.token(), result.expiresAt(), sent);
    }

    /** A plain attempt about to be sent, registered with the waiting head of its name; null when none waits (no lock taken). */
    private WaitLines.Sent plainAttempting(String name, String leaseId, long sent) {
        if (!waitLines.anyWaiting(name)) {
            return null;
        }
        WaitLines.Sent plainSent = new WaitLines.Sent(leaseId, sent);
        return waitLines.plainAttempting(name, plainSent) ? plainSent : null;
    }

    /** Whether a head took a release's grant to the lease of a registered plain attempt that failed: not to be swept. */
    private boolean plainLeaseTaken(String name, WaitLines.Sent plainSent) {
        return waitLines.plainAnswered(name, plainSent, false, held::containsKey)
                || held.containsKey(plainSent.leaseId());
    }

    /**
     * A plain attempt refused. A backend that takes any attempt on a watched name for the waiter's may have queued
     * the client under this attempt's lease. The head takes that place (a release's grant to it is the head's,
     * valid from this attempt's send time); with no head left, the place is withdrawn, as a leaving head's is,
     * unless a head took a release's grant to it meanwhile and holds it. {@code plainSent}: its registration, or
     * null when none.
     */
    private void plainRefused(
            AcquireSpec spec, String leaseId, long sent, WaitLines.Sent plainSent, AcquireResult result) {
        boolean queuedHere = leaseId.equals(result.queuedAs()) && !result.queuedGrant();
        if (plainSent == null && !queuedHere) {
            return;
        }
        String name = spec.name();
        WaitLines.Sent answered = plainSent != null ? plainSent : new WaitLines.Sent(leaseId, sent);
        if (!waitLines.plainAnswered(name, answered, queuedHere, held::containsKey)
                && queuedHere
                && !held.containsKey(leaseId)) {
            releaseInBackground(name, leaseId, spec.ttl(), false);
        }
    }

    /**
     * The grant of {@code leaseId}, requested at {@code sent}, as this client's held lease; a miss when the
     * answer came too late for the validity window (the grant is let go in the background).
     */
    private Attempt holding(AcquireSpec spec, String leaseId, long token, java.time.Instant expiresAt, long sent) {
        String name = spec.name();
        Duration ttl = spec.ttl();
        SharedRequest shared = spec.shared();
        ManagedLease lease = new ManagedLease(
                this,
                name,
                leaseId,
                ttl,
                spec.autoRenew(),
                spec.metadata(),
                shared == null ? LockMode.EXCLUSIVE : shared.mode(),
                shared == null ? GrantKind.MUTEX : GrantKind.SHARED,
                shared == null ? 1 : shared.permits(),
                token,
                expiresAt,
                sent);
        if (!lease.isValid()) {
            // The answer took longer than the validity window: the grant is already unusable.
            releaseInBackground(name, leaseId, ttl, false);
            return Attempt.MISS;
        }
        held.put(leaseId, lease);
        if (shared == null) {
            mutexesHeldHere.put(name, lease);
        }
        watchdog.watch(lease);
        return new Attempt(lease, null);
    }

    /** Jittered exponential backoff, capped, and never past the holder's known remaining time. */
    static long pollPauseNanos(LockOptions options, int misses, Duration holderRemaining) {
        return ReleaseForecasts.pauseNanos(
                options,
                misses,
                0,
                ReleaseForecasts.NONE,
                holderRemaining,
                ThreadLocalRandom.current().nextDouble());
    }

    // ---------------------------------------------------------------- held leases

    Collection<ManagedLease> heldLeases() {
        return held.values();
    }

    List<Lease> heldNow() {
        return held.values().stream()
                .filter(l -> l.state() == LeaseState.HELD)
                .sorted(java.util.Comparator.comparing(Lease::name))
                .map(l -> (Lease) l)
                .toList();
    }

    /** The lease is no longer this client's: lost, or let go to expire. A waiter of this client may try at once. */
    void forget(ManagedLease lease) {
        forgetReleasing(lease);
        if (mutexesHeldHere.remove(lease.name(), lease)) {
            waitLines.released(lease.name());
        }
    }

    /** The lease is being released: no longer renewed, but it stands in this client's way until the release is answered. */
    void forgetReleasing(ManagedLease lease) {
        held.remove(lease.leaseId(), lease);
    }

    List<RenewResult> renew(List<RenewRequest> requests) {
        List<RenewResult> results = backend.renew(requests);
        if (results.size() != requests.size()) {
            throw new LockBackendException(
                    "backend answered " + results.size() + " results for " + requests.size() + " renewals", false);
        }
        return results;
    }

    /**
     * One release of a held lease on the caller's thread, which may be interrupted: the backend never sees
     * the interrupt. A mutex the head of this client's line offers to take over is handed over to it.
     */
    boolean release(ManagedLease lease) {
        String name = lease.name();
        WaitLines.HandOver offer =
                handOvers && !closed && mutexesHeldHere.get(name) == lease ? waitLines.claimHandOver(name) : null;
        return withoutInterrupt(
                () -> offer == null ? releaseOnBackend(name, lease.leaseId(), lease.grant()) : handOver(lease, offer));
    }

    /**
     * One hand-over round trip: {@code from}'s grant ends and the waiting head gets its own, with a new
     * token, or, when {@code from} no longer held the name, nothing changes and the head attempts as usual.
     * Returns whether {@code from}'s grant ended here.
     */
    private boolean handOver(ManagedLease from, WaitLines.HandOver offer) {
        String name = from.name();
        AcquireSpec spec = offer.spec;
        AcquireResult[] answer = new AcquireResult[1];
        ManagedLease granted = null;
        try {
            granted = attempt(
                            spec,
                            leaseId -> answer[0] =
                                    backend.handOver(name, from.leaseId(), leaseId, spec.ttl(), spec.metadata()))
                    .lease;
        } catch (IllegalArgumentException | UnsupportedOperationException refused) {
            // the backend refused the request itself, changing nothing: the holder releases as usual
            LOG.warn(
                    "fencelock: hand-over of '{}' refused by the backend, releasing instead: {}",
                    name,
                    refused.toString());
            return releaseOnBackend(name, from.leaseId(), from.grant());
        } finally {
            mutexesHeldHere.remove(name, from); // a grant replaced it already
            offer.answer(granted);
        }
        return answer[0] != null && answer[0].acquired();
    }

    /** One downgrade round trip of a write lease to a read lease; readers of this client may enter after it. */
    RenewResult downgradeOnBackend(String name, String leaseId, Duration ttl) {
        RenewResult result = backend.downgrade(name, leaseId, ttl);
        if (result.renewed()) {
            waitLines.released(name);
        }
        return result;
    }

    /** {@link #releaseOnBackend(String, String, GrantKind)} of an id whose grant is not known here. */
    boolean releaseOnBackend(String name, String leaseId) {
        return releaseOnBackend(name, leaseId, GrantKind.EITHER);
    }

    /**
     * One release round trip, telling the backend which call granted the lease (where it knows: a held lease);
     * when it frees the lock, a waiter of this client takes over without waiting for the backend's signal.
     */
    boolean releaseOnBackend(String name, String leaseId, GrantKind grant) {
        boolean freed = false;
        try {
            freed = backend.release(name, leaseId, grant);
        } finally {
            // get, never isEmpty() first: under concurrent updates isEmpty() is an estimate that can read
            // empty while this lease is in the map, which would leave it there to block this client's waiters
            ManagedLease own = mutexesHeldHere.get(name);
            boolean wasOwnMutex = own != null && own.leaseId().equals(leaseId) && mutexesHeldHere.remove(name, own);
            if (freed || wasOwnMutex) {
                waitLines.released(name);
            }
        }
        return freed;
    }

    /**
     * Frees {@code leaseId}'s grant of {@code name} in the background; owner-checked, so always safe.
     * See {@link BackgroundRelease}.
     */
    void releaseInBackground(String name, String leaseId, Duration ttl, boolean unknownOutcome) {
        releaseInBackground(name, leaseId, GrantKind.EITHER, ttl, unknownOutcome);
    }

    /** {@link #releaseInBackground(String, String, Duration, boolean)} of a held lease, whose grant is known. */
    void releaseInBackground(String name, String leaseId, GrantKind grant, Duration ttl, boolean unknownOutcome) {
        watchdog.submit(new BackgroundRelease(this, name, leaseId, grant, saturatedNanos(ttl), unknownOutcome), 0);
    }

    // ---------------------------------------------------------------- lifecycle

    boolean isClosed() {
        return closed;
    }

    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this LockClient is closed");
        }
    }

    /** Releases every held lease, stops the background work, closes the feed and the backend. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        withoutInterrupt(() -> {
            for (ManagedLease lease : new ArrayList<>(held.values())) {
                try {
                    lease.release();
                } catch (RuntimeException e) {
                    LOG.warn(
                            "fencelock: could not release '{}' on close; it expires on the backend by itself: {}",
                            lease.name(),
                            e.toString());
                }
            }
            watchdog.close();
            if (wakeUps != null) {
                wakeUps.close();
            }
            backend.close();
            return null;
        });
    }

    /** Runs {@code call} with this thread's interrupt flag cleared, and sets it again afterwards if it was set. */
    static <T> T withoutInterrupt(Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }
}
