package io.fencelock.bench;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * Redisson's shared locks on the same Redis, as its documentation shows them: {@code RReadWriteLock}
 * (thread-owned read and write locks with a lease time like fencelock's TTL, waiting by pub/sub),
 * {@code RPermitExpirableSemaphore} (permits that expire after a lease time, like fencelock's) and
 * {@code RSemaphore} (permits that never expire: a crashed holder keeps its permit for good, so it
 * is faster but not comparable in what it guarantees). Permits are set once with {@code trySetPermits}.
 */
final class RedissonSharedPeer implements SharedMeasurements.SharedContender {
    private final RedissonClient redisson;
    private final boolean expirablePermits;
    /** Names whose permits this instance has set: once, not per acquire (that would cost Redisson a round trip). */
    private final Set<String> permitsSet = ConcurrentHashMap.newKeySet();

    private RedissonSharedPeer(RedissonClient redisson, boolean expirablePermits) {
        this.redisson = redisson;
        this.expirablePermits = expirablePermits;
    }

    static List<SharedMeasurements.Factory> all(String uri) {
        return List.of(
                new SharedMeasurements.Factory(
                        "Redisson RReadWriteLock / RPermitExpirableSemaphore",
                        "peer",
                        true,
                        () -> new RedissonSharedPeer(RedissonPeer.open(uri), true)),
                new SharedMeasurements.Factory(
                        "Redisson RSemaphore (permits never expire)",
                        "peer",
                        false,
                        () -> new RedissonSharedPeer(RedissonPeer.open(uri), false)));
    }

    private static long leaseMillis() {
        return BackendUnderTest.WORK_TTL.toMillis();
    }

    @Override
    public LockContender.Held read(String name, Duration wait) throws Exception {
        return take(readWrite(name).readLock(), wait);
    }

    @Override
    public LockContender.Held write(String name, Duration wait) throws Exception {
        return take(readWrite(name).writeLock(), wait);
    }

    private RReadWriteLock readWrite(String name) {
        return redisson.getReadWriteLock("bench-redisson-rw:" + name);
    }

    private static LockContender.Held take(RLock lock, Duration wait) throws InterruptedException {
        return lock.tryLock(wait.toMillis(), leaseMillis(), TimeUnit.MILLISECONDS) ? lock::unlock : null;
    }

    @Override
    public LockContender.Held permit(String name, Duration wait) throws Exception {
        if (expirablePermits) {
            RPermitExpirableSemaphore semaphore = redisson.getPermitExpirableSemaphore("bench-redisson-pes:" + name);
            if (permitsSet.add(name)) {
                semaphore.trySetPermits(SharedMeasurements.PERMITS);
            }
            String id = semaphore.tryAcquire(wait.toMillis(), leaseMillis(), TimeUnit.MILLISECONDS);
            return id == null ? null : () -> semaphore.release(id);
        }
        RSemaphore semaphore = redisson.getSemaphore("bench-redisson-sem:" + name);
        if (permitsSet.add(name)) {
            semaphore.trySetPermits(SharedMeasurements.PERMITS);
        }
        return semaphore.tryAcquire(wait) ? semaphore::release : null;
    }

    @Override
    public void close() {
        redisson.shutdown();
    }
}
