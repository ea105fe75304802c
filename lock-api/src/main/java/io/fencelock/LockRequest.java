package io.fencelock;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One acquisition's own settings, for when the client's defaults do not fit: a TTL, whether the
 * watchdog renews the lease, and the metadata stored with the grant (owner, type, data). Made by
 * {@link LockClient#lock(String)}; every setting is checked when given or, at the latest, before
 * the first request. A request may be used again; it is not thread-safe.
 *
 * <pre>{@code
 * Optional<Lease> lease = locks.lock("reports:daily")
 *         .ttl(Duration.ofMinutes(2))
 *         .type("job")
 *         .data("run", runId)
 *         .acquire(Duration.ofSeconds(5));
 * }</pre>
 */
public final class LockRequest {
    private final LockClient client;
    private final String name;
    private Duration ttl;
    private Boolean autoRenew;
    private LockMetadata metadata = LockMetadata.NONE;
    private boolean fair;

    LockRequest(LockClient client, String name) {
        LockNames.requireValid(name);
        this.client = client;
        this.name = name;
    }

    /** The lease's TTL (default: the client's). */
    public LockRequest ttl(Duration ttl) {
        LockOptions.requirePositive("ttl", ttl);
        this.ttl = LockOptions.requireAtMostMax("ttl", ttl);
        return this;
    }

    /**
     * Whether the watchdog renews the lease (default: the client's option). Without renewal the
     * lease ends at its TTL unless {@link Lease#renew} is called: "hold at most this long".
     */
    public LockRequest autoRenew(boolean autoRenew) {
        this.autoRenew = autoRenew;
        return this;
    }

    /** Who holds the lock, for people reading {@code inspect} and {@code list} (default: the client's owner). */
    public LockRequest owner(String owner) {
        metadata = metadata.withOwner(owner);
        return this;
    }

    /** A kind of lock the application names, to list locks by ({@code [A-Za-z0-9._:-]}, at most 64 characters). */
    public LockRequest type(String type) {
        metadata = metadata.withType(type);
        return this;
    }

    /** Replaces the user data (bounded; see {@link LockMetadata}). */
    public LockRequest data(Map<String, String> data) {
        metadata = metadata.withData(Objects.requireNonNull(data, "data"));
        return this;
    }

    /** Adds one entry of user data. */
    public LockRequest data(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(metadata.data());
        more.put(key, value);
        metadata = metadata.withData(more);
        return this;
    }

    /** All metadata at once. */
    public LockRequest metadata(LockMetadata metadata) {
        this.metadata = Objects.requireNonNull(metadata, "metadata");
        return this;
    }

    /**
     * Fair: waiters are granted in the order they reached the backend (a fair mutex, one grant at a
     * time as ever). Checked at once.
     *
     * @throws UnsupportedOperationException when the backend does not declare {@link Capability#FAIR_ORDER}
     */
    public LockRequest fair(boolean fair) {
        if (fair) {
            client.engine().requireShared(true);
        }
        this.fair = fair;
        return this;
    }

    /** One attempt; empty when another lease holds the lock. */
    public Optional<Lease> tryAcquire() {
        Engine engine = client.engine();
        return engine.tryAcquire(spec(engine, false));
    }

    private Engine.AcquireSpec spec(Engine engine, boolean waits) {
        return fair
                ? engine.sharedSpec(name, ttl, autoRenew, metadata, LockMode.EXCLUSIVE, 1, 0, waits, true)
                : engine.spec(name, ttl, autoRenew, metadata);
    }

    /**
     * Waits up to {@code wait} for the lock, as {@link LockClient#acquire(String, Duration)}.
     *
     * @throws InterruptedException when the thread is interrupted while waiting
     */
    public Optional<Lease> acquire(Duration wait) throws InterruptedException {
        LockOptions.requireNonNegative("wait", wait);
        Engine engine = client.engine();
        return engine.acquire(spec(engine, true), wait);
    }

    /**
     * Acquires (waiting up to {@code wait}), runs {@code task} while holding the lock and releases it,
     * as {@link LockClient#runExclusively(String, Duration, LeaseTask)}.
     */
    public <T> Optional<T> runExclusively(Duration wait, LeaseTask<T> task) throws Exception {
        Objects.requireNonNull(task, "task");
        Optional<Lease> acquired = acquire(wait);
        if (acquired.isEmpty()) {
            return Optional.empty();
        }
        return Optional.ofNullable(ExclusiveRun.run((ManagedLease) acquired.get(), task));
    }
}
