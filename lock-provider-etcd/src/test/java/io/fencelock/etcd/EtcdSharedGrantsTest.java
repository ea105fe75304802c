package io.fencelock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.etcd.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Shared grants on a real etcd: the keys they are, their exclusion under races, renewal, downgrade, intents. */
class EtcdSharedGrantsTest {
    private static final Duration TTL = Duration.ofSeconds(10);
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private EtcdLockBackend open() {
        EtcdLockBackend b = EtcdLockBackend.builder()
                .endpoints(EtcdServer.shared().endpoints())
                .build();
        opened.add(b);
        return b;
    }

    private Client raw() {
        Client c = Client.builder()
                .endpoints(EtcdServer.shared().endpoints().toArray(String[]::new))
                .build();
        opened.add(c);
        return c;
    }

    private static KeyValue get(Client raw, String key) throws Exception {
        List<KeyValue> kvs = raw.getKVClient()
                .get(ByteSequence.from(key, StandardCharsets.UTF_8))
                .get(5, TimeUnit.SECONDS)
                .getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    private static SharedRequest permits(int k, int n) {
        return new SharedRequest(LockMode.PERMITS, k, n, id(), false, false);
    }

    private static SharedRequest rw(LockMode mode, String waiterId, boolean waits) {
        return new SharedRequest(mode, 1, 0, waiterId, waits, false);
    }

    @Test
    void holdersAreKeysBesideTheMutexKeyAndTheGuardGoesWithTheLast() throws Exception {
        EtcdLockBackend b = open();
        Client raw = raw();
        String name = "shared-" + UUID.randomUUID();
        String a = id();
        String c = id();
        LockMetadata md = LockMetadata.of("ops", "job", Map.of("run", "7"));
        AcquireResult first = b.tryAcquireShared(name, a, TTL, permits(2, 3), md);
        AcquireResult second = b.tryAcquireShared(name, c, TTL, permits(1, 3), LockMetadata.NONE);
        assertThat(first.acquired() && second.acquired()).isTrue();
        assertThat(second.token()).isGreaterThan(first.token());
        assertThat(b.tryAcquireShared(name, id(), TTL, permits(1, 3), LockMetadata.NONE)
                        .acquired())
                .as("a fourth permit of 3")
                .isFalse();
        KeyValue holder = get(raw, "fencelock/" + name + " h" + a);
        assertThat(holder.getCreateRevision())
                .as("the token is the holder key's create revision")
                .isEqualTo(first.token());
        assertThat(holder.getLease()).isNotZero();
        assertThat(get(raw, "fencelock/" + name + " g").getLease())
                .as("the guard has no lease")
                .isZero();
        LockInfo info = b.inspect(name).orElseThrow();
        assertThat(info.kind()).isEqualTo(LockMode.PERMITS);
        assertThat(info.limit()).isEqualTo(3);
        assertThat(info.permitsHeld()).isEqualTo(3);
        assertThat(info.holders()).extracting(h -> h.leaseId()).containsExactly(a, c);
        assertThat(info.holders().get(0).metadata()).isEqualTo(md);
        assertThat(info.holders().get(0).heldSince()).isNotNull();
        assertThat(b.list(name)).extracting(LockInfo::name).containsExactly(name);
        assertThatThrownBy(() -> b.tryAcquire(name, id(), TTL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a semaphore of 3 permits");
        assertThatThrownBy(() -> b.tryAcquireShared(name, id(), TTL, permits(1, 4), LockMetadata.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("3")
                .hasMessageContaining("4");
        assertThat(b.release(name, a)).isTrue();
        assertThat(b.release(name, a)).isFalse();
        assertThat(b.release(name, c)).isTrue();
        long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (get(raw, "fencelock/" + name + " g") != null) {
            assertThat(System.nanoTime() - bound)
                    .as("the guard deleted within 5 s")
                    .isNegative();
            Thread.onSpinWait();
        }
        assertThat(b.inspect(name)).isEmpty();
        AcquireResult mutex = b.tryAcquire(name, id(), TTL);
        assertThat(mutex.acquired()).as("a free name takes a new kind").isTrue();
        assertThat(mutex.token()).isGreaterThan(second.token());
    }

    /** A mutex and a shared grant race for fresh names from two backends: never both granted. */
    @Test
    void aMutexAndASharedGrantNeverHoldOneNameTogether() throws Exception {
        EtcdLockBackend one = open();
        EtcdLockBackend two = open();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 30; round++) {
                String name = "race-" + UUID.randomUUID();
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Boolean> mutex = pool.submit(() -> {
                    start.await();
                    try {
                        return one.tryAcquire(name, id(), TTL).acquired();
                    } catch (IllegalArgumentException anotherKind) {
                        return false;
                    }
                });
                Future<Boolean> writer = pool.submit(() -> {
                    start.await();
                    try {
                        return two.tryAcquireShared(name, id(), TTL, rw(LockMode.WRITE, id(), false), LockMetadata.NONE)
                                .acquired();
                    } catch (IllegalArgumentException anotherKind) {
                        return false;
                    }
                });
                assertThat(mutex.get(10, TimeUnit.SECONDS) && writer.get(10, TimeUnit.SECONDS))
                        .as("a mutex and a writer both granted on " + name)
                        .isFalse();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Permits asked for at once from several backends: never more than N, and the lost compares decide again. */
    @Test
    void racingPermitsNeverExceedTheLimit() throws Exception {
        List<EtcdLockBackend> backends = List.of(open(), open(), open(), open());
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 10; round++) {
                String name = "permits-" + UUID.randomUUID();
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<Boolean>> asks = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    EtcdLockBackend b = backends.get(t % backends.size());
                    asks.add(pool.submit(() -> {
                        start.await();
                        return b.tryAcquireShared(name, id(), TTL, permits(1, 3), LockMetadata.NONE)
                                .acquired();
                    }));
                }
                int granted = 0;
                for (Future<Boolean> f : asks) {
                    granted += f.get(10, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertThat(granted).isBetween(1, 3);
                assertThat(backends.get(0).inspect(name).orElseThrow().permitsHeld())
                        .isEqualTo(granted);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void renewalAndDowngradeKeepTheTokenAndTheDowngradeWakesReaders() throws Exception {
        EtcdLockBackend b = open();
        EtcdLockBackend other = open();
        String name = "rw-" + UUID.randomUUID();
        String mutexName = "mutex-" + UUID.randomUUID();
        String w = id();
        String m = id();
        AcquireResult write = b.tryAcquireShared(name, w, TTL, rw(LockMode.WRITE, id(), false), LockMetadata.NONE);
        AcquireResult mutex = b.tryAcquire(mutexName, m, TTL);
        List<RenewResult> renewed = b.renew(List.of(
                new RenewRequest(name, w, Duration.ofSeconds(5), null),
                new RenewRequest(mutexName, m, TTL, null),
                new RenewRequest(name, id(), TTL, null)));
        assertThat(renewed).extracting(RenewResult::renewed).containsExactly(true, true, false);
        assertThat(renewed.get(0).token()).isEqualTo(write.token());
        assertThat(renewed.get(1).token()).isEqualTo(mutex.token());
        CountDownLatch woken = new CountDownLatch(1);
        try (WakeUpSubscription ignored = SpiChecks.subscribe(other, name, woken::countDown)) {
            assertThat(other.tryAcquireShared(name, id(), TTL, rw(LockMode.READ, id(), true), LockMetadata.NONE)
                            .acquired())
                    .isFalse();
            long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!other.watchConfirmed(name)) {
                assertThat(System.nanoTime() - bound)
                        .as("watch confirmed within 5 s")
                        .isNegative();
                Thread.onSpinWait();
            }
            RenewResult down = b.downgrade(name, w, TTL);
            assertThat(down.renewed()).isTrue();
            assertThat(down.token()).isEqualTo(write.token());
            assertThat(woken.await(5, TimeUnit.SECONDS))
                    .as("a reader woken by the downgrade")
                    .isTrue();
        }
        assertThat(b.inspect(name).orElseThrow().holders())
                .singleElement()
                .satisfies(h -> assertThat(h.mode()).isEqualTo(LockMode.READ));
        assertThat(other.downgrade(name, w, TTL).token())
                .as("a downgrade of a lease that reads renews it, from a backend without its value too")
                .isEqualTo(write.token());
        assertThat(other.tryAcquireShared(name, id(), TTL, rw(LockMode.READ, id(), false), LockMetadata.NONE)
                        .acquired())
                .isTrue();
        assertThat(b.release(name, w)).isTrue();
        assertThat(b.downgrade(name, w, TTL).renewed()).as("a released lease").isFalse();
    }

    @Test
    void aWaitingWritersIntentHoldsNewReadersBackUntilWithdrawn() throws Exception {
        EtcdLockBackend b = open();
        String name = "intent-" + UUID.randomUUID();
        String reader = id();
        String writerWaits = id();
        assertThat(b.tryAcquireShared(name, reader, TTL, rw(LockMode.READ, id(), false), LockMetadata.NONE)
                        .acquired())
                .isTrue();
        assertThat(b.tryAcquireShared(name, id(), TTL, rw(LockMode.WRITE, id(), false), LockMetadata.NONE)
                        .acquired())
                .isFalse();
        assertThat(b.tryAcquireShared(name, id(), TTL, rw(LockMode.READ, id(), false), LockMetadata.NONE)
                        .acquired())
                .as("a refused tryWrite leaves no intent")
                .isTrue();
        for (int attempt = 0; attempt < 2; attempt++) {
            assertThat(b.tryAcquireShared(name, id(), TTL, rw(LockMode.WRITE, writerWaits, true), LockMetadata.NONE)
                            .acquired())
                    .isFalse();
        }
        assertThat(b.tryAcquireShared(name, id(), TTL, rw(LockMode.READ, id(), false), LockMetadata.NONE)
                        .acquired())
                .as("a new reader while a writer's intent stands")
                .isFalse();
        assertThatThrownBy(() -> b.tryAcquireShared(name, id(), TTL, permits(1, 2), LockMetadata.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a read-write lock");
        assertThat(b.release(name, writerWaits))
                .as("a withdrawn intent frees no grant")
                .isFalse();
        assertThat(b.tryAcquireShared(name, id(), TTL, rw(LockMode.READ, id(), false), LockMetadata.NONE)
                        .acquired())
                .isTrue();
    }
}
