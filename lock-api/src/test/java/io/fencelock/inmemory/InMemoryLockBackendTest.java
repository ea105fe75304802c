package io.fencelock.inmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockClient;
import io.fencelock.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What the contract does not show: opening by URI, shared stores, the clock, tokens after a purge. */
class InMemoryLockBackendTest {
    private static final Duration TTL = Duration.ofSeconds(10);

    @Test
    void clientsOfOneStoreNameShareItsLocksAndOtherStoresDoNot() {
        String store = "shared-" + UUID.randomUUID();
        try (LockClient a = LockClient.open("inmemory:" + store);
                LockClient b = LockClient.open("inmemory:" + store);
                LockClient elsewhere = LockClient.open("inmemory:other-" + store)) {
            assertThat(a.tryAcquire("x")).isPresent();
            assertThat(b.tryAcquire("x")).as("the same store").isEmpty();
            assertThat(elsewhere.tryAcquire("x")).as("another store").isPresent();
        }
    }

    @Test
    void badUrisAndSettingsAreRefusedByName() {
        InMemoryLockBackendProvider provider = new InMemoryLockBackendProvider();
        assertThatThrownBy(() -> provider.open("inmemory:", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("inmemory:<store name>");
        assertThatThrownBy(() -> provider.open("inmemory:x", Map.of("table", "t")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[table]");
        assertThatThrownBy(() -> InMemoryLockBackend.builder().store(" ")).isInstanceOf(IllegalArgumentException.class);
        String store = "clocked-" + UUID.randomUUID();
        InMemoryLockBackend.builder().store(store).clock(() -> 0L).build();
        assertThatThrownBy(() -> InMemoryLockBackend.builder()
                        .store(store)
                        .clock(() -> 0L)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another clock");
    }

    @Test
    void expiryFollowsItsClockAndTokensNeverRegressAfterAPurge() {
        AtomicLong now = new AtomicLong();
        try (InMemoryLockBackend backend =
                InMemoryLockBackend.builder().clock(now::get).build()) {
            long first = backend.tryAcquire("x", "l1", TTL).token();
            now.addAndGet(TTL.toNanos() - 1);
            assertThat(backend.tryAcquire("x", "l2", TTL).holderRemaining()).isEqualTo(Duration.ofNanos(1));
            assertThat(backend.renew(List.of(new RenewRequest("x", "l1", TTL, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            now.addAndGet(TTL.toNanos());
            assertThat(backend.release("x", "l1"))
                    .as("expired: nothing to free")
                    .isFalse();
            assertThat(backend.purgeFree(Duration.ZERO)).isEqualTo(1);
            assertThat(backend.inspect("x")).isEmpty();
            assertThat(backend.tryAcquire("x", "l3", TTL).token())
                    .as("after the purge")
                    .isGreaterThan(first);
        }
    }
}
