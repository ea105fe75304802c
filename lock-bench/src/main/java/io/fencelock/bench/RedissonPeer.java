package io.fencelock.bench;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.SingleServerConfig;

/**
 * Redisson's {@code RLock} and {@code RFencedLock} (with a token) on the same Redis, waiting by
 * pub/sub as shipped, with a fixed lease time like fencelock's TTL. Redisson locks belong to a
 * thread, which the workloads respect (each cycle acquires and releases on one thread).
 */
final class RedissonPeer implements LockContender {
    private final RedissonClient redisson;
    private final boolean fenced;

    private RedissonPeer(RedissonClient redisson, boolean fenced) {
        this.redisson = redisson;
        this.fenced = fenced;
    }

    static Factory rLock(String uri) {
        return new Factory("Redisson RLock", Kind.PEER, "pub/sub", () -> new RedissonPeer(open(uri), false));
    }

    static Factory fencedLock(String uri) {
        return new Factory("Redisson RFencedLock", Kind.PEER, "pub/sub", () -> new RedissonPeer(open(uri), true));
    }

    static RedissonClient open(String uri) {
        RedisURI parsed = RedisURI.create(uri);
        Config config = new Config();
        SingleServerConfig server = config.useSingleServer()
                .setAddress("redis://" + parsed.getHost() + ":" + parsed.getPort())
                .setDatabase(parsed.getDatabase());
        char[] password = SpringIntegrationPeer.password(parsed);
        if (password != null) {
            server.setPassword(new String(password));
        }
        return Redisson.create(config);
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        long leaseMillis = BackendUnderTest.WORK_TTL.toMillis();
        if (fenced) {
            RFencedLock lock = redisson.getFencedLock("bench-redisson-fenced:" + name);
            Long token = lock.tryLockAndGetToken(wait.toMillis(), leaseMillis, TimeUnit.MILLISECONDS);
            return token == null ? null : lock::unlock;
        }
        RLock lock = redisson.getLock("bench-redisson:" + name);
        return lock.tryLock(wait.toMillis(), leaseMillis, TimeUnit.MILLISECONDS) ? lock::unlock : null;
    }

    @Override
    public void close() {
        redisson.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
