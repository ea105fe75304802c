package io.fencelock;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.function.LongSupplier;

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
    private final Engine engine;

    LockClient(Engine engine) {
        this.engine = engine;
    }

    /** A client whose engine reads {@code clock} and runs its watchdog only when a test drives it (see {@link Engine}). */
    static LockClient withClock(LockBackend backend, LockOptions options, LongSupplier clock) {
        return new LockClient(
                new Engine(backend, backend.getClass().getSimpleName(), options, List.of(), clock, false));
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
        return ProviderDiscovery.providers();
    }

    /** The engine behind this facade, for the engine's unit tests. */
    Engine engine() {
        return engine;
    }

    // ---------------------------------------------------------------- acquiring

    /** One attempt with the client's TTL; empty when another lease holds the lock. */
    public Optional<Lease> tryAcquire(String name) {
        return tryAcquire(name, engine.options.ttl());
    }

    /** One attempt with the given TTL; empty when another lease holds the lock. */
    public Optional<Lease> tryAcquire(String name, Duration ttl) {
        return engine.tryAcquire(engine.spec(name, requireTtl(ttl), null, null));
    }

    /**
     * A request for {@code name} with settings of its own: TTL, renewal, owner, type and data (see
     * {@link LockRequest}). The name is checked at once.
     */
    public LockRequest lock(String name) {
        return new LockRequest(this, name);
    }

    /**
     * Waits up to {@code wait} for the lock with the client's TTL. Returns empty when the wait ran
     * out (a normal outcome). Wakes on the backend's release signal where there is one, and
     * otherwise polls with jittered backoff that never sleeps past the holder's known expiry.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> acquire(String name, Duration wait) throws InterruptedException {
        return acquire(name, wait, engine.options.ttl());
    }

    /** As {@link #acquire(String, Duration)}, with the given TTL. */
    public Optional<Lease> acquire(String name, Duration wait, Duration ttl) throws InterruptedException {
        requireTtl(ttl);
        Engine.AcquireSpec spec = engine.spec(name, ttl, null, null);
        LockOptions.requireNonNegative("wait", wait);
        return engine.acquire(spec, wait);
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
        return lock(name).runExclusively(wait, task);
    }

    /**
     * A counting semaphore of {@code permits} permits on {@code name}, acquired with the client's
     * settings (see {@link SemaphoreHandle} for its own). The name and N are checked at once.
     *
     * @throws UnsupportedOperationException when the backend does not declare {@link Capability#SHARED_LOCKS}
     */
    public SemaphoreHandle semaphore(String name, int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits " + permits + " must be at least 1");
        }
        return new SemaphoreHandle(sharedAcquirer(name), permits);
    }

    /**
     * A read-write lock on {@code name}: readers, or one writer, with writer intent and downgrade
     * (see {@link ReadWriteLockHandle}).
     *
     * @throws UnsupportedOperationException when the backend does not declare {@link Capability#SHARED_LOCKS}
     */
    public ReadWriteLockHandle readWriteLock(String name) {
        return new ReadWriteLockHandle(sharedAcquirer(name));
    }

    /**
     * A reentrant mutex on {@code name}, counted per thread or per owner key in this client (see
     * {@link ReentrantLockHandle}); on every backend. Holds are counted per handle: keep one handle
     * per name.
     */
    public ReentrantLockHandle reentrant(String name) {
        return new ReentrantLockHandle(this, name);
    }

    private SharedAcquirer sharedAcquirer(String name) {
        return new SharedAcquirer(this, name, null, null, LockMetadata.NONE, false);
    }

    // ---------------------------------------------------------------- looking

    /** The leases this client holds now. */
    public List<Lease> held() {
        return engine.heldNow();
    }

    /** The backend's record of one lock, in one round trip. */
    public Optional<LockInfo> inspect(String name) {
        LockNames.requireValid(name);
        engine.requireOpen();
        return engine.backend.inspect(name);
    }

    /**
     * The locks held now on the whole backend (by any client) whose names start with {@code prefix},
     * sorted by name, with their metadata where the backend keeps it ({@link Capability#METADATA}).
     */
    public List<LockInfo> list(String prefix) {
        LockNames.requireValidPrefix(prefix);
        engine.requireOpen();
        return engine.backend.list(prefix);
    }

    /**
     * As {@link #list(String)}, keeping the locks {@code where} selects, e.g. {@link LockInfo#ofType}
     * or {@link LockInfo#ownedBy}. The backend is read by prefix; the selection is made here.
     */
    public List<LockInfo> list(String prefix, java.util.function.Predicate<LockInfo> where) {
        Objects.requireNonNull(where, "where");
        return list(prefix).stream().filter(where).toList();
    }

    /**
     * Ends the current grant of {@code name}, whoever holds it, for an operator: the backend frees
     * it (owner-checked against the lease id it read, so a grant made in between is never touched),
     * the next grant gets a higher token, and the old holder's next renewal is refused, so it learns
     * of the loss; until then its late writes are rejected by the token. Returns the grant that was
     * ended, or empty when the lock was free (or changed hands between the read and the release).
     * On a shared name every holder read is released (one round trip each).
     */
    public Optional<LockInfo> forceRelease(String name) {
        Optional<LockInfo> current = inspect(name);
        if (current.isEmpty() || current.get().holder().isEmpty()) {
            return Optional.empty();
        }
        LockInfo info = current.get();
        boolean freed = false;
        for (LockHolder holder : info.holders()) {
            freed |= engine.releaseOnBackend(name, holder.leaseId());
        }
        Engine.LOG.info(
                "fencelock: forced release of '{}' (lease {}, token {}, owner {}): {}",
                name,
                info.leaseId(),
                info.token(),
                info.metadata().owner(),
                freed ? "freed" : "it had changed hands; nothing done");
        return freed ? Optional.of(info) : Optional.empty();
    }

    /** This client's id in thread names, logs and its default owner description ({@code fencelock-N}). */
    public String clientId() {
        return engine.clientId;
    }

    /** The name of the provider this client was opened on, or the backend's class name when built directly. */
    public String backendName() {
        return engine.backendName;
    }

    /**
     * Deletes the backend's records of locks free for at least {@code freeFor}, where the backend
     * can do so without ever lowering a later token ({@link Capability#PURGE_FREE}).
     */
    public int purgeFree(Duration freeFor) {
        LockOptions.requireAtMostMax("freeFor", LockOptions.requireNonNegative("freeFor", freeFor));
        if (!engine.capabilities.contains(Capability.PURGE_FREE)) {
            throw new UnsupportedOperationException("this backend does not declare PURGE_FREE");
        }
        engine.requireOpen();
        return engine.backend.purgeFree(freeFor);
    }

    public Set<Capability> capabilities() {
        return engine.capabilities;
    }

    public LockOptions options() {
        return engine.options;
    }

    public void addListener(LockEventListener listener) {
        engine.events.listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    public void removeListener(LockEventListener listener) {
        engine.events.listeners.remove(listener);
    }

    /**
     * Releases every lease this client holds (one that cannot be released expires on the backend
     * by itself), stops the watchdog and closes the backend. Works on an interrupted thread: the
     * interrupt is kept for the caller.
     */
    @Override
    public void close() {
        engine.close();
    }

    private static Duration requireTtl(Duration ttl) {
        if (ttl == null) {
            throw new IllegalArgumentException("ttl null must be a positive duration");
        }
        return ttl;
    }

    /** Builds a client from a connection string (through {@link ServiceLoader}) or from a backend. */
    public static final class Builder {
        private String uri;
        private String provider;
        private final Map<String, String> properties = new LinkedHashMap<>();
        private LockBackend backend;
        private LockOptions options = LockOptions.defaults();
        private final List<LockEventListener> listeners = new ArrayList<>();

        private Builder() {}

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
                throw new IllegalArgumentException(
                        "property '" + key + "' is null: give a value or leave the property out");
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
            LockBackend chosen;
            String backendName;
            if (backend != null) {
                chosen = backend;
                backendName = backend.getClass().getSimpleName();
            } else {
                LockBackendProvider found = ProviderDiscovery.find(uri, provider);
                chosen = found.open(uri, Map.copyOf(properties));
                backendName = found.name();
            }
            return new LockClient(new Engine(chosen, backendName, options, listeners, System::nanoTime, true));
        }
    }
}
