package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InstrumentedBackendTest {
    private static final Duration TTL = Duration.ofSeconds(10);

    /**
     * An attempt counts as a call when it starts and as a refusal only once it is answered so: a property
     * that needs a waiter that found the lock held waits for the refusal, since a first attempt may still be
     * opening its connection or session when it is counted (ZooKeeper's TTL-class session), and a release
     * before its answer would test no wake-up at all.
     */
    @Test
    void aCallCountsAsItStartsAndARefusalOnlyOnceAnswered() throws Exception {
        String name = "instrumented-" + UUID.randomUUID();
        try (InMemoryLockBackend store = InMemoryLockBackend.builder().build()) {
            assertThat(store.tryAcquire(name, "holder", TTL).acquired()).isTrue();
            CountDownLatch sent = new CountDownLatch(1);
            CountDownLatch mayAnswer = new CountDownLatch(1);
            InstrumentedBackend counted = new InstrumentedBackend(slowAcquires(store, sent, mayAnswer));
            CompletableFuture<AcquireResult> attempt =
                    CompletableFuture.supplyAsync(() -> counted.tryAcquire(name, "waiter", TTL));
            assertThat(sent.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(counted.acquireCalls()).as("counted as it starts").isEqualTo(1);
            assertThat(counted.refusedAcquires()).as("not answered yet").isZero();
            mayAnswer.countDown();
            assertThat(attempt.get(10, TimeUnit.SECONDS).acquired()).isFalse();
            assertThat(counted.refusedAcquires()).isEqualTo(1);
            assertThat(store.release(name, "holder")).isTrue();
            assertThat(counted.tryAcquire(name, "waiter", TTL).acquired()).isTrue();
            assertThat(counted.acquireCalls()).isEqualTo(2);
            assertThat(counted.refusedAcquires()).as("a grant is no refusal").isEqualTo(1);
        }
    }

    /** {@code store}, whose acquires say they were sent and then wait for {@code mayAnswer}. */
    private static LockBackend slowAcquires(LockBackend store, CountDownLatch sent, CountDownLatch mayAnswer) {
        return (LockBackend) Proxy.newProxyInstance(
                LockBackend.class.getClassLoader(), new Class<?>[] {LockBackend.class}, (proxy, method, args) -> {
                    if (method.getName().equals("tryAcquire")) {
                        sent.countDown();
                        assertThat(mayAnswer.await(10, TimeUnit.SECONDS)).isTrue();
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
