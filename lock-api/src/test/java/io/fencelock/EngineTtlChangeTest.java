package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Renewal to another TTL, "hold at most" and "release after" on a clock the test moves: the local
 * deadline follows the new TTL, a shortening caps it before it is sent, and a lost answer to a
 * shortening keeps the cap.
 */
class EngineTtlChangeTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private final FakeClock clock = new FakeClock();
    private final ScriptedBackend backend =
            new ScriptedBackend(InMemoryLockBackend.builder().clock(clock).build(), true);
    private final LockOptions options = LockOptions.builder().ttl(TTL).build();
    private final LockClient client = LockClient.withClock(backend, options, clock);
    private final Watchdog watchdog = client.engine().watchdog;

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void aShorterRenewalMovesTheDeadlineAndTheBackendExpiry() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        clock.advance(Duration.ofSeconds(1));
        assertThat(lease.renew(Duration.ofSeconds(3))).isTrue();
        assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(3));
        assertThat(lease.remainingValidity()).isEqualTo(options.validityWindow(Duration.ofSeconds(3)));
        clock.advance(Duration.ofSeconds(3));
        assertThat(backend.inspect("a").orElseThrow().held())
                .as("free on the backend when the new TTL ends")
                .isFalse();
        watchdog.checkExpiries();
        assertThat(lease.state())
                .as("locally, the deadline passed with the new TTL")
                .isEqualTo(LeaseState.LOST);
    }

    @Test
    void theWatchdogRenewsWithTheNewTtl() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(3))).isTrue();
        clock.advance(Duration.ofSeconds(1));
        watchdog.renewTurn();
        assertThat(backend.renewBatches)
                .as("the caller's renewal, then the watchdog's")
                .hasSize(2);
        assertThat(lease.remainingValidity()).isEqualTo(options.validityWindow(Duration.ofSeconds(3)));
        assertThat(backend.inspect("a").orElseThrow().expiresAt())
                .isEqualTo(backend.inspect("a").orElseThrow().serverTime().plusSeconds(3));
    }

    @Test
    void aLongerRenewalExtendsTheDeadline() {
        Lease lease = client.lock("a")
                .ttl(Duration.ofSeconds(2))
                .autoRenew(false)
                .tryAcquire()
                .orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(60))).isTrue();
        clock.advance(Duration.ofSeconds(30));
        assertThat(lease.isValid()).isTrue();
        assertThat(backend.inspect("a").orElseThrow().held()).isTrue();
    }

    @Test
    void aLostAnswerToAShorteningKeepsTheDeadlineCappedForGood() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        backend.loseNextRenewAnswer.set(true);
        assertThatThrownBy(() -> lease.renew(Duration.ofSeconds(3))).isInstanceOf(LockBackendException.class);
        Duration capped = options.validityWindow(Duration.ofSeconds(3));
        assertThat(lease.remainingValidity())
                .as("capped before the request left: the backend may have applied it")
                .isEqualTo(capped);
        // a later renewal to a longer TTL answers, but the lost shortening could still be applied after it
        assertThat(lease.renew(Duration.ofSeconds(30))).isTrue();
        assertThat(lease.remainingValidity()).as("still capped").isLessThanOrEqualTo(capped);
        clock.advance(capped);
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void anAnsweredShorteningLiftsTheCapForLaterRenewals() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        assertThat(lease.renew(Duration.ofSeconds(3))).isTrue();
        assertThat(lease.renew(Duration.ofSeconds(30))).isTrue();
        assertThat(lease.remainingValidity()).isEqualTo(options.validityWindow(TTL));
    }

    @Test
    void holdAtMostWithoutRenewal() {
        Lease lease = client.lock("a")
                .ttl(Duration.ofSeconds(5))
                .autoRenew(false)
                .tryAcquire()
                .orElseThrow();
        assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(5));
        clock.advance(Duration.ofSeconds(4));
        watchdog.renewTurn();
        assertThat(backend.renewBatches).as("never renewed").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        watchdog.checkExpiries();
        assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    }

    @Test
    void releaseAfterLeavesTheLockHeldUntilTheDelayEndsWithoutRenewal() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        assertThat(lease.releaseAfter(Duration.ofSeconds(5))).isTrue();
        assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(client.held()).isEmpty();
        clock.advance(Duration.ofSeconds(4));
        watchdog.renewTurn();
        assertThat(backend.renewBatches).as("only the final renewal").hasSize(1);
        assertThat(backend.inspect("a").orElseThrow().held()).isTrue();
        clock.advance(Duration.ofSeconds(1));
        assertThat(backend.inspect("a").orElseThrow().held()).isFalse();
        assertThat(lease.lost().toCompletableFuture().isDone())
                .as("no loss is signalled")
                .isFalse();
    }

    @Test
    void releaseAfterAVeryShortDelayReleasesAtOnce() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        assertThat(lease.releaseAfter(Duration.ZERO)).isTrue();
        assertThat(backend.inspect("a").orElseThrow().held()).isFalse();
    }

    @Test
    void aBackendThatCannotExtendALeaseGetsNoLongerTtl() {
        ScriptedBackend fixed =
                new ScriptedBackend(InMemoryLockBackend.builder().clock(clock).build(), true);
        fixed.withheld.add(Capability.EXTENDABLE_TTL);
        try (LockClient c = LockClient.withClock(fixed, options, clock)) {
            Lease lease = c.tryAcquire("a").orElseThrow();
            assertThatThrownBy(() -> lease.renew(TTL.plusSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("EXTENDABLE_TTL");
            assertThatThrownBy(() -> lease.releaseAfter(TTL.plusSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("delay");
            assertThat(fixed.renewBatches).as("nothing sent").isEmpty();
            assertThat(lease.renew(Duration.ofSeconds(10)))
                    .as("shorter is fine")
                    .isTrue();
            assertThat(lease.renew(TTL))
                    .as("back up to the granted TTL is fine")
                    .isTrue();
        }
    }

    @Test
    void badTtlsAreRefusedBeforeAnyRequest() {
        Lease lease = client.tryAcquire("a").orElseThrow();
        int batches = backend.renewBatches.size();
        assertThatThrownBy(() -> lease.renew(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lease.renew(Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too short");
        assertThatThrownBy(() -> lease.releaseAfter(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> client.lock("b").ttl(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl");
        assertThat(backend.renewBatches).hasSize(batches);
        assertThat(lease.ttl()).isEqualTo(TTL);
    }
}
