package io.fencelock;

import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A connection to one lock backend, and the one engine every backend shares: waiting with
 * wake-ups, renewal by a watchdog (all due leases in one round trip), local validity deadlines and
 * lost signals. Thread-safe; open one per process and backend, and close it on shutdown (which
 * releases everything it holds).
 *
 * <pre>{@code
 * try (LockClient locks = LockClient.open("jdbc:postgresql://db/app?user=app&password=secret")) {
 *     Optional<Lease> lease = locks.acquire("invoices:2026-11", Duration.ofSeconds(5));
 *     ...
 * }
 * }</pre>
 */
public final class LockClient implements AutoCloseable {
    static final Logger LOG = LoggerFactory.getLogger(LockClient.class);
    private static final AtomicInteger CLIENT_NUMBER = new AtomicInteger();

    private final LockBackend backend;
    private final LockOptions options;
    private final Set<Capability> capabilities;
    private final Map<String, ManagedLease> held = new ConcurrentHashMap<>();
    private final WaitLines waitLines = new WaitLines();
    private final List<LockEventListener> listeners = new CopyOnWriteArrayList<>();
    private final LockEventListener events = new Fanout();
    private final Watchdog watchdog;
    private volatile boolean closed;
    /** The backend's longest TTL, asked once. */
    private volatile Duration maxTtl;

    private LockClient(LockBackend backend, LockOptions options, List<LockEventListener> listeners) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.options = Objects.requireNonNull(options, "options");
        Set<Capability> declared = backend.capabilities();
        this.capabilities = declared.isEmpty() ? Set.of()
                : java.util.Collections.unmodifiableSet(EnumSet.copyOf(declared));
        this.listeners.addAll(listeners);
        this.watchdog = new Watchdog(this, held::values, "fencelock-" + CLIENT_NUMBER.incrementAndGet());
    }

    /** Opens a client with default options on the provider that accepts {@code uri}. */
    public static LockClient open(String uri) {
        return builder().uri(uri).build();
    }

    /** Wraps a backend built directly; the client closes it when closed. */
    public static LockClient create(LockBackend backend, LockOptions options) {
        return builder().backend(backend).options(options).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The providers on the class path or module path. */
    public static List<LockBackendProvider> providers() {
        List<LockBackendProvider> found = new ArrayList<>();
        ServiceLoader.load(LockBackendProvider.class).forEach(found::add);
        if (found.isEmpty() && LockClient.class.getClassLoader() != Thread.currentThread().getContextClassLoader()) {
            ServiceLoader.load(LockBackendProvider.class, LockClient.class.getClassLoader()).forEach(found::add);
        }
        return found;
    }

    // ---------------------------------------------------------------- acquiring

    /** One attempt with the client's TTL; empty when another lease holds the lock. */
    public Optional<Lease> tryAcquire(String name) {
        return tryAcquire(name, options.ttl());
    }

    /** One attempt with the given TTL; empty when another lease holds the lock. */
    public Optional<Lease> tryAcquire(String name, Duration ttl) {
        validate(name, ttl);
        return Optional.ofNullable(attempt(name, ttl).lease);
    }

    /**
     * Waits up to {@code wait} for the lock with the client's TTL. Returns empty when the wait ran
     * out (a normal outcome). Wakes on the backend's release signal where there is one, and
     * otherwise polls with jittered backoff that never sleeps past the holder's known expiry.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> acquire(String name, Duration wait) throws InterruptedException {
        return acquire(name, wait, options.ttl());
    }

    /** As {@link #acquire(String, Duration)}, with the given TTL. */
    public Optional<Lease> acquire(String name, Duration wait, Duration ttl) throws InterruptedException {
        validate(name, ttl);
        LockOptions.requireNonNegative("wait", wait);
        long deadline = System.nanoTime() + saturatedNanos(wait);
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for lock '" + name + "'");
        }
        // Callers of this client that wait for one name queue here: only the head of the line talks to the
        // backend, so a crowd of waiters neither floods the backend nor queues for pooled connections.
        WaitLines.Waiter waiter = waitLines.join(name);
        try {
            while (!waiter.isHead()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Optional.empty();
                }
                waiter.await(left);
            }
            return acquireAtHead(name, ttl, deadline, waiter);
        } catch (InterruptedException e) {
            throw new InterruptedException("interrupted while waiting for lock '" + name + "'");
        } finally {
            waitLines.leave(waiter);
        }
    }

    /** The head of the name's line: attempts, and between attempts sleeps until a release signal or the next poll. */
    private Optional<Lease> acquireAtHead(String name, Duration ttl, long deadline, WaitLines.Waiter waiter)
            throws InterruptedException {
        // Subscribe before the first attempt, so a release between the attempt and the wait is not missed.
        try (WakeUpSubscription ignored = capabilities.contains(Capability.WAKE_ON_RELEASE)
                ? backend.subscribe(name, waiter::signal) : WakeUpSubscription.NONE) {
            int misses = 0;
            boolean answered = false;
            while (true) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                waiter.forgetSignals();
                Attempt attempt;
                try {
                    attempt = attempt(name, ttl);
                    answered = true;
                } catch (LockBackendException e) {
                    if (!e.isRetryable()) {
                        throw e;
                    }
                    if (System.nanoTime() - deadline >= 0) {
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
                    return Optional.of(attempt.lease);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Optional.empty();
                }
                if (waiter.await(Math.min(left, pollPauseNanos(misses++, attempt.holderRemaining)))) {
                    misses = 0;
                }
            }
        }
    }

    /**
     * Acquires {@code name} (waiting up to {@code wait}), runs {@code task} on this thread while
     * holding it, and releases it when the task ends. If the lease is lost while the task runs, the
     * thread is interrupted and {@link LeaseLostException} is thrown once the task returns.
     *
     * @return the task's result, or empty when the lock was not obtained within {@code wait}
     *         (also when the task returned {@code null})
     * @throws Exception whatever the task threw, unchanged
     */
    public <T> Optional<T> runExclusively(String name, Duration wait, LeaseTask<T> task) throws Exception {
        Objects.requireNonNull(task, "task");
        Optional<Lease> acquired = acquire(name, wait);
        if (acquired.isEmpty()) {
            return Optional.empty();
        }
        ManagedLease lease = (ManagedLease) acquired.get();
        TaskInterrupter interrupter = new TaskInterrupter(Thread.currentThread());
        lease.whenLost(interrupter::interrupt);
        T result = null;
        Exception failure = null;
        try {
            result = task.run(lease);
        } catch (Exception e) {
            failure = e;
        } finally {
            interrupter.finish();
            lease.close();
        }
        Optional<LeaseLoss> loss = lease.loss();
        if (loss.isPresent()) {
            throw new LeaseLostException(loss.get(), failure);
        }
        if (failure != null) {
            throw failure;
        }
        return Optional.ofNullable(result);
    }

    // ---------------------------------------------------------------- looking

    /** The leases this client holds now. */
    public List<Lease> held() {
        return held.values().stream().filter(l -> l.state() == LeaseState.HELD)
                .sorted(java.util.Comparator.comparing(Lease::name)).collect(Collectors.toList());
    }

    /** The backend's record of one lock, in one round trip. */
    public Optional<LockInfo> inspect(String name) {
        LockNames.requireValid(name);
        requireOpen();
        return backend.inspect(name);
    }

    /** The locks held now on the whole backend (by any client) whose names start with {@code prefix}. */
    public List<LockInfo> list(String prefix) {
        LockNames.requireValidPrefix(prefix);
        requireOpen();
        return backend.list(prefix);
    }

    /**
     * Deletes the backend's records of locks free for at least {@code freeFor}, where the backend
     * can do so without ever lowering a later token ({@link Capability#PURGE_FREE}).
     */
    public int purgeFree(Duration freeFor) {
        LockOptions.requireAtMostMax("freeFor", LockOptions.requireNonNegative("freeFor", freeFor));
        if (!capabilities.contains(Capability.PURGE_FREE)) {
            throw new UnsupportedOperationException("this backend does not declare PURGE_FREE");
        }
        requireOpen();
        return backend.purgeFree(freeFor);
    }

    public Set<Capability> capabilities() {
        return capabilities;
    }

    public LockOptions options() {
        return options;
    }

    public void addListener(LockEventListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    public void removeListener(LockEventListener listener) {
        listeners.remove(listener);
    }

    /**
     * Releases every lease this client holds (one that cannot be released expires on the backend
     * by itself), stops the watchdog and closes the backend. Works on an interrupted thread: the
     * interrupt is kept for the caller.
     */
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
                    LOG.warn("fencelock: could not release '{}' on close; it expires on the backend by itself: {}",
                            lease.name(), e.toString());
                }
            }
            watchdog.close();
            backend.close();
            return null;
        });
    }

    // ---------------------------------------------------------------- engine internals

    private record Attempt(ManagedLease lease, Duration holderRemaining) {
        static final Attempt MISS = new Attempt(null, null);
    }

    private Attempt attempt(String name, Duration ttl) {
        requireOpen();
        String leaseId = UUID.randomUUID().toString();
        long sent = System.nanoTime();
        AcquireResult result;
        try {
            result = backend.tryAcquire(name, leaseId, ttl);
        } catch (RuntimeException e) {
            // The backend may have granted before the failure or the interrupt, or may still apply the request:
            // sweep the lease id so nobody waits a TTL (or, on a shared etcd lease, longer) for a ghost.
            releaseInBackground(name, leaseId, ttl, true);
            throw e;
        }
        if (!result.acquired()) {
            return new Attempt(null, result.holderRemaining());
        }
        ManagedLease lease = new ManagedLease(this, name, leaseId, ttl, options, options.autoRenew(),
                result.token(), result.expiresAt(), sent);
        if (!lease.isValid()) {
            // The answer took longer than the validity window: the grant is already unusable.
            releaseInBackground(name, leaseId, ttl, false);
            return Attempt.MISS;
        }
        held.put(leaseId, lease);
        watchdog.watch(lease);
        events.acquired(lease);
        return new Attempt(lease, null);
    }

    /** Jittered exponential backoff, capped, and never past the holder's known remaining time. */
    private long pollPauseNanos(int misses, Duration holderRemaining) {
        long initial = options.initialPollInterval().toNanos();
        long max = options.maxPollInterval().toNanos();
        long ceiling = initial << Math.min(misses, 20);
        if (ceiling <= 0 || ceiling > max) {
            ceiling = max;
        }
        long pause = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
        if (holderRemaining != null && !holderRemaining.isNegative()) {
            pause = Math.min(pause, holderRemaining.toNanos() + TimeUnit.MILLISECONDS.toNanos(1));
        }
        return Math.max(pause, TimeUnit.MICROSECONDS.toNanos(100));
    }

    List<RenewResult> backendRenew(List<RenewRequest> requests) {
        List<RenewResult> results = backend.renew(requests);
        if (results.size() != requests.size()) {
            throw new LockBackendException("backend answered " + results.size() + " results for "
                    + requests.size() + " renewals", false);
        }
        return results;
    }

    /** One release on the caller's thread, which may be interrupted: the backend never sees the interrupt. */
    boolean backendRelease(String name, String leaseId) {
        return withoutInterrupt(() -> releaseOnBackend(name, leaseId));
    }

    /** One release round trip; when it frees the lock, a waiter of this client takes over without waiting for the backend's signal. */
    private boolean releaseOnBackend(String name, String leaseId) {
        boolean freed = backend.release(name, leaseId);
        if (freed) {
            waitLines.released(name);
        }
        return freed;
    }

    /**
     * Frees {@code leaseId}'s grant of {@code name} in the background; owner-checked, so always safe.
     * A release that fails retryably is tried again with backoff until the grant would have expired
     * on the backend anyway ({@code ttl} after now: every grant of it was sent before now). With
     * {@code unknownOutcome}, the acquire's outcome was unknown: a request already sent may still be
     * applied after the first release (etcd over gRPC, MongoDB on another connection), so the lease
     * id is released again a few times at growing intervals.
     */
    void releaseInBackground(String name, String leaseId, Duration ttl, boolean unknownOutcome) {
        watchdog.submit(new BackgroundRelease(name, leaseId, saturatedNanos(ttl), unknownOutcome), 0);
    }

    /** After an acquire of unknown outcome: when (after the attempt) its lease id is released again. */
    private static final long[] SWEEP_CHECKS_NANOS = {TimeUnit.MILLISECONDS.toNanos(50),
            TimeUnit.MILLISECONDS.toNanos(250), TimeUnit.MILLISECONDS.toNanos(1250), TimeUnit.MILLISECONDS.toNanos(6250)};
    private static final long RETRY_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long RETRY_MAX_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** One background release: its retries, and for an unknown outcome its later checks. */
    private final class BackgroundRelease implements Watchdog.Chore {
        private final String name;
        private final String leaseId;
        private final long start = System.nanoTime();
        private final long giveUpAt;
        private final int checks;
        private int nextCheck;
        private long backoff = RETRY_FIRST_NANOS;

        BackgroundRelease(String name, String leaseId, long ttlNanos, boolean unknownOutcome) {
            this.name = name;
            this.leaseId = leaseId;
            this.checks = unknownOutcome ? SWEEP_CHECKS_NANOS.length : 0;
            this.giveUpAt = start + Math.max(ttlNanos, checks == 0 ? 0 : SWEEP_CHECKS_NANOS[checks - 1]);
        }

        @Override
        public long run() {
            try {
                releaseOnBackend(name, leaseId);
            } catch (LockBackendException e) {
                long now = System.nanoTime();
                if (e.isRetryable() && now - giveUpAt < 0) {
                    long pause = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
                    backoff = Math.min(RETRY_MAX_NANOS, backoff * 2);
                    return pause;
                }
                if (checks == 0) { // a known grant (a sweep may have nothing to free: not worth a warning)
                    LOG.warn("fencelock: could not release lease {} of '{}' in the background; it expires on the backend by itself: {}",
                            leaseId, name, e.toString());
                }
                return -1;
            }
            long now = System.nanoTime();
            while (nextCheck < checks && start + SWEEP_CHECKS_NANOS[nextCheck] - now <= 0) {
                nextCheck++; // its time passed while this release was retried: this release covers it
            }
            return nextCheck < checks ? start + SWEEP_CHECKS_NANOS[nextCheck++] - now : -1;
        }
    }

    /** Runs {@code call} with this thread's interrupt flag cleared, and sets it again afterwards if it was set. */
    static <T> T withoutInterrupt(java.util.function.Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void forget(ManagedLease lease) {
        held.remove(lease.leaseId(), lease);
    }

    LockEventListener events() {
        return events;
    }

    private void validate(String name, Duration ttl) {
        LockNames.requireValid(name);
        options.requireUsableTtl(ttl);
        requireOpen();
        Duration max = maxTtl;
        if (max == null) {
            max = maxTtl = backend.maxTtl();
        }
        if (ttl.compareTo(max) > 0) {
            throw new IllegalArgumentException("ttl " + ttl + " is longer than " + max + ", the longest TTL this backend honours");
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this LockClient is closed");
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** Interrupts a task's thread on loss, but never after the task has finished. */
    private static final class TaskInterrupter {
        private final Thread thread;
        private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        private boolean finished;
        private boolean interrupted;

        TaskInterrupter(Thread thread) {
            this.thread = thread;
        }

        void interrupt() {
            lock.lock();
            try {
                if (!finished) {
                    interrupted = true;
                    thread.interrupt();
                }
            } finally {
                lock.unlock();
            }
        }

        /** Marks the task finished and clears the interrupt this class caused. */
        void finish() {
            lock.lock();
            try {
                finished = true;
                if (interrupted) {
                    Thread.interrupted();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Calls every listener, isolating their failures. */
    private final class Fanout implements LockEventListener {
        @Override
        public void acquired(Lease lease) {
            listeners.forEach(l -> safely(() -> l.acquired(lease)));
        }

        @Override
        public void renewed(Lease lease, long sentNanos) {
            listeners.forEach(l -> safely(() -> l.renewed(lease, sentNanos)));
        }

        @Override
        public void released(Lease lease, boolean freedOnBackend) {
            listeners.forEach(l -> safely(() -> l.released(lease, freedOnBackend)));
        }

        @Override
        public void lost(LeaseLoss loss) {
            LOG.warn("fencelock: lease {} on '{}' lost ({})", loss.lease().leaseId(), loss.lease().name(), loss.reason());
            listeners.forEach(l -> safely(() -> l.lost(loss)));
        }

        private void safely(Runnable call) {
            try {
                call.run();
            } catch (RuntimeException e) {
                LOG.warn("fencelock: a LockEventListener failed", e);
            }
        }
    }

    /** Builds a client from a connection string (through {@link ServiceLoader}) or from a backend. */
    public static final class Builder {
        private String uri;
        private String provider;
        private final Map<String, String> properties = new LinkedHashMap<>();
        private LockBackend backend;
        private LockOptions options = LockOptions.defaults();
        private final List<LockEventListener> listeners = new ArrayList<>();

        private Builder() {
        }

        /** The connection string; the provider that accepts its prefix is used. */
        public Builder uri(String uri) {
            this.uri = uri;
            return this;
        }

        /** Picks the provider by name (e.g. {@code "postgres"}) instead of by the URI's prefix. */
        public Builder provider(String name) {
            this.provider = name;
            return this;
        }

        /** A provider-specific setting (schema, table, user, password...); neither key nor value may be null. */
        public Builder property(String key, String value) {
            if (key == null) {
                throw new IllegalArgumentException("a property key is null");
            }
            if (value == null) {
                // usually a System.getenv(...) that found nothing: say which setting, never a value
                throw new IllegalArgumentException("property '" + key + "' is null: give a value or leave the property out");
            }
            properties.put(key, value);
            return this;
        }

        /** A backend built directly (instead of a URI); the client closes it when closed. */
        public Builder backend(LockBackend backend) {
            this.backend = backend;
            return this;
        }

        public Builder options(LockOptions options) {
            this.options = Objects.requireNonNull(options, "options");
            return this;
        }

        public Builder listener(LockEventListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public LockClient build() {
            if ((backend == null) == (uri == null)) {
                throw new IllegalArgumentException("give exactly one of uri(...) and backend(...)");
            }
            LockBackend chosen = backend != null ? backend : openFromUri();
            return new LockClient(chosen, options, listeners);
        }

        private LockBackend openFromUri() {
            List<LockBackendProvider> all = providers();
            Optional<LockBackendProvider> match = all.stream()
                    .filter(p -> provider != null ? p.name().equalsIgnoreCase(provider) : p.accepts(uri))
                    .findFirst();
            if (match.isEmpty()) {
                String available = all.isEmpty() ? "none (add a provider jar such as lock-provider-postgres)"
                        : all.stream().map(p -> p.name() + " " + p.uriPrefixes()).collect(Collectors.joining(", "));
                throw new IllegalArgumentException("no fencelock provider "
                        + (provider != null ? "named '" + provider + "'" : "accepts '" + Redaction.uri(uri) + "'")
                        + "; providers found: " + available);
            }
            return match.get().open(uri, Map.copyOf(properties));
        }
    }
}
