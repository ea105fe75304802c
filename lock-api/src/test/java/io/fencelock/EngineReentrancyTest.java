package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reentrancy lives in the engine only: the backend sees one grant per key, the token never changes
 * while the holds last, the last hold releases, and a lost lease ends every hold on it. Also the
 * shared handles' checks before any I/O. On a clock the test moves.
 */
class EngineReentrancyTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final FakeClock clock = new FakeClock();
    private final ScriptedBackend backend =
            new ScriptedBackend(InMemoryLockBackend.builder().clock(clock).build(), true);
    private final LockClient client = LockClient.withClock(
            backend, LockOptions.builder().ttl(TTL).autoRenew(false).build(), clock);

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void theSameThreadReentersOnOneGrantAndTheLastHoldReleases() {
        ReentrantLockHandle ledger = client.reentrant("ledger");
        ReentrantHold outer = ledger.tryAcquire().orElseThrow();
        ReentrantHold inner = ledger.tryAcquire().orElseThrow();
        assertThat(backend.grants.get()).as("grants the backend saw").isEqualTo(1);
        assertThat(inner.lease()).isSameAs(outer.lease());
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(ledger.holdCount()).isEqualTo(2);
        assertThat(inner.release()).as("an inner hold frees nothing").isFalse();
        assertThat(inner.release()).as("a hold released twice counts once").isFalse();
        assertThat(ledger.holdCount()).isEqualTo(1);
        assertThat(backend.inspect("ledger").orElseThrow().held()).isTrue();
        assertThat(outer.release()).as("the last hold frees the lock").isTrue();
        assertThat(backend.releases.get()).isEqualTo(1);
        assertThat(ledger.holdCount()).isZero();
    }

    @Test
    void anotherThreadDoesNotReenterButTheSameOwnerKeyDoes() throws Exception {
        ReentrantLockHandle ledger = client.reentrant("ledger");
        ReentrantHold mine = ledger.tryAcquire().orElseThrow();
        Optional<ReentrantHold> otherThread =
                CompletableFuture.supplyAsync(ledger::tryAcquire).get(10, TimeUnit.SECONDS);
        assertThat(otherThread).as("another thread while this one holds").isEmpty();
        mine.release();

        ReentrantHold job = ledger.acquire("job-7", Duration.ZERO).orElseThrow();
        ReentrantHold sameJobElsewhere = CompletableFuture.supplyAsync(() -> ledger.tryAcquire("job-7"))
                .get(10, TimeUnit.SECONDS)
                .orElseThrow();
        assertThat(sameJobElsewhere.lease()).isSameAs(job.lease());
        assertThat(ledger.holdCount("job-7")).isEqualTo(2);
        assertThat(ledger.tryAcquire("job-8")).as("another owner key").isEmpty();
        sameJobElsewhere.close();
        job.close();
        assertThat(backend.inspect("ledger").orElseThrow().held()).isFalse();
    }

    @Test
    void aLostLeaseEndsEveryHoldAndTheNextAcquireAsksTheBackend() {
        ReentrantLockHandle ledger = client.reentrant("ledger");
        ReentrantHold first = ledger.tryAcquire().orElseThrow();
        ledger.tryAcquire().orElseThrow();
        clock.advance(TTL);
        client.engine().watchdog.checkExpiries();
        assertThat(first.isValid()).isFalse();
        assertThat(ledger.holdCount()).as("holds on a lost lease").isZero();
        ReentrantHold again = ledger.tryAcquire().orElseThrow();
        assertThat(backend.grants.get()).as("a new grant after the loss").isEqualTo(2);
        assertThat(again.fencingToken()).isGreaterThan(first.fencingToken());
        first.release(); // a hold of the lost lease: leaves the new grant alone
        assertThat(again.isValid()).isTrue();
        assertThat(ledger.holdCount()).isEqualTo(1);
        again.release();
    }

    @Test
    void nestedRunsShareTheGrant() throws Exception {
        ReentrantLockHandle ledger = client.reentrant("ledger");
        Optional<Integer> inner = ledger.runExclusively(
                Duration.ZERO,
                outer -> ledger.runExclusively(
                                Duration.ZERO,
                                in -> in.fencingToken() == outer.fencingToken() ? ledger.holdCount() : -1)
                        .orElseThrow());
        assertThat(inner).contains(2);
        assertThat(backend.grants.get()).isEqualTo(1);
        assertThat(backend.inspect("ledger").orElseThrow().held())
                .as("released after the outer run")
                .isFalse();
    }

    @Test
    void sharedHandlesAreRefusedBeforeAnyRequestWhereTheBackendCannot() {
        ScriptedBackend plain =
                new ScriptedBackend(InMemoryLockBackend.builder().build(), true);
        plain.withheld.add(Capability.SHARED_LOCKS);
        plain.withheld.add(Capability.FAIR_ORDER);
        try (LockClient c = LockClient.withClock(plain, LockOptions.defaults(), clock)) {
            assertThatThrownBy(() -> c.semaphore("s", 2))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("SHARED_LOCKS");
            assertThatThrownBy(() -> c.readWriteLock("rw")).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> c.lock("m").fair(true)).isInstanceOf(UnsupportedOperationException.class);
            assertThat(plain.attempts.get()).isZero();
        }
        ScriptedBackend unordered =
                new ScriptedBackend(InMemoryLockBackend.builder().build(), true);
        unordered.withheld.add(Capability.FAIR_ORDER);
        try (LockClient c = LockClient.withClock(unordered, LockOptions.defaults(), clock)) {
            assertThatThrownBy(() -> c.readWriteLock("rw").fair(true))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("FAIR_ORDER");
        }
        assertThatThrownBy(() -> client.semaphore("s", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits 0");
        assertThatThrownBy(() -> client.semaphore("s", 2).tryAcquire(3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits 3");
        assertThat(backend.attempts.get()).isZero();
    }
}
