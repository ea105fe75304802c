package io.fencelock.bench;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

/**
 * Apache Curator's {@code InterProcessMutex}: per acquire an ephemeral sequential znode under the lock's
 * path, then the children listed; a waiter watches the znode just before its own and is woken when that
 * one goes (a queue in creation order). No fencing token; a lock is re-entrant per thread.
 */
final class CuratorMutexPeer implements LockContender {
    private static final int SESSION_MILLIS = 30_000;

    private final CuratorFramework client;
    private final ConcurrentHashMap<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

    private CuratorMutexPeer(String connectString) throws InterruptedException {
        this.client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(SESSION_MILLIS)
                .connectionTimeoutMs(10_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Curator could not connect to " + connectString);
        }
    }

    static Factory factory(Supplier<String> connectString) {
        return new Factory(
                "Curator InterProcessMutex",
                Kind.PEER,
                "watch on the previous waiter's znode",
                () -> new CuratorMutexPeer(connectString.get()));
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        InterProcessMutex mutex =
                mutexes.computeIfAbsent(name, n -> new InterProcessMutex(client, "/bench-curator/" + n));
        if (!mutex.acquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
            return null;
        }
        return mutex::release;
    }

    @Override
    public void close() {
        client.close();
    }
}
