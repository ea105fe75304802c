package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.inmemory.InMemoryLockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Waiting, on a clock the test moves: a release signal ends the wait at once (without it, the
 * waiter would sleep until the holder's 30 s expire), the local wait lines hand over only through
 * the backend, an interrupt or a timeout leaves the line, and the poll backoff. The hang guards
 * only stop a broken engine; no outcome depends on how long anything takes.
 */
class EngineWaitingTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long HANG_GUARD_SECONDS = 10;
    private final FakeClock clock = new FakeClock();
    private final InMemoryLockBackend.Builder store =
            InMemoryLockBackend.builder().store("engine-" + System.nanoTime()).clock(clock);
    private final ScriptedBackend backend = new ScriptedBackend(store.build(), true);
    private final LockOptions options =
            LockOptions.builder().ttl(TTL).autoRenew(false).build();
    private final LockClient client = LockClient.withClock(backend, options, clock);
    private final LockClient other = LockClient.withClock(store.build(), options, clock);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        pool.shutdownNow();
        client.close();
        other.close();
    }

    @Test
    void aReleaseSignalEndsTheWaitAtOnce() throws Exception {
        Lease holder = other.tryAcquire("a").orElseThrow();
        Future<Optional<Lease>> waiter = pool.submit(() -> client.acquire("a", Duration.ofHours(1)));
        awaitTrue("the waiter's refused attempt", () -> backend.attempts.get() >= 1);
        holder.release(); // another client: only the backend's signal can wake the waiter before 30 s
        Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(granted.fencingToken()).isGreaterThan(holder.fencingToken());
    }

    @Test
    void aQueuedWaiterIsGrantedOnlyByTheBackendWithATokenOfItsOwn() throws Exception {
        Lease holder = client.tryAcquire("q").orElseThrow();
        List<Future<Optional<Lease>>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiters.add(pool.submit(() -> client.acquire("q", Duration.ofHours(1))));
            int queued = i + 1;
            awaitTrue(
                    "waiter " + queued + " in line",
                    () -> client.engine().waitLines.waiting("q") == queued);
        }
        long token = holder.fencingToken();
        for (int handOver = 0; handOver < 3; handOver++) {
            int grantsBefore = backend.grants.get();
            (handOver == 0 ? holder : client.held().get(0)).release();
            Lease next = awaitNextGrant(waiters);
            assertThat(backend.grants.get())
                    .as("one backend grant per hand-over")
                    .isEqualTo(grantsBefore + 1);
            assertThat(next.fencingToken()).as("a token of its own").isGreaterThan(token);
            assertThat(backend.inspect("q").orElseThrow().token()).isEqualTo(next.fencingToken());
            token = next.fencingToken();
            assertThat(client.held()).as("only the new holder holds").containsExactly(next);
        }
    }

    private Lease awaitNextGrant(List<Future<Optional<Lease>>> waiters) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (System.nanoTime() - end < 0) {
            for (Future<Optional<Lease>> w : new ArrayList<>(waiters)) {
                if (w.isDone()) {
                    waiters.remove(w);
                    return w.get().orElseThrow();
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no waiter was granted");
    }

    @Test
    void aWaiterOfTheHoldingClientDoesNotAskUntilItsRelease() throws Exception {
        Lease holder = client.tryAcquire("own").orElseThrow();
        int attemptsBefore = backend.attempts.get();
        Future<Optional<Lease>> waiter = asleepAtTheHead("own");
        holder.release(); // signals the line once the backend answered: the waiter's 30 s sleep ends at once
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(backend.attempts.get() - attemptsBefore)
                .as("the waiter's only attempt is the granted one: its own client held the name")
                .isEqualTo(1);
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    }

    @Test
    void aLostGrantOfTheHoldingClientLetsItsWaiterAskAtOnce() throws Exception {
        Lease holder = client.tryAcquire("lost").orElseThrow();
        Future<Optional<Lease>> waiter = asleepAtTheHead("lost");
        clock.advance(TTL); // past the holder's validity deadline and the backend's expiry; not renewed
        client.engine().watchdog.checkExpiries();
        assertThat(holder.isValid()).isFalse();
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
    }

    @Test
    void aReleaseHandsTheNameToAWaiterOfItsClientInOneStep() throws Exception {
        Lease holder = client.tryAcquire("h").orElseThrow();
        Future<Optional<Lease>> waiter = asleepAtTheHead("h");
        int releasesBefore = backend.releases.get();
        assertThat(holder.release()).as("the holder's grant ended").isTrue();
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(backend.handOvers.get()).as("one hand-over").isEqualTo(1);
        assertThat(backend.releases.get())
                .as("no release round trip of its own")
                .isEqualTo(releasesBefore);
        assertThat(next.fencingToken()).as("a token of its own").isGreaterThan(holder.fencingToken());
        LockInfo seen = backend.inspect("h").orElseThrow();
        assertThat(seen.leaseId()).isEqualTo(next.leaseId());
        assertThat(seen.token()).isEqualTo(next.fencingToken());
        assertThat(holder.state()).isEqualTo(LeaseState.RELEASED);
        assertThat(client.held()).containsExactly(next);
        assertThat(next.release())
                .as("a release with nobody waiting frees the name")
                .isTrue();
        assertThat(other.tryAcquire("h")).isPresent();
    }

    @Test
    void aReleaseHandsOverToTheNextInLineEvenBeforeItWakes() throws Exception {
        Lease holder = client.tryAcquire("n").orElseThrow();
        Future<Optional<Lease>> second = asleepAtTheHead("n");
        Future<Optional<Lease>> third = pool.submit(() -> client.acquire("n", Duration.ofHours(1)));
        awaitTrue("the third in line", () -> client.engine().waitLines.waiting("n") == 2);
        int releasesBefore = backend.releases.get();
        holder.release();
        Lease secondLease = second.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        // the third became head as the second left the line, with an offer standing: asleep or not, it
        // takes this release's hand-over
        assertThat(secondLease.release()).isTrue();
        Lease thirdLease = third.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(backend.handOvers.get()).as("both releases handed over").isEqualTo(2);
        assertThat(backend.releases.get()).isEqualTo(releasesBefore);
        assertThat(thirdLease.fencingToken()).isGreaterThan(secondLease.fencingToken());
        assertThat(secondLease.fencingToken()).isGreaterThan(holder.fencingToken());
        assertThat(client.held()).containsExactly(thirdLease);
    }

    @Test
    void aWakeUpThatIsNoReleaseKeepsTheHandOverOfferStanding() throws Exception {
        Lease holder = client.tryAcquire("w").orElseThrow();
        Thread[] waiting = new Thread[1];
        Future<Optional<Lease>> waiter = asleepAtTheHead("w", Duration.ofHours(1), waiting);
        CompletableFuture<Boolean> released = new CompletableFuture<>();
        // The holder releases while the woken waiter looks at its client's hold again (its first clock read).
        clock.onNextReadBy(waiting[0], () -> released.complete(holder.release()));
        // Woken by something that is not the holder's release: on ZooKeeper, any change of the name's
        // waiting znodes fires the watch.
        client.engine().waitLines.released("w");
        assertThat(released.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(backend.handOvers.get())
                .as("the release found the offer standing and handed over")
                .isEqualTo(1);
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        assertThat(client.held()).containsExactly(next);
    }

    @Test
    void aHandOverWhoseAnswerIsLostLeavesNoGrantBehind() throws Exception {
        Lease holder = client.tryAcquire("lost-answer").orElseThrow();
        Future<Optional<Lease>> waiter = asleepAtTheHead("lost-answer");
        backend.loseNextHandOverAnswer.set(true);
        assertThatThrownBy(holder::release).isInstanceOf(LockBackendException.class);
        assertThat(backend.inspect("lost-answer").orElseThrow().leaseId())
                .as("applied: a lease nobody knows of holds the name")
                .isNotEqualTo(holder.leaseId());
        assertThat(waiter.isDone())
                .as("the waiter asks for itself, and is refused by the unknown grant")
                .isFalse();
        // the engine sweeps the unknown grant (and the holder's) in the background, owner-checked
        client.engine().watchdog.renewTurn();
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        assertThat(backend.inspect("lost-answer").orElseThrow().leaseId()).isEqualTo(next.leaseId());
        assertThat(client.held()).containsExactly(next);
    }

    @Test
    void aWaiterInterruptedDuringAHandOverLetsTheGrantGo() throws Exception {
        Lease holder = client.tryAcquire("hi").orElseThrow();
        Thread[] waiting = new Thread[1];
        Future<Optional<Lease>> waiter = asleepAtTheHead("hi", Duration.ofHours(1), waiting);
        StalledHandOver handOver = releaseIntoAStalledHandOver(holder);
        waiting[0].interrupt();
        awaitTrue(
                "the interrupted waiter waiting for the hand-over's answer",
                () -> waiting[0].getState() == Thread.State.WAITING);
        handOver.proceed.countDown();
        assertThat(handOver.released.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(backend.inspect("hi").orElseThrow().held())
                .as("the grant handed to an interrupted waiter is released")
                .isFalse();
        assertThat(client.held()).isEmpty();
        assertThat(client.engine().waitLines.waiting("hi")).isZero();
    }

    @Test
    void aWaitThatRunsOutDuringAHandOverStillTakesTheGrant() throws Exception {
        Lease holder = client.tryAcquire("ht").orElseThrow();
        Future<Optional<Lease>> waiter = asleepAtTheHead("ht", Duration.ofSeconds(5), new Thread[1]);
        StalledHandOver handOver = releaseIntoAStalledHandOver(holder);
        clock.advance(Duration.ofSeconds(6)); // the wait runs out while the backend grants it the name
        handOver.proceed.countDown();
        assertThat(handOver.released.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        Lease next = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)
                .orElseThrow(() -> new AssertionError("a grant the backend made for the waiter was dropped"));
        assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        assertThat(client.held()).containsExactly(next);
    }

    /** A release in progress whose hand-over waits inside the backend until {@code proceed} counts down. */
    private record StalledHandOver(Future<Boolean> released, CountDownLatch proceed) {}

    private StalledHandOver releaseIntoAStalledHandOver(Lease holder) throws InterruptedException {
        CountDownLatch inHandOver = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        backend.duringHandOver = () -> {
            inHandOver.countDown();
            awaitUninterruptibly(proceed);
        };
        Future<Boolean> released = pool.submit(holder::release);
        assertThat(inHandOver.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        return new StalledHandOver(released, proceed);
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A waiter of {@code client} for {@code name}, once it sleeps at the head of the name's line. */
    private Future<Optional<Lease>> asleepAtTheHead(String name) throws InterruptedException {
        return asleepAtTheHead(name, Duration.ofHours(1), new Thread[1]);
    }

    /** The same, waiting up to {@code wait}; its thread in {@code waiting[0]}. */
    private Future<Optional<Lease>> asleepAtTheHead(String name, Duration wait, Thread[] waiting)
            throws InterruptedException {
        Future<Optional<Lease>> waiter = pool.submit(() -> {
            waiting[0] = Thread.currentThread();
            return client.acquire(name, wait);
        });
        awaitTrue(
                "the waiter asleep at the head of the line",
                () -> waiting[0] != null
                        && client.engine().waitLines.waiting(name) == 1
                        && waiting[0].getState() == Thread.State.TIMED_WAITING);
        return waiter;
    }

    /**
     * Where a release grants the first queued waiter (GRANT_ON_RELEASE), the waiter holds without an attempt
     * of its own, under the lease its refusal queued, and its validity counts from that attempt's send time:
     * the release came later, so the backend's lease ends later than the waiter believes, never earlier.
     */
    @Test
    void aGrantByAReleaseIsValidFromTheAttemptThatQueuedIt() throws Exception {
        try (Patient waiting = patient()) {
            Lease holder = other.tryAcquire("g").orElseThrow();
            Future<Optional<Lease>> waiter = pool.submit(() -> waiting.client().acquire("g", Duration.ofHours(1)));
            awaitTrue(
                    "the waiter's refused attempt that queued it",
                    () -> !waiting.backend().queuedLeases.isEmpty());
            int attempts = waiting.backend().attempts.get();
            String queuedUnder = waiting.backend().queuedLeases.get(0);
            clock.advance(Duration.ofSeconds(10)); // the queuing attempt was sent 10 s before the release
            holder.release();
            Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            assertThat(waiting.backend().attempts.get())
                    .as("attempts of the waiter after the release")
                    .isEqualTo(attempts);
            assertThat(granted.leaseId()).as("the lease its refusal queued").isEqualTo(queuedUnder);
            assertThat(granted.fencingToken()).isGreaterThan(holder.fencingToken());
            assertThat(granted.remainingValidity())
                    .as("validity counted from the queuing attempt, 10 s before the grant")
                    .isEqualTo(waiting.options().validityWindow(TTL).minusSeconds(10));
            LockInfo onBackend = waiting.backend().inspect("g").orElseThrow();
            assertThat(onBackend.expiresAt())
                    .as("the backend's expiry, counted from the release")
                    .isEqualTo(onBackend.serverTime().plus(TTL));
            granted.release();
        }
    }

    /**
     * An acquire granted at once subscribes to no release signal: the feed is told of the name only by the
     * first attempt that does not hold, and then the head asks again before it sleeps.
     */
    @Test
    void anAcquireGrantedAtOnceWatchesNothing() throws Exception {
        try (Patient waiting = patient()) {
            ScriptedBackend own = waiting.backend();
            Lease first = waiting.client().acquire("w", Duration.ofHours(1)).orElseThrow();
            assertThat(own.watches.get())
                    .as("names watched by an acquire granted at once")
                    .isZero();
            assertThat(own.attempts.get()).isEqualTo(1);
            assertThat(first.release()).isTrue();

            Lease holder = other.tryAcquire("w").orElseThrow();
            Future<Optional<Lease>> waiter = pool.submit(() -> waiting.client().acquire("w", Duration.ofHours(1)));
            awaitTrue("the waiter's refused attempt that queued it", () -> !own.queuedLeases.isEmpty());
            assertThat(own.watches.get())
                    .as("names watched by a waiting acquire")
                    .isEqualTo(1);
            assertThat(own.refusedLeases)
                    .as("the first attempt, refused before the name was watched, then the one that queued it")
                    .hasSize(2);
            holder.release();
            assertThat(waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)
                            .orElseThrow()
                            .release())
                    .isTrue();
        }
    }

    /**
     * A release that comes after the head's first refusal and before it subscribed to the release signal is
     * not missed: the head asks again at once after subscribing. Its poll is a minute apart, so only that
     * second attempt can bring it the lock within the bound.
     */
    @Test
    void aReleaseBeforeTheHeadSubscribedIsNotMissed() throws Exception {
        try (Patient waiting = patient()) {
            ScriptedBackend own = waiting.backend();
            Lease holder = other.tryAcquire("b").orElseThrow();
            releaseInsideTheNextAttempt(own, holder); // after the first attempt was refused, before its answer
            Lease granted = pool.submit(() -> waiting.client().acquire("b", Duration.ofHours(1)))
                    .get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)
                    .orElseThrow();
            assertThat(own.attempts.get())
                    .as("the refused attempt and the one after subscribing")
                    .isEqualTo(2);
            assertThat(granted.fencingToken()).isGreaterThan(holder.fencingToken());
            assertThat(granted.release()).isTrue();
        }
    }

    /**
     * A plain {@code tryAcquire} of a client whose head waits is, to the backend, an attempt of the waiting
     * client: once the place is a quarter of its TTL old, its refusal rewrites the place under its own lease.
     * The head takes a release's grant to that lease (valid from that attempt's send time) without an attempt
     * of its own, instead of letting it go and losing the client's turn.
     */
    @Test
    void aGrantToTheLeaseOfAPlainAttemptGoesToTheWaitingHead() throws Exception {
        try (Patient waiting = patient()) {
            ScriptedBackend own = waiting.backend();
            Lease holder = other.tryAcquire("p").orElseThrow();
            Future<Optional<Lease>> waiter = queuedHeadWithAnOldPlace(waiting, "p");
            assertThat(waiting.client().tryAcquire("p"))
                    .as("a plain attempt while the head waits")
                    .isEmpty();
            assertThat(own.queuedLeases)
                    .as("the leases the client was queued under: the head's, then the plain attempt's")
                    .hasSize(2);
            String plain = own.queuedLeases.get(1);
            int attempts = own.attempts.get();
            holder.release(); // grants the lease the client is queued under now: the plain attempt's
            Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            assertThat(granted.leaseId())
                    .as("the lease the plain attempt queued")
                    .isEqualTo(plain);
            assertThat(own.attempts.get())
                    .as("attempts of the waiter after the release")
                    .isEqualTo(attempts);
            assertThat(granted.remainingValidity())
                    .as("validity counted from the plain attempt, sent at the clock's present time")
                    .isEqualTo(waiting.options().validityWindow(TTL));
            assertThat(granted.release()).isTrue();
        }
    }

    /**
     * As above, but the release comes while the plain attempt is in flight: after the backend queued the client
     * under its lease, before its answer is in. The head takes the grant as its own then too, instead of the
     * engine letting it go as a grant nobody here waits for.
     */
    @Test
    void aGrantToAPlainAttemptStillInFlightGoesToTheWaitingHead() throws Exception {
        try (Patient waiting = patient()) {
            ScriptedBackend own = waiting.backend();
            Lease holder = other.tryAcquire("f").orElseThrow();
            Future<Optional<Lease>> waiter = queuedHeadWithAnOldPlace(waiting, "f");
            int attempts = own.attempts.get();
            releaseInsideTheNextAttempt(own, holder);
            assertThat(waiting.client().tryAcquire("f"))
                    .as("a plain attempt while the head waits, refused before the release")
                    .isEmpty();
            String plain = own.queuedLeases.get(1);
            Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            assertThat(granted.leaseId())
                    .as("the lease the plain attempt queued")
                    .isEqualTo(plain);
            assertThat(own.attempts.get())
                    .as("attempts of the waiter: none after the plain one")
                    .isEqualTo(attempts + 1);
            assertThat(granted.remainingValidity())
                    .as("validity counted from the plain attempt, sent at the clock's present time")
                    .isEqualTo(waiting.options().validityWindow(TTL));
            waiting.client().engine().watchdog.renewTurn(); // background releases would run here
            assertThat(own.releasedLeases).as("releases sent").doesNotContain(plain);
            assertThat(own.inspect("f").map(LockInfo::leaseId)).contains(plain);
            assertThat(granted.release()).isTrue();
        }
    }

    /**
     * As above, and then the plain attempt's answer is lost: its lease would be swept (released) as that of an
     * attempt with an unknown outcome, but the waiting head holds it by then, so it is not: the sweep would free a
     * lock the head goes on holding.
     */
    @Test
    void aPlainAttemptWhoseLeaseTheHeadTookIsNotSweptWhenItsAnswerIsLost() throws Exception {
        try (Patient waiting = patient()) {
            ScriptedBackend own = waiting.backend();
            Lease holder = other.tryAcquire("g").orElseThrow();
            Future<Optional<Lease>> waiter = queuedHeadWithAnOldPlace(waiting, "g");
            releaseInsideTheNextAttempt(own, holder);
            own.loseNextAcquireAnswer.set(true);
            assertThatThrownBy(() -> waiting.client().tryAcquire("g"))
                    .as("the plain attempt, its answer lost")
                    .isInstanceOf(LockBackendException.class);
            Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
            waiting.client().engine().watchdog.renewTurn(); // the sweep would run here
            assertThat(own.releasedLeases).as("releases sent").doesNotContain(granted.leaseId());
            assertThat(own.inspect("g").map(LockInfo::leaseId))
                    .as("the holder on the backend")
                    .contains(granted.leaseId());
            assertThat(granted.release()).isTrue();
        }
    }

    /**
     * A grant its waiter learned from an attempt (the feed was late) stands when the feed tells it
     * afterwards: no head waits for it any more, but the lease is held here, so it is not let go.
     */
    @Test
    void aGrantTakenFromAnAttemptStandsWhenTheFeedTellsItLate() throws Exception {
        backend.grantsLate = true;
        Lease holder = other.tryAcquire("late").orElseThrow();
        Future<Optional<Lease>> waiter = pool.submit(() -> client.acquire("late", Duration.ofHours(1)));
        awaitTrue("the waiter's refused attempt that queued it", () -> !backend.queuedLeases.isEmpty());
        String queuedUnder = backend.queuedLeases.get(0);
        holder.release(); // grants the waiter's queued lease; its feed keeps the news back
        clock.advance(Duration.ofSeconds(1)); // the waiter's fallback poll is due: its attempt learns of it
        Lease granted = waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS).orElseThrow();
        assertThat(granted.leaseId()).isEqualTo(queuedUnder);

        backend.tellLateGrants(); // on this thread: what the engine lets go, it submits before returning
        client.engine().watchdog.renewTurn(); // this client runs no threads: its due chores run here
        assertThat(backend.releasedLeases).as("releases in the background").doesNotContain(queuedUnder);
        assertThat(backend.inspect("late").map(LockInfo::leaseId)).contains(queuedUnder);
        assertThat(granted.release()).isTrue();
    }

    /**
     * A queued waiter that stops waiting releases the lease it is queued under before the call returns: a
     * release may grant it yet, and the release of a lease that holds nothing withdraws its queue place.
     */
    @Test
    void aQueuedWaiterThatStopsWaitingReleasesItsQueuedLease() throws Exception {
        Lease holder = other.tryAcquire("s").orElseThrow();
        Future<Optional<Lease>> waiter = pool.submit(() -> client.acquire("s", Duration.ofSeconds(5)));
        awaitTrue("the waiter's refused attempt that queued it", () -> !backend.queuedLeases.isEmpty());
        String queuedUnder = backend.queuedLeases.get(0);
        clock.advance(Duration.ofSeconds(6)); // the wait runs out; the holder's 30 s do not
        assertThat(waiter.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isEmpty();
        assertThat(backend.releasedLeases)
                .as("the releases sent before the call returned")
                .contains(queuedUnder);
        assertThat(holder.release()).isTrue();
        assertThat(other.tryAcquire("s"))
                .as("the name after the holder's release")
                .isPresent();
    }

    @Test
    void anInterruptedWaiterLeavesTheLine() throws Exception {
        client.tryAcquire("i").orElseThrow();
        Future<Optional<Lease>> head = pool.submit(() -> client.acquire("i", Duration.ofHours(1)));
        awaitTrue("the head in line", () -> client.engine().waitLines.waiting("i") == 1);
        Thread[] behind = new Thread[1];
        Future<Throwable> second = pool.submit(() -> {
            behind[0] = Thread.currentThread();
            try {
                client.acquire("i", Duration.ofHours(1));
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        awaitTrue("the second in line", () -> client.engine().waitLines.waiting("i") == 2);
        behind[0].interrupt();
        assertThat(second.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(client.engine().waitLines.waiting("i")).isEqualTo(1);
        head.cancel(true);
        awaitTrue(
                "the interrupted head gone too", () -> client.engine().waitLines.waiting("i") == 0);
        assertThat(backend.grants.get()).as("no grant to anyone who left").isEqualTo(1);
    }

    @Test
    void aWaitThatRunsOutLeavesTheLineEmptyHanded() throws Exception {
        other.tryAcquire("t").orElseThrow();
        Future<Optional<Lease>> head = pool.submit(() -> client.acquire("t", Duration.ofSeconds(5)));
        awaitTrue("the head in line", () -> client.engine().waitLines.waiting("t") == 1);
        Future<Optional<Lease>> behind = pool.submit(() -> client.acquire("t", Duration.ofMillis(1)));
        awaitTrue("the second in line", () -> client.engine().waitLines.waiting("t") == 2);
        clock.advance(Duration.ofSeconds(6)); // both waits run out; the holder's 30 s do not
        assertThat(behind.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isEmpty();
        assertThat(head.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isEmpty();
        assertThat(client.engine().waitLines.waiting("t")).isZero();
    }

    @Test
    void thePollBackoffDoublesToItsCapWithJitterAndNeverSleepsPastTheHoldersExpiry() {
        LockOptions o = LockOptions.builder()
                .initialPollInterval(Duration.ofMillis(4))
                .maxPollInterval(Duration.ofMillis(100))
                .build();
        for (int misses = 0; misses < 30; misses++) {
            long ceiling = Math.min(
                    Duration.ofMillis(4).toNanos() << Math.min(misses, 20),
                    Duration.ofMillis(100).toNanos());
            for (int i = 0; i < 50; i++) {
                assertThat(Engine.pollPauseNanos(o, misses, null))
                        .as("miss " + misses)
                        .isBetween(ceiling / 2, ceiling);
            }
        }
        assertThat(Engine.pollPauseNanos(o, 10, Duration.ofMillis(3)))
                .as("the holder expires in 3 ms")
                .isLessThanOrEqualTo(Duration.ofMillis(4).toNanos());
        assertThat(Engine.pollPauseNanos(o, 10, Duration.ZERO))
                .as("never a busy loop")
                .isGreaterThanOrEqualTo(100_000);
    }

    @Test
    void closeReleasesEverythingAndClosesTheBackend() {
        for (String name : List.of("c1", "c2", "c3")) {
            client.tryAcquire(name).orElseThrow();
        }
        client.close();
        assertThat(other.list("c")).isEmpty();
        assertThat(client.held()).isEmpty();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> client.tryAcquire("c1")))
                .isInstanceOf(IllegalStateException.class);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> backend.inspect("c1")))
                .as("the backend is closed too")
                .isInstanceOf(LockBackendException.class);
    }

    @Test
    void aFailedReleaseIsRetriedWithBackoffUntilTheGrantWouldHaveExpired() {
        Lease lease = client.tryAcquire("r").orElseThrow();
        backend.failingReleases.set(2);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(lease::release))
                .isInstanceOf(LockBackendException.class);
        Watchdog watchdog = client.engine().watchdog;
        long pause = watchdog.renewTurn(); // the first retry, at once: fails again
        assertThat(backend.releases.get()).isEqualTo(2);
        assertThat(pause)
                .as("a jittered 20 ms")
                .isBetween(
                        Duration.ofMillis(10).toNanos(), Duration.ofMillis(20).toNanos());
        clock.advance(Duration.ofNanos(pause));
        watchdog.renewTurn();
        assertThat(backend.releases.get()).isEqualTo(3);
        assertThat(backend.inspect("r").orElseThrow().held()).isFalse();
    }

    @Test
    void anAcquireOfUnknownOutcomeIsSweptAndCheckedAgainAtGrowingIntervals() {
        backend.loseNextAcquireAnswer.set(true);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> client.tryAcquire("u")))
                .isInstanceOf(LockBackendException.class);
        assertThat(backend.inspect("u").orElseThrow().held())
                .as("applied, though nobody knows")
                .isTrue();
        Watchdog watchdog = client.engine().watchdog;
        watchdog.renewTurn();
        assertThat(backend.inspect("u").orElseThrow().held())
                .as("swept at once")
                .isFalse();
        int checks = 0;
        long elapsed = 0;
        for (long at : BackgroundRelease.SWEEP_CHECKS_NANOS) {
            clock.advance(Duration.ofNanos(at - elapsed - 1));
            int before = backend.releases.get();
            watchdog.renewTurn();
            assertThat(backend.releases.get()).as("not before its time").isEqualTo(before);
            clock.advance(Duration.ofNanos(1));
            watchdog.renewTurn();
            assertThat(backend.releases.get())
                    .as("released again at " + at / 1_000_000 + " ms")
                    .isEqualTo(before + 1);
            elapsed = at;
            checks++;
        }
        clock.advance(Duration.ofHours(1));
        int before = backend.releases.get();
        watchdog.renewTurn();
        assertThat(backend.releases.get()).as("no more after the last check").isEqualTo(before);
        assertThat(checks).isEqualTo(4);
    }

    /**
     * A client of its own on this test's store whose waiting head polls a minute apart: it attempts once and
     * then sleeps until a signal, so a test can count its attempts without racing its backoff (whose first
     * polls, with the default 5 ms, come a few milliseconds apart).
     */
    private record Patient(ScriptedBackend backend, LockClient client, LockOptions options) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
        }
    }

    /**
     * A head of {@code waiting} for {@code name}, which another client holds: queued by its refused attempt, its
     * place then a quarter of its TTL old, so that the client's next refusal rewrites the place.
     */
    private Future<Optional<Lease>> queuedHeadWithAnOldPlace(Patient waiting, String name) throws InterruptedException {
        Future<Optional<Lease>> waiter = pool.submit(() -> waiting.client().acquire(name, Duration.ofHours(1)));
        awaitTrue(
                "the head's refused attempt, which queued it",
                () -> waiting.backend().queuedLeases.size() == 1);
        clock.advance(TTL.dividedBy(4).plusSeconds(1)); // the place grows old; nothing wakes the head
        return waiter;
    }

    /**
     * The next acquire attempt on {@code own}, once the backend applied it and before its answer, has {@code holder}
     * released: a release whose grant to that attempt's lease comes while the attempt is in flight.
     */
    private static void releaseInsideTheNextAttempt(ScriptedBackend own, Lease holder) {
        AtomicBoolean released = new AtomicBoolean();
        own.beforeAcquireAnswer = () -> {
            if (!released.getAndSet(true)) {
                assertThat(holder.release()).isTrue(); // grants the lease of the attempt in flight
            }
        };
    }

    private Patient patient() {
        LockOptions patient = LockOptions.builder()
                .ttl(TTL)
                .autoRenew(false)
                .initialPollInterval(Duration.ofMinutes(1))
                .maxPollInterval(Duration.ofMinutes(1))
                .build();
        ScriptedBackend own = new ScriptedBackend(store.build(), true);
        return new Patient(own, LockClient.withClock(own, patient, clock), patient);
    }

    private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(1);
        }
    }
}
