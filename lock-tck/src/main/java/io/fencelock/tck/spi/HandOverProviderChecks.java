package io.fencelock.tck.spi;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Hand-over checks for a provider's own tests against its real server, beside the TCK's properties
 * ({@code io.fencelock.tck.HandOverChecks}, run by the contract): the record a hand-over writes (the
 * new holder's metadata, grant time and expiry, as an acquire writes them, and nothing left of the old
 * grant), and, through the engine, that a waiter of another client still gets the name after the new
 * holder's release. The hang guards only stop a broken backend; no outcome depends on timing.
 */
public final class HandOverProviderChecks {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 30;

    private HandOverProviderChecks() {}

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    /**
     * A hand-over writes the new grant's record as an acquire does: the new lease's metadata (none left of
     * the old grant's), its grant time and its expiry from the server's clock ({@code expiryPrecision}: how
     * far the reported expiry may lie from the stored one); a renewal keeps them; a refused hand-over leaves
     * every field as it was; the free record after the release keeps the last token.
     */
    public static void assertAHandOverWritesTheRecordAsAGrant(
            LockBackend backend, String name, Duration expiryPrecision) {
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
        assertThat(info.holder()).contains(next);
        assertThat(info.token()).isEqualTo(handed.token());
        assertThat(info.metadata()).as("the new holder's metadata").isEqualTo(metadata);
        assertThat(info.heldSince()).as("the new grant's time").isAfterOrEqualTo(before.heldSince());
        assertThat(info.expiresAt()).isAfter(info.serverTime());
        assertThat(Duration.between(handed.expiresAt(), info.expiresAt()).abs())
                .as("the stored expiry against the one the hand-over reported")
                .isLessThanOrEqualTo(expiryPrecision);

        assertThat(backend.handOver(name, holder, lease(), TTL, LockMetadata.NONE)
                        .acquired())
                .as("the old lease's second hand-over")
                .isFalse();
        assertSameGrant(backend.inspect(name).orElseThrow(), info, "after a refused hand-over");
        RenewResult renewed =
                backend.renew(List.of(new RenewRequest(name, next, TTL, null))).get(0);
        assertThat(renewed.renewed()).as("the new lease renews").isTrue();
        assertThat(renewed.token()).isEqualTo(handed.token());
        LockInfo renewedInfo = backend.inspect(name).orElseThrow();
        assertThat(renewedInfo.metadata()).as("a renewal keeps the metadata").isEqualTo(metadata);
        assertThat(renewedInfo.heldSince()).as("and the grant time").isEqualTo(info.heldSince());

        String third = lease();
        AcquireResult again = backend.handOver(name, next, third, TTL, LockMetadata.NONE);
        assertThat(again.token()).as("handed over again").isGreaterThan(handed.token());
        assertThat(backend.inspect(name).orElseThrow().metadata())
                .as("nothing left of the last grant's metadata")
                .isEqualTo(LockMetadata.NONE);
        assertThat(backend.release(name, third)).isTrue();
        LockInfo free = backend.inspect(name).orElseThrow();
        assertThat(free.held()).isFalse();
        assertThat(free.token()).as("the free record keeps the token history").isEqualTo(again.token());
    }

    private static void assertSameGrant(LockInfo actual, LockInfo expected, String when) {
        assertThat(actual.holder()).as("the holder %s", when).isEqualTo(expected.holder());
        assertThat(actual.token()).as("the token %s", when).isEqualTo(expected.token());
        assertThat(actual.metadata()).as("the metadata %s", when).isEqualTo(expected.metadata());
        assertThat(actual.expiresAt()).as("the expiry %s", when).isEqualTo(expected.expiresAt());
        assertThat(actual.heldSince()).as("the grant time %s", when).isEqualTo(expected.heldSince());
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
            awaitTrue("the other client's refused attempt", () -> others.refusedAcquires() >= 1);
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

    /**
     * In the wait of its line's head ({@code WaitLines.Waiter.await}, called by the engine's
     * {@code acquireAtHead}): there the head sleeps while its own client holds the name, its hand-over offer
     * made just before that wait and standing across its wake-ups. One stack sample decides: the thread's state
     * and its stack read one after the other could pair a timed wait elsewhere (the backend's release feed
     * opening its session, say) with a later frame of the line on its way to the offer, and a release then
     * would find none.
     */
    private static boolean asleepInItsLine(Thread thread) {
        if (thread == null) {
            return false;
        }
        StackTraceElement[] frames = thread.getStackTrace();
        for (int i = 0; i < frames.length; i++) {
            if (frames[i].getClassName().startsWith("io.fencelock.")) { // the innermost frame of the library
                return frames[i].getClassName().equals("io.fencelock.WaitLines$Waiter")
                        && frames[i].getMethodName().equals("await")
                        && i + 1 < frames.length
                        && frames[i + 1].getClassName().equals("io.fencelock.Engine")
                        && frames[i + 1].getMethodName().equals("acquireAtHead");
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

    /**
     * A hand-over from a lease that does not hold the name writes nothing: {@code stateOf} reads all a
     * provider stores of a name (rows, keys, a document), equal before and after a hand-over from a
     * released lease, from an expired lease whose name {@code other} (another client) took, and from a
     * semaphore's permit. The contract's handOverIsOwnerChecked sees only what inspect shows.
     */
    public static void refusedHandOversWriteNothing(
            LockBackend backend, LockBackend other, Supplier<String> freshName, Function<String, ?> stateOf) {
        Duration ttl = Duration.ofSeconds(30);
        String released = freshName.get();
        String old = lease();
        backend.tryAcquire(released, old, ttl);
        backend.release(released, old);
        refusedWithoutAWrite(backend, released, old, stateOf);

        String taken = freshName.get();
        String expired = lease();
        backend.tryAcquire(taken, expired, Duration.ofMillis(1));
        String taker = lease();
        long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!other.tryAcquire(taken, taker, ttl).acquired()) { // the 1 ms lease expires on the backend
            assertThat(System.nanoTime() - guard).as("the 1 ms lease expired").isNegative();
        }
        refusedWithoutAWrite(backend, taken, expired, stateOf);
        assertThat(other.release(taken, taker)).isTrue();

        String semaphore = freshName.get();
        String permit = lease();
        assertThat(backend.tryAcquireShared(
                                semaphore,
                                permit,
                                ttl,
                                new SharedRequest(LockMode.PERMITS, 1, 2, lease(), false, false),
                                LockMetadata.NONE)
                        .acquired())
                .isTrue();
        refusedWithoutAWrite(backend, semaphore, permit, stateOf);
        assertThat(backend.release(semaphore, permit)).isTrue();
    }

    private static void refusedWithoutAWrite(
            LockBackend backend, String name, String from, Function<String, ?> stateOf) {
        Object before = stateOf.apply(name);
        assertThat(backend.handOver(name, from, lease(), Duration.ofSeconds(30), LockMetadata.NONE)
                        .acquired())
                .as("a hand-over from %s, which does not hold %s", from, name)
                .isFalse();
        assertThat(stateOf.apply(name))
                .as("what the backend stores of %s", name)
                .isEqualTo(before);
    }
}
