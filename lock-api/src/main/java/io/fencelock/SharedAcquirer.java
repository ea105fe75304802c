package io.fencelock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings a shared-lock handle acquires with (TTL, renewal, metadata, fairness) and the three
 * ways to acquire, for {@link SemaphoreHandle} and {@link ReadWriteLockHandle}: each acquire call
 * becomes one engine spec, so waiting, renewal, deadlines and the lost signal are the engine's own.
 */
record SharedAcquirer(
        LockClient client, String name, Duration ttl, Boolean autoRenew, LockMetadata metadata, boolean fair) {

    SharedAcquirer {
        LockNames.requireValid(name);
        client.engine().requireShared(fair);
        Objects.requireNonNull(metadata, "metadata");
    }

    SharedAcquirer withTtl(Duration newTtl) {
        LockOptions.requirePositive("ttl", newTtl);
        return new SharedAcquirer(client, name, LockOptions.requireAtMostMax("ttl", newTtl), autoRenew, metadata, fair);
    }

    SharedAcquirer withAutoRenew(boolean renew) {
        return new SharedAcquirer(client, name, ttl, renew, metadata, fair);
    }

    SharedAcquirer withMetadata(LockMetadata newMetadata) {
        return new SharedAcquirer(client, name, ttl, autoRenew, Objects.requireNonNull(newMetadata, "metadata"), fair);
    }

    SharedAcquirer withFair(boolean newFair) {
        return new SharedAcquirer(client, name, ttl, autoRenew, metadata, newFair);
    }

    Optional<Lease> tryAcquire(LockMode mode, int permits, int limit) {
        Engine engine = client.engine();
        return engine.tryAcquire(engine.sharedSpec(name, ttl, autoRenew, metadata, mode, permits, limit, false, fair));
    }

    Optional<Lease> acquire(LockMode mode, int permits, int limit, Duration wait) throws InterruptedException {
        LockOptions.requireNonNegative("wait", wait);
        Engine engine = client.engine();
        return engine.acquire(
                engine.sharedSpec(name, ttl, autoRenew, metadata, mode, permits, limit, true, fair), wait);
    }

    <T> Optional<T> run(LockMode mode, int permits, int limit, Duration wait, LeaseTask<T> task) throws Exception {
        Objects.requireNonNull(task, "task");
        Optional<Lease> acquired = acquire(mode, permits, limit, wait);
        if (acquired.isEmpty()) {
            return Optional.empty();
        }
        return Optional.ofNullable(ExclusiveRun.run((ManagedLease) acquired.get(), task));
    }
}
