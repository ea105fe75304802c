package io.fencelock.tck.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.LockOptions;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.tck.InstrumentedBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * What {@link LockBackend#handOver} promises ({@link Capability#HAND_OVER}), for a provider's own tests
 * against its real server: below the engine (one hand-over replaces the holder; from a lease that does
 * not hold, nothing changes) and through it (a waiter of another client still gets the name after the
 * new holder's release). The hang guards only stop a broken backend; no outcome depends on timing.
 */
public final class HandOverChecks {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 30;

    private HandOverChecks() {}

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    /**
     * One hand-over ends the holder's grant and grants the new lease: a token above the holder's, the new
     * lease's metadata and grant time in the record; the old lease can neither renew, release nor hand over
     * again, and nobody else gets in. {@code expiryPrecision}: how far a grant's reported expiry may lie from
     * the stored one.
     */
    public static void assertAHandOverReplacesTheHolder(LockBackend backend, String name, Duration expiryPrecision) {
        String holder = lease();
        AcquireResult first = backend.tryAcquire(name, holder, TTL, LockMetadata.of("first", "job", Map.of("n", "1")));
        assertThat(first.acquired()).isTrue();
        LockInfo before = backend.inspect(name).orElseThrow();

        String next = lease();
        LockMetadata metadata = LockMetadata.of("second", "handed", Map.of("n", "2"));
        AcquireResult handed = backend.handOver(name, holder, next, TTL, metadata);
        assertThat(handed.acquired()).as("handed over").isTrue();
        assertThat(handed.token()).as("a token above the holder's").isGreaterThan(first.token());

        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.held()).isTrue();
        assertThat(info.holder()).contains(next);
        assertThat(info.token()).isEqualTo(handed.token());
        assertThat(info.metadata()).as("the new holder's metadata").isEqualTo(metadata);
        assertThat(info.heldSince()).as("the new grant's time").isAfterOrEqualTo(before.heldSince());
        assertThat(info.expiresAt()).isAfter(info.serverTime());
        assertThat(Duration.between(handed.expiresAt(), info.expiresAt()).abs())
                .as("the stored expiry against the one the hand-over reported")
                .isLessThanOrEqualTo(expiryPrecision);

        assertThat(backend.renew(List.of(new RenewRequest(name, holder, TTL, null))))
                .as("the old lease's renewal")
                .containsExactly(RenewResult.rejected());
        assertThat(backend.release(name, holder)).as("the old lease's release").isFalse();
        assertThat(backend.handOver(name, holder, lease(), TTL, LockMetadata.NONE)
                        .acquired())
                .as("the old lease's second hand-over")
                .isFalse();
        assertThat(backend.tryAcquire(name, lease(), TTL).acquired())
                .as("another caller")
                .isFalse();
        assertThat(backend.inspect(name).orElseThrow().holder()).contains(next);

        RenewResult renewed =
                backend.renew(List.of(new RenewRequest(name, next, TTL, null))).get(0);
        assertThat(renewed.renewed()).as("the new lease renews").isTrue();
        assertThat(renewed.token()).isEqualTo(handed.token());
        String third = lease();
        AcquireResult again = backend.handOver(name, next, third, TTL, LockMetadata.NONE);
        assertThat(again.token()).as("handed over again").isGreaterThan(handed.token());
        assertThat(backend.inspect(name).orElseThrow().metadata()).isEqualTo(LockMetadata.NONE);
        assertThat(backend.release(name, third)).isTrue();
        LockInfo free = backend.inspect(name).orElseThrow();
        assertThat(free.held()).isFalse();
        assertThat(free.token()).as("the free record keeps the token history").isEqualTo(again.token());
    }

    /**
     * From a lease that does not hold the name, a hand-over is refused and changes nothing: another lease's
     * hold; a lease that expired and was taken over by another client ({@code otherClient}, a second
     * instance on the same records); an expired lease nobody took over; a released lease (the name stays
     * free); a semaphore's grant. {@code names} gives a fresh name per case; {@code shortTtl} is a lease
     * the backend keeps no longer than that, waited past here.
     */
    public static void assertAHandOverIsOwnerChecked(
            LockBackend backend, LockBackend otherClient, java.util.function.Supplier<String> names, Duration shortTtl)
            throws InterruptedException {
        String held = names.get();
        String holder = lease();
        AcquireResult granted = backend.tryAcquire(held, holder, TTL, LockMetadata.of("holder", null, Map.of()));
        assertRefusedAndUnchanged(backend, held, lease(), "another lease's hold");
        assertThat(backend.inspect(held).orElseThrow().token()).isEqualTo(granted.token());

        String takenOver = names.get();
        String expired = lease();
        AcquireResult first = backend.tryAcquire(takenOver, expired, shortTtl);
        assertThat(first.acquired()).isTrue();
        Thread.sleep(shortTtl.toMillis() + 5);
        String taker = lease();
        AcquireResult taken =
                otherClient.tryAcquire(takenOver, taker, TTL, LockMetadata.of("taker", "other-client", Map.of()));
        assertThat(taken.acquired()).as("taken over by another client").isTrue();
        LockInfo takerRecord = assertRefusedAndUnchanged(backend, takenOver, expired, "an expired lease, taken over");
        assertThat(takerRecord.holder()).contains(taker);
        assertThat(takerRecord.token()).isEqualTo(taken.token());
        assertThat(takerRecord.metadata().owner()).contains("taker");

        String lapsed = names.get();
        String lapsing = lease();
        assertThat(backend.tryAcquire(lapsed, lapsing, shortTtl).acquired()).isTrue();
        Thread.sleep(shortTtl.toMillis() + 5);
        assertThat(assertRefusedAndUnchanged(backend, lapsed, lapsing, "an expired lease")
                        .held())
                .isFalse();

        String released = names.get();
        String releasing = lease();
        AcquireResult before = backend.tryAcquire(released, releasing, TTL);
        assertThat(backend.release(released, releasing)).isTrue();
        LockInfo free = assertRefusedAndUnchanged(backend, released, releasing, "a released lease");
        assertThat(free.held()).isFalse();
        assertThat(free.token()).isEqualTo(before.token());
        assertThat(backend.tryAcquire(released, lease(), TTL).acquired())
                .as("the name stayed free")
                .isTrue();

        if (backend.capabilities().contains(Capability.SHARED_LOCKS)) {
            String semaphore = names.get();
            String permit = lease();
            assertThat(backend.tryAcquireShared(
                                    semaphore,
                                    permit,
                                    TTL,
                                    new SharedRequest(LockMode.PERMITS, 1, 2, lease(), false, false),
                                    LockMetadata.NONE)
                            .acquired())
                    .isTrue();
            LockInfo shared = assertRefusedAndUnchanged(backend, semaphore, permit, "a semaphore's grant");
            assertThat(shared.kind()).isEqualTo(LockMode.PERMITS);
            assertThat(shared.holders()).hasSize(1);
        }
    }

    /** Hands {@code name} over from {@code from}: refused, and the record (holder, token, metadata, expiry) as before. */
    private static LockInfo assertRefusedAndUnchanged(LockBackend backend, String name, String from, String what) {
        LockInfo before = backend.inspect(name).orElseThrow();
        String next = lease();
        AcquireResult answer = backend.handOver(name, from, next, TTL, LockMetadata.of("next", null, Map.of()));
        assertThat(answer.acquired()).as("a hand-over from %s", what).isFalse();
        LockInfo after = backend.inspect(name).orElseThrow();
        assertThat(after.holder())
                .as("the holder after a hand-over from %s", what)
                .isEqualTo(before.holder());
        assertThat(after.token())
                .as("the token after a hand-over from %s", what)
                .isEqualTo(before.token());
        assertThat(after.metadata()).isEqualTo(before.metadata());
        assertThat(after.expiresAt()).isEqualTo(before.expiresAt());
        assertThat(after.holders()).isEqualTo(before.holders());
        assertThat(backend.release(name, next))
                .as("the refused lease holds nothing")
                .isFalse();
        return after;
    }

    /**
     * Through the engine: a waiter of another client waits for the name; the holder's release hands it to
     * a waiter of its own client in one hand-over (no release, no acquire), and the new holder's release
     * then lets the other client's waiter in, each grant with a higher token. Both clients close their
     * backend.
     */
    public static void assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
            LockBackend holderSide, LockBackend waiterSide, String name) throws Exception {
        InstrumentedBackend holders = new InstrumentedBackend(holderSide);
        InstrumentedBackend others = new InstrumentedBackend(waiterSide);
        LockOptions options = LockOptions.builder().ttl(TTL).build();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LockClient holding = LockClient.create(holders, options);
                LockClient waiting = LockClient.create(others, options)) {
            Lease first = holding.tryAcquire(name).orElseThrow();
            Future<Optional<Lease>> remote =
                    pool.submit(() -> waiting.acquire(name, Duration.ofSeconds(HANG_GUARD_SECONDS)));
            awaitTrue("the other client's refused attempt", () -> others.acquireCalls() >= 1);
            Thread[] localThread = new Thread[1];
            Future<Optional<Lease>> local = pool.submit(() -> {
                localThread[0] = Thread.currentThread();
                return holding.acquire(name, Duration.ofSeconds(HANG_GUARD_SECONDS));
            });
            // asleep at the head of its client's line: it offers to take the grant over and never asks itself
            awaitTrue("the holding client's waiter asleep at the head", () -> asleepInItsLine(localThread[0]));
            int acquiresBefore = holders.acquireCalls();
            int releasesBefore = holders.releaseCalls();

            assertThat(first.release())
                    .as("the holder's release ends its grant")
                    .isTrue();
            Lease next = local.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            assertThat(holders.handOverCalls()).as("one hand-over").isEqualTo(1);
            assertThat(holders.acquireCalls()).as("no acquire").isEqualTo(acquiresBefore);
            assertThat(holders.releaseCalls()).as("no release").isEqualTo(releasesBefore);
            assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
            assertThat(remote.isDone()).as("the other client waits on").isFalse();

            assertThat(next.release()).isTrue();
            Lease theirs = remote.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            assertThat(theirs.fencingToken()).isGreaterThan(next.fencingToken());
            assertThat(theirs.release()).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    /** Parked in the wait of a line's waiter (WaitLines), with a timeout: where the head sleeps while its client holds. */
    private static boolean asleepInItsLine(Thread thread) {
        if (thread == null || thread.getState() != Thread.State.TIMED_WAITING) {
            return false;
        }
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().startsWith("io.fencelock.WaitLines")) {
                return true;
            }
        }
        return false;
    }

    private static void awaitTrue(String what, java.util.function.BooleanSupplier condition)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not reached: " + what);
            }
            Thread.sleep(1);
        }
    }
}
