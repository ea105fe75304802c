package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * Steps and checks of {@link LockBackend#handOver} that a provider's own tests share, each on a fresh
 * name. Where a check says "changes nothing", the provider passes {@code stateOf}, which reads
 * everything it stores of a name (rows, keys, documents), compared before and after.
 */
public final class HandOverChecks {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration GUARD = Duration.ofSeconds(10);

    private HandOverChecks() {}

    /**
     * A holder's grant handed over: a newer token, the new lease's metadata, and the old lease can no
     * longer renew, release or hand over, while the new one renews with its own token.
     *
     * @return the new lease id, which holds {@code name}
     */
    public static String handsOverAndEndsTheOldLease(LockBackend backend, String name) {
        assertThat(backend.capabilities()).contains(Capability.HAND_OVER);
        String old = lease();
        long first = backend.tryAcquire(name, old, TTL, LockMetadata.of("ops", "job", Map.of("run", "1")))
                .token();
        String next = lease();
        LockMetadata nextMetadata = LockMetadata.of("batch", "report", Map.of("run.id", "2"));

        AcquireResult handed = backend.handOver(name, old, next, TTL, nextMetadata);

        assertThat(handed.acquired()).isTrue();
        assertThat(handed.token()).isGreaterThan(first);
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.holder()).contains(next);
        assertThat(info.token()).isEqualTo(handed.token());
        assertThat(info.metadata()).isEqualTo(nextMetadata);
        assertThat(info.expiresAt()).isAfter(info.serverTime());
        assertThat(backend.renew(List.of(new RenewRequest(name, old, TTL, null)))
                        .get(0)
                        .renewed())
                .as("the old lease renews no more")
                .isFalse();
        assertThat(backend.release(name, old)).as("nor releases").isFalse();
        assertThat(backend.handOver(name, old, lease(), TTL, LockMetadata.NONE).acquired())
                .as("nor hands over")
                .isFalse();
        assertThat(backend.renew(List.of(new RenewRequest(name, next, TTL, null)))
                        .get(0)
                        .token())
                .as("the new lease renews with its own token")
                .isEqualTo(handed.token());
        return next;
    }

    /** A lease that expired on the backend's clock and that {@code other} (another client) took over: refused, nothing changes. */
    public static void refusedFromAnExpiredLeaseTakenOver(
            LockBackend backend, LockBackend other, String name, Function<String, ?> stateOf) {
        String old = lease();
        assertThat(backend.tryAcquire(name, old, Duration.ofMillis(1)).acquired())
                .isTrue();
        String taker = lease();
        long guard = System.nanoTime() + GUARD.toNanos();
        while (!other.tryAcquire(name, taker, TTL).acquired()) {
            assertThat(System.nanoTime() - guard).as("the 1 ms lease expired").isNegative();
        }
        refusedAndUnchanged(backend, name, old, stateOf);
        assertThat(other.inspect(name).orElseThrow().holder()).contains(taker);
        assertThat(other.release(name, taker)).isTrue();
    }

    /** A lease that expired on the backend's clock, nobody having taken the name since: refused, nothing changes. */
    public static void refusedFromAnExpiredLease(LockBackend backend, String name, Function<String, ?> stateOf) {
        String old = lease();
        long token = backend.tryAcquire(name, old, Duration.ofMillis(1)).token();
        long guard = System.nanoTime() + GUARD.toNanos();
        while (backend.inspect(name).orElseThrow().held()) {
            assertThat(System.nanoTime() - guard).as("the 1 ms lease expired").isNegative();
        }
        refusedAndUnchanged(backend, name, old, stateOf);
        assertFree(backend, name, token);
    }

    /** A released lease: refused, nothing changes, and the name stays free for anyone with the next token. */
    public static void refusedFromAReleasedLease(LockBackend backend, String name, Function<String, ?> stateOf) {
        String old = lease();
        long token = backend.tryAcquire(name, old, TTL).token();
        assertThat(backend.release(name, old)).isTrue();
        refusedAndUnchanged(backend, name, old, stateOf);
        assertFree(backend, name, token);
        String anyone = lease();
        assertThat(backend.tryAcquire(name, anyone, TTL).token())
                .as("free for anyone")
                .isEqualTo(token + 1);
        assertThat(backend.release(name, anyone)).isTrue();
    }

    /** A semaphore's grant is no mutex grant: refused, nothing changes. */
    public static void refusedFromASharedGrant(LockBackend backend, String name, Function<String, ?> stateOf) {
        String permit = lease();
        assertThat(backend.tryAcquireShared(
                                name,
                                permit,
                                TTL,
                                new SharedRequest(LockMode.PERMITS, 1, 2, lease(), false, false),
                                LockMetadata.NONE)
                        .acquired())
                .isTrue();
        refusedAndUnchanged(backend, name, permit, stateOf);
        assertThat(backend.release(name, permit)).isTrue();
    }

    /** A hand-over from {@code fromLeaseId} is refused and changes nothing the backend stores of the name. */
    private static void refusedAndUnchanged(
            LockBackend backend, String name, String fromLeaseId, Function<String, ?> stateOf) {
        Object before = stateOf.apply(name);
        AcquireResult refused = backend.handOver(name, fromLeaseId, lease(), TTL, LockMetadata.NONE);
        assertThat(refused.acquired())
                .as("a hand-over from a lease that does not hold the name")
                .isFalse();
        assertThat(stateOf.apply(name))
                .as("what the backend stores of the name")
                .isEqualTo(before);
    }

    private static void assertFree(LockBackend backend, String name, long lastToken) {
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.held()).as("held").isFalse();
        assertThat(info.token()).as("the last token").isEqualTo(lastToken);
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
