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
        return new LockClient(new Engine(backend, options, List.of(), clock, false));
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
        validate(name, ttl);
        return engine.tryAcquire(name, ttl);
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
        validate(name, ttl);
        LockOptions.requireNonNegative("wait", wait);
        return engine.acquire(name, wait, ttl);
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
        return engine.heldNow();
    }

    /** The backend's record of one lock, in one round trip. */
    public Optional<LockInfo> inspect(String name) {
        LockNames.requireValid(name);
        engine.requireOpen();
        return engine.backend.inspect(name);
    }

    /** The locks held now on the whole backend (by any client) whose names start with {@code prefix}. */
    public List<LockInfo> list(String prefix) {
        LockNames.requireValidPrefix(prefix);
        engine.requireOpen();
        return engine.backend.list(prefix);
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

    private void validate(String name, Duration ttl) {
        LockNames.requireValid(name);
        engine.options.requireUsableTtl(ttl);
        engine.requireOpen();
        Duration max = engine.maxTtl();
        if (ttl.compareTo(max) > 0) {
            throw new IllegalArgumentException(
                    "ttl " + ttl + " is longer than " + max + ", the longest TTL this backend honours");
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
            LockBackend chosen = backend != null ? backend : ProviderDiscovery.open(uri, provider, properties);
            return new LockClient(new Engine(chosen, options, listeners, System::nanoTime, true));
        }
    }
}
