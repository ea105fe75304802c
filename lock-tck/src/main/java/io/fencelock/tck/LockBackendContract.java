package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LeaseLoss;
import io.fencelock.LeaseLostException;
import io.fencelock.LeaseState;
import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.LockEventListener;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.tck.fault.FaultRun;
import io.fencelock.tck.fault.FaultScenarios;
import io.fencelock.tck.fault.SharedFaultScenarios;
import io.fencelock.tck.history.Coverage;
import io.fencelock.tck.history.Event;
import io.fencelock.tck.history.History;
import io.fencelock.tck.history.HistoryChecker;
import io.fencelock.tck.history.Violation;
import io.fencelock.tck.matrix.GuaranteeMatrix;
import io.fencelock.tck.matrix.GuaranteeMatrix.Outcome;
import io.fencelock.tck.matrix.MatrixRecorder;
import io.fencelock.tck.schedule.Schedule;
import io.fencelock.tck.schedule.ScheduleGenerator;
import io.fencelock.tck.schedule.Shrinker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The fencelock contract. A provider (ours or a third party's) certifies its backend by
 * subclassing this with nothing but a fixture:
 *
 * <pre>{@code
 * class MyBackendTckTest extends LockBackendContract {
 *     protected BackendFixture fixture() { return new MyFixture(); }
 * }
 * }</pre>
 *
 * Each test is one property of docs/design.md. History properties judge seeded random multi-client
 * schedules run on real threads against the real backend; a failure is shrunk and reported with
 * its seed ({@code -Dfencelock.tck.seed=...} replays it). Properties a backend does not claim
 * (see {@link Capability}) are reported as not claimed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@ExtendWith(MatrixRecorder.class)
public abstract class LockBackendContract implements MatrixRecorder.Source {
    private static final int RACE_MAX_GRANTS = 10_000;

    private BackendFixture fixture;
    private Set<Capability> capabilities;
    private String runPrefix;
    private final AtomicInteger nameCounter = new AtomicInteger();
    private final List<LockClient> clients = new ArrayList<>();
    private List<RunResult> randomRun;
    private GuaranteeMatrix matrix;
    private FaultScenarios faults;
    private List<FaultRun> pauseRuns;
    private List<FaultRun> connectionRuns;
    private List<FaultRun> restartRuns;

    /** The real backend under test. Called once per test class. */
    protected abstract BackendFixture fixture();

    /** The random schedules' shape; override to adapt to a slow backend. */
    protected ScheduleGenerator.Config scheduleConfig() {
        ScheduleGenerator.Config d = ScheduleGenerator.Config.defaults();
        return new ScheduleGenerator.Config(
                d.minProcesses(),
                d.maxProcesses(),
                d.maxLocks(),
                d.minSteps(),
                d.maxSteps(),
                d.minTtlMillis(),
                d.maxTtlMillis(),
                capabilities.contains(Capability.PURGE_FREE));
    }

    @BeforeAll
    void openFixture() {
        fixture = fixture();
        capabilities = ScheduleRunner.capabilitiesOf(fixture);
        runPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8);
        String backendClass;
        try (LockBackend probe = fixture.openBackend()) {
            backendClass = probe.getClass().getName();
        }
        WarmUp.warm(fixture.openBackend(), runPrefix, options(Duration.ofSeconds(30), false));
        matrix = new GuaranteeMatrix(
                getClass().getSimpleName(),
                fixture.description(),
                backendClass,
                capabilities.stream().map(Enum::name).sorted().toList());
        faults = new FaultScenarios(fixture, this::freshName);
        System.out.println("[fencelock-tck] " + getClass().getSimpleName() + " on " + fixture.description()
                + "; capabilities " + capabilities);
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
        clients.clear();
    }

    @AfterAll
    void reportCoverage() {
        if (randomRun != null) {
            System.out.println("[fencelock-tck] " + getClass().getSimpleName() + ": " + randomRun.size()
                    + " schedules, coverage " + totalCoverage().describe());
        }
    }

    // ------------------------------------------------------------------ history properties

    @Test
    void certainHoldsNeverOverlap() {
        assertHistories("certainHoldsNeverOverlap", HistoryChecker::certainHoldsNeverOverlap);
    }

    @Test
    void tokensRespectRealTimeOrder() {
        requireClaim(Capability.FENCING);
        assertHistories("tokensRespectRealTimeOrder", HistoryChecker::tokensRespectRealTimeOrder);
    }

    @Test
    void newHolderExceedsAllPriorTokens() throws Exception {
        requireClaim(Capability.FENCING);
        String name = freshName();
        LockClient a = client(options(Duration.ofMillis(400), false));
        LockClient b = client(options(Duration.ofMillis(400), false));
        long last = 0;
        // release and re-acquire, by the same client and by another: leases that outlive a slow moment (a cold JVM
        // on a loaded machine took longer than a 400 ms TTL between the grant and its release)
        LockClient aReleasing = client(options(Duration.ofSeconds(10), false));
        LockClient bReleasing = client(options(Duration.ofSeconds(10), false));
        for (LockClient c : List.of(aReleasing, aReleasing, bReleasing, aReleasing)) {
            Lease lease = c.tryAcquire(name).orElseThrow(() -> new AssertionError("free lock not granted"));
            assertThat(lease.fencingToken())
                    .as("token after release + re-acquire")
                    .isGreaterThan(last);
            last = lease.fencingToken();
            assertThat(lease.release()).isTrue();
        }
        // expiry and takeover
        Lease expiring = grantOfAFreeName(a, name);
        last = expiring.fencingToken();
        Lease taker = b.acquire(name, TckSettings.hangBound())
                .orElseThrow(() -> new AssertionError("expired lock not taken over"));
        assertThat(taker.fencingToken())
                .as("token after takeover of an expired lease")
                .isGreaterThan(last);
        last = taker.fencingToken();
        taker.release();
        // the record deleted by a purge: the next holder must still exceed every earlier token
        if (capabilities.contains(Capability.PURGE_FREE)) {
            assertThat(a.purgeFree(Duration.ZERO)).as("records purged").isGreaterThanOrEqualTo(1);
            assertThat(a.inspect(name)).as("record of a purged lock").isEmpty();
            Lease afterPurge = grantOfAFreeName(b, name);
            assertThat(afterPurge.fencingToken())
                    .as("token after the lock's record was purged")
                    .isGreaterThan(last);
            afterPurge.release();
        }
        assertHistories("newHolderExceedsAllPriorTokens", HistoryChecker::newHolderExceedsAllPriorTokens);
    }

    /**
     * Contended acquires of one name by six clients while a seventh purges free records as
     * fast as it can: every holder writes its token to a fenced resource, and each write must be
     * accepted, so no holder got a token below an earlier holder's however a purge fell between an
     * acquire's start and its grant. Judged by the history checker; stops at the first rejected write.
     */
    @Test
    void tokensRiseWhilePurgesRace() throws Exception {
        requireClaim(Capability.FENCING);
        requireClaim(Capability.PURGE_FREE);
        String name = freshName();
        History history = new History();
        FencedResource resource = new FencedResource();
        LockOptions racing = options(TckSettings.hangBound(), false);
        // One thread per client: every racer's acquire is a backend attempt of its own in flight (a client
        // sends one attempt per name at a time and queues its other threads), and every release frees the
        // record (a hand-over between a client's threads would keep it held, and a purge away).
        int threads = 6;
        List<RecordedClient> racers = new ArrayList<>();
        for (int i = 1; i <= threads; i++) {
            racers.add(recorded(i, history, racing));
        }
        RecordedClient purger = recorded(threads + 1, history, racing);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger purgesThatDeleted = new AtomicInteger();
        long start = System.nanoTime();
        long end = start + TckSettings.raceDuration().toNanos();
        // past the end only until a purge has deleted the record at least once (bounded by TckSettings.hangBound())
        // and never past RACE_MAX_GRANTS: the history checks are quadratic in the writes, and a backend in
        // memory grants a hundred times faster than a networked one (which stays far below the bound)
        BooleanSupplier running = () -> !stop.get()
                && grants.get() < RACE_MAX_GRANTS
                && (System.nanoTime() - end < 0
                        || purgesThatDeleted.get() == 0
                                && System.nanoTime() - end
                                        < TckSettings.hangBound().toNanos());
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try {
            List<Future<?>> tasks = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                RecordedClient racer = racers.get(i);
                tasks.add(pool.submit(() -> {
                    while (running.getAsBoolean()) {
                        Optional<Lease> lease = racer.acquire(name, TckSettings.hangBound());
                        if (lease.isPresent()) {
                            grants.incrementAndGet();
                            if (!racer.write(resource, lease.get(), true)) {
                                stop.set(true); // an older token than an earlier holder's: enough to judge
                            }
                            racer.release(lease.get());
                        }
                    }
                    return null;
                }));
            }
            tasks.add(pool.submit(() -> {
                while (running.getAsBoolean()) {
                    long op = history.newOpId();
                    history.record(
                            purger.process(), op, Event.Type.INVOKE, Event.Kind.PURGE, null, null, 0, false, 0, null);
                    int purged = purger.client().purgeFree(Duration.ZERO);
                    history.record(
                            purger.process(),
                            op,
                            Event.Type.OK,
                            Event.Kind.PURGE,
                            null,
                            null,
                            0,
                            false,
                            0,
                            purged + " purged");
                    if (purged > 0) {
                        purgesThatDeleted.incrementAndGet();
                    }
                }
                return null;
            }));
            for (Future<?> task : tasks) {
                task.get(
                        TckSettings.raceDuration()
                                .plus(TckSettings.hangBound().multipliedBy(2))
                                .toMillis(),
                        TimeUnit.MILLISECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        List<Violation> violations = new ArrayList<>();
        for (Function<List<Event>, List<Violation>> check : List.<Function<List<Event>, List<Violation>>>of(
                HistoryChecker::fencedResourceRejectsStaleWriters,
                HistoryChecker::newHolderExceedsAllPriorTokens,
                HistoryChecker::tokensRespectRealTimeOrder)) {
            violations.addAll(check.apply(history.events()));
        }
        String figures = grants.get() + " grants in " + (System.nanoTime() - start) / 1_000_000 + " ms, "
                + resource.rejectedWrites() + " holders' writes rejected, " + purgesThatDeleted.get()
                + " purges that deleted the record";
        System.out.println("[fencelock-tck] tokensRiseWhilePurgesRace on " + fixture.description() + ": " + figures);
        if (!violations.isEmpty()) {
            StringBuilder sb = new StringBuilder("property tokensRiseWhilePurgesRace failed on ")
                    .append(fixture.description())
                    .append(" (")
                    .append(figures)
                    .append(")\nviolations:\n");
            violations.stream().limit(5).forEach(v -> sb.append("  ").append(v).append('\n'));
            fail(sb.toString());
        }
        // a run in which the purge never deleted the record, or hardly anyone was granted, proved nothing
        assertThat(purgesThatDeleted.get())
                .as("purges that deleted the contended record (" + figures + ")")
                .isPositive();
        assertThat(grants.get()).as("grants (" + figures + ")").isGreaterThanOrEqualTo(2 * threads);
    }

    @Test
    void fencedResourceRejectsStaleWriters() throws Exception {
        requireClaim(Capability.FENCING);
        String name = freshName();
        FencedResource resource = new FencedResource();
        LockClient zombieClient = client(options(Duration.ofMillis(300), false));
        LockClient next = client(options(Duration.ofMillis(300), false));
        Lease zombie = grantOfAFreeName(zombieClient, name);
        assertThat(resource.write(zombie.fencingToken())).isTrue();
        // the holder stalls past its TTL without knowing; another takes over and writes
        Lease successor = next.acquire(name, TckSettings.hangBound()).orElseThrow();
        assertThat(resource.write(successor.fencingToken())).isTrue();
        assertThat(resource.write(zombie.fencingToken()))
                .as("a stale writer's write")
                .isFalse();
        assertThat(resource.write(successor.fencingToken()))
                .as("the holder's second write")
                .isTrue();
        successor.release();
        assertHistories("fencedResourceRejectsStaleWriters", HistoryChecker::fencedResourceRejectsStaleWriters);
    }

    @Test
    void releaseIsOwnerChecked() throws Exception {
        String name = freshName();
        InstrumentedBackend raw = new InstrumentedBackend(fixture.openBackend());
        LockClient a = client(raw, options(Duration.ofMillis(300), false));
        LockClient b = client(options(Duration.ofSeconds(20), true));
        assertThat(raw.release(name, UUID.randomUUID().toString()))
                .as("release of a free lock by a stranger")
                .isFalse();
        Lease old = grantOfAFreeName(a, name);
        Lease holder = b.acquire(name, TckSettings.hangBound())
                .orElseThrow(() -> new AssertionError("expired lock not taken over"));
        assertThat(raw.release(name, old.leaseId()))
                .as("release by an expired lease")
                .isFalse();
        assertThat(raw.release(name, UUID.randomUUID().toString()))
                .as("release by a stranger")
                .isFalse();
        LockInfo info = b.inspect(name).orElseThrow();
        assertThat(info.held()).isTrue();
        assertThat(info.leaseId()).isEqualTo(holder.leaseId());
        assertThat(client(options(Duration.ofSeconds(5), false)).tryAcquire(name))
                .as("a third client's attempt")
                .isEmpty();
        assertThat(holder.isValid()).isTrue();
        assertHistories("releaseIsOwnerChecked", HistoryChecker::releaseIsOwnerChecked);
    }

    @Test
    void releaseIsIdempotent() {
        String name = freshName();
        LockBackend raw = fixture.openBackend();
        LockClient a = client(raw, options(Duration.ofSeconds(20), true));
        LockClient b = client(options(Duration.ofSeconds(20), true));
        Lease first = a.tryAcquire(name).orElseThrow();
        assertThat(first.release()).isTrue();
        assertThat(first.release()).as("second release through the lease").isFalse();
        assertThat(raw.release(name, first.leaseId()))
                .as("second release on the backend")
                .isFalse();
        first.close();
        Lease second = b.tryAcquire(name).orElseThrow();
        assertThat(first.release()).isFalse();
        assertThat(raw.release(name, first.leaseId())).isFalse();
        assertThat(b.inspect(name).orElseThrow().leaseId()).isEqualTo(second.leaseId());
        assertThat(second.state()).isEqualTo(LeaseState.HELD);
        assertHistories("releaseIsIdempotent", HistoryChecker::releaseIsIdempotent);
    }

    /**
     * Releasing works on an interrupted thread (a {@code finally} after a cancelled task): release(),
     * close(), the client's close() and runExclusively whose task sets the interrupt again free the
     * lock on the backend at once, throw nothing, and leave the interrupt set for the caller.
     */
    @Test
    void releaseWorksOnAnInterruptedThread() throws Exception {
        LockClient c = client(options(Duration.ofSeconds(30), true));
        LockClient observer = client(options(Duration.ofSeconds(30), true));
        String released = freshName();
        Lease lease = c.tryAcquire(released).orElseThrow();
        assertThat(keepsInterrupt("release()", () -> {
                    Thread.currentThread().interrupt();
                    return lease.release();
                }))
                .as("release() on an interrupted thread")
                .isTrue();
        assertFreeOnBackend(observer, released, "release()");

        String closed = freshName();
        Lease closing = c.tryAcquire(closed).orElseThrow();
        keepsInterrupt("close()", () -> {
            Thread.currentThread().interrupt();
            closing.close();
            return null;
        });
        assertFreeOnBackend(observer, closed, "close()");

        String ran = freshName();
        assertThat(keepsInterrupt(
                        "runExclusively",
                        () -> c.runExclusively(ran, TckSettings.hangBound(), l -> {
                            Thread.currentThread()
                                    .interrupt(); // a task that restores an interrupt it caught, as well-behaved code
                            // does
                            return "done";
                        })))
                .as("runExclusively's result")
                .contains("done");
        assertFreeOnBackend(observer, ran, "runExclusively");

        String shutDown = freshName();
        LockClient closingClient = client(options(Duration.ofSeconds(30), true));
        closingClient.tryAcquire(shutDown).orElseThrow();
        keepsInterrupt("LockClient.close()", () -> {
            Thread.currentThread().interrupt();
            closingClient.close();
            return null;
        });
        assertFreeOnBackend(observer, shutDown, "LockClient.close()");
    }

    /**
     * Interrupting a waiting acquire just as the holder releases leaves no grant behind: many races,
     * each interrupting the waiter as its attempt on the freed lock starts (half of them) or a
     * moment later, up to about two round trips (the other half). Once every caller released what it
     * got, none of the run's locks is held on the backend, well before their 30 s TTL could free a
     * grant that nobody knows of.
     */
    @Test
    void interruptedAcquireLeavesNoGrantBehind() throws Exception {
        Duration ttl = Duration.ofSeconds(30);
        String base = freshName() + "-";
        LockClient holders = client(options(ttl, true));
        InstrumentedBackend waiterBackend = new InstrumentedBackend(fixture.openBackend());
        LockClient waiters = client(waiterBackend, options(ttl, true));
        int races = TckSettings.interruptRaces();
        int granted = 0;
        int interrupted = 0;
        int failed = 0;
        for (int i = 0; i < races; i++) {
            String name = base + i;
            long sent = System.nanoTime();
            Lease holder = holders.tryAcquire(name).orElseThrow();
            long roundTrip = System.nanoTime() - sent;
            int refusedBefore = waiterBackend.refusedAcquires();
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            outcome.set(waiters.acquire(name, TckSettings.hangBound())
                                    .orElse(null));
                        } catch (Throwable e) {
                            outcome.set(e);
                        }
                    },
                    "tck-interrupted-waiter-" + i);
            waiter.start();
            // the waiter's first attempt must have found the lock held: one counted as it entered may still be on its
            // way to the server and be granted after the release, leaving the interrupt for no attempt at all
            spinUntil(
                    "the waiter to find the lock held",
                    () -> waiterBackend.refusedAcquires() > refusedBefore || !waiter.isAlive());
            boolean atStart = i % 2 == 0;
            waiterBackend.interruptNextAcquire(atStart);
            assertThat(holder.release()).as("the holder's release").isTrue();
            if (!atStart) {
                int afterRelease = waiterBackend.acquireCalls();
                spinUntil(
                        "the waiter's attempt after the release",
                        () -> waiterBackend.acquireCalls() > afterRelease || !waiter.isAlive());
                LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(2 * roundTrip + 1));
                waiter.interrupt();
            }
            waiter.join(TckSettings.hangBound().toMillis());
            assertThat(waiter.isAlive())
                    .as("waiter still running after its interrupt")
                    .isFalse();
            waiterBackend.interruptNextAcquire(false); // unused when the waiter ended without another attempt
            Object got = outcome.get();
            if (got instanceof Lease lease) {
                granted++;
                lease.release();
            } else if (got instanceof InterruptedException) {
                interrupted++;
            } else if (got instanceof LockBackendException) {
                failed++;
            } else {
                throw new AssertionError(
                        "race " + i + ": the interrupted acquire ended with " + got,
                        got instanceof Throwable t ? t : null);
            }
        }
        System.out.println("[fencelock-tck] interrupted acquires: " + races + " races, " + granted + " granted, "
                + interrupted + " interrupted, " + failed + " failed");
        // Background sweeps may take a few round trips; a grant left to its TTL takes 30 s.
        Duration promptly = ttl.dividedBy(3);
        long end = System.nanoTime() + promptly.toNanos();
        List<LockInfo> left = holders.list(base);
        while (!left.isEmpty() && System.nanoTime() - end < 0) {
            Thread.sleep(20); // polling the backend for the sweeps' effect
            left = holders.list(base);
        }
        assertThat(left)
                .as(left.size() + " locks still held " + promptly.toSeconds() + " s after " + races
                        + " interrupted acquires whose callers released what they got")
                .isEmpty();
    }

    /** Runs {@code call}, which interrupts this thread; the interrupt must still be set after it (then cleared). */
    private static <T> T keepsInterrupt(String what, java.util.concurrent.Callable<T> call) throws Exception {
        boolean kept;
        T result;
        try {
            result = call.call();
        } finally {
            kept = Thread.interrupted();
        }
        assertThat(kept).as("interrupt still set for the caller after " + what).isTrue();
        return result;
    }

    private static void assertFreeOnBackend(LockClient observer, String name, String after) {
        assertThat(observer.inspect(name).map(LockInfo::held).orElse(false))
                .as("lock held on the backend right after " + after + " on an interrupted thread")
                .isFalse();
    }

    /** Waits, in short parks rather than sleeps, for a moment the next step must follow closely. */
    private static void spinUntil(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + TckSettings.hangBound().toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out after " + TckSettings.hangBound() + " waiting for " + what);
            }
            LockSupport.parkNanos(10_000);
        }
    }

    @Test
    void renewAfterExpiryIsRejected() throws Exception {
        String name = freshName();
        LockBackend raw = fixture.openBackend();
        LockClient a = client(raw, options(Duration.ofMillis(300), false));
        // straight through the backend, so that nothing releases the expired lease for us
        String expiredId = grantOfAFreeName(raw, name, Duration.ofMillis(300));
        awaitCondition(
                "the backend to see the lease expire",
                () -> !a.inspect(name).map(LockInfo::held).orElse(false));
        assertThat(raw.renew(List.of(new RenewRequest(name, expiredId, Duration.ofSeconds(10), null)))
                        .get(0)
                        .renewed())
                .as("renewal of a lease expired on the backend, even with nobody else holding it")
                .isFalse();
        assertThat(a.inspect(name).map(LockInfo::held).orElse(false))
                .as("held after renewing an expired lease")
                .isFalse();
        // through the engine: a lease past its deadline is lost and renew() says so
        Lease lease = grantOfAFreeName(a, name);
        lease.lost().toCompletableFuture().get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(lease.renew()).as("renew() of a lost lease").isFalse();
        assertThat(lease.isValid()).isFalse();
        // and after another lease took over
        Lease successor = client(options(Duration.ofSeconds(20), true))
                .acquire(name, TckSettings.hangBound())
                .orElseThrow();
        assertThat(raw.renew(List.of(
                        new RenewRequest(name, lease.leaseId(), Duration.ofSeconds(10), null),
                        new RenewRequest(name, expiredId, Duration.ofSeconds(10), null))))
                .as("renewals of leases whose lock another lease holds")
                .noneMatch(r -> r.renewed());
        assertThat(a.inspect(name).orElseThrow().leaseId()).isEqualTo(successor.leaseId());
        assertHistories("renewAfterExpiryIsRejected", HistoryChecker::renewAfterExpiryIsRejected);
    }

    @Test
    void renewExtendsExclusivity() throws Exception {
        String name = freshName();
        // A TTL with room for stalls: the watchdog renews at a third of it, so a renewal may be late by two
        // thirds before the lease is lost, as it should be then. At 900 ms a holder on the ZooKeeper ensemble
        // lost its lease once in a CI run, most likely to such a stall (its members and a parallel fork's
        // restarting servers share two cores); this property is about renewal, not about how long a stall may be.
        Duration ttl = Duration.ofMillis(1500);
        LockClient holderClient = client(options(ttl, true));
        LockClient rival = client(options(ttl, false));
        Lease holder = grantOfAFreeName(holderClient, name);
        long start = System.nanoTime();
        int attempts = 0;
        while (System.nanoTime() - start < ttl.multipliedBy(2).toNanos()) {
            assertThat(rival.tryAcquire(name))
                    .as("a rival's attempt while the holder renews")
                    .isEmpty();
            assertThat(holder.isValid()).as("the renewed holder's validity").isTrue();
            attempts++;
            Thread.sleep(20); // pacing the rival's attempts
        }
        assertThat(attempts).isGreaterThan(10);
        // manual renewal extends a lease without a watchdog just as well
        String other = freshName();
        Lease manual = grantOfAFreeName(rival, other);
        for (int i = 0; i < 6; i++) {
            Thread.sleep(ttl.toMillis() / 4); // renewing by hand, at a quarter of the TTL
            assertThat(manual.renew()).as("manual renewal %d", i).isTrue();
        }
        assertThat(manual.isValid()).isTrue();
        assertThat(holderClient.tryAcquire(other)).isEmpty();
        LeaseState before = holder.state();
        LeaseLoss loss = holder.lost().toCompletableFuture().getNow(null);
        assertThat(holder.release())
                .as("the release of the watchdog-renewed holder (its state before: %s, loss: %s)", before, loss)
                .isTrue();
        assertThat(manual.release()).isTrue();
    }

    @Test
    void acquirableAfterHolderCrash() throws Exception {
        String name = freshName();
        Duration ttl = Duration.ofMillis(500);
        LockClient crashed = client(options(ttl, false));
        LockClient successor = client(options(Duration.ofSeconds(20), true));
        Grant crashedGrant = grantAndWhenAsked(crashed, name);
        Lease lost = crashedGrant.lease();
        long sent = crashedGrant.askedNanos();
        // the holder "crashes": it never renews or releases
        AtomicReference<Boolean> crashedStillValid = new AtomicReference<>();
        Lease next = successor
                .acquire(name, TckSettings.hangBound())
                .orElseThrow(() -> new AssertionError("never taken over"));
        crashedStillValid.set(lost.isValid());
        long tookOverAfter = System.nanoTime() - sent;
        assertThat(crashedStillValid.get())
                .as("the crashed holder's lease was still locally valid at takeover")
                .isFalse();
        assertThat(Duration.ofNanos(tookOverAfter))
                .as("takeover not earlier than the TTL")
                .isGreaterThanOrEqualTo(LockOptions.defaults().validityWindow(ttl));
        Duration bound = ttl.plus(successor.options().maxPollInterval()).plusSeconds(2);
        assertThat(Duration.ofNanos(tookOverAfter))
                .as("takeover not much later than the TTL (+ one poll)")
                .isLessThan(bound);
        assertThat(next.fencingToken()).isGreaterThan(lost.fencingToken());
        next.release();
    }

    @Test
    void releaseFreesPromptly() throws Exception {
        String name = freshName();
        Duration ttl = Duration.ofSeconds(20);
        LockClient holderClient = client(options(ttl, true));
        InstrumentedBackend waiterBackend = new InstrumentedBackend(fixture.openBackend());
        LockClient waiterClient = client(waiterBackend, options(ttl, true));
        Lease holder = holderClient.tryAcquire(name).orElseThrow();
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return waiterClient.acquire(name, TckSettings.hangBound()).orElse(null);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        awaitWaitingForTheRelease(waiterBackend);
        assertThat(waiter).isNotDone();
        long released = System.nanoTime();
        assertThat(holder.release()).isTrue();
        Lease next = waiter.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
        Duration handOff = Duration.ofNanos(System.nanoTime() - released);
        assertThat(next).as("the waiter's lease").isNotNull();
        assertThat(handOff)
                .as("hand-off after release, with TTL " + ttl)
                .isLessThan(waiterClient.options().maxPollInterval().plusSeconds(2));
        System.out.println("[fencelock-tck] hand-off after release: " + handOff.toNanos() / 1000 + " us"
                + (capabilities.contains(Capability.WAKE_ON_RELEASE) ? " (wake-up signal)" : " (polling)"));
        next.release();
    }

    /**
     * A wake-up is not lost with a waiter that stopped waiting: where a backend signals one waiting client
     * at a time, a client that was refused and then gave up (its wait ran out) must not keep the release's
     * signal from the client that still waits. That client polls once a minute here, so only the signal can
     * bring it the lock within the bound.
     */
    @Test
    void releaseWakesTheNextWaiterWhenOneLeft() throws Exception {
        requireClaim(Capability.WAKE_ON_RELEASE);
        String name = freshName();
        // longer than the bound: the waiter's pause is never cut short by the holder's expiry
        Duration ttl = Duration.ofSeconds(45);
        LockClient holderClient = client(options(ttl, true));
        Lease holder = holderClient.tryAcquire(name).orElseThrow();
        InstrumentedBackend leaverBackend = new InstrumentedBackend(fixture.openBackend());
        LockClient leaverClient = client(leaverBackend, options(ttl, true));
        assertThat(leaverClient.acquire(name, Duration.ofMillis(200)))
                .as("a wait for a held lock")
                .isEmpty();
        assertThat(leaverBackend.refusedAcquires())
                .as("the leaver's refused attempts")
                .isPositive();
        try (OncePerMinuteWaiter waiter = oncePerMinuteWaiter(name, ttl)) {
            long released = System.nanoTime();
            assertThat(holder.release()).isTrue();
            Lease next = waiter.lease("a waiter that polls every minute did not hold the lock within "
                    + TckSettings.hangBound() + " of its release, after an earlier waiter left: the wake-up was lost");
            assertThat(next).as("the waiter's lease").isNotNull();
            System.out.println("[fencelock-tck] wake-up past a waiter that left: "
                    + (System.nanoTime() - released) / 1000 + " us");
            next.release();
        }
    }

    /**
     * A waiter in a client of its own that polls once a minute (its first pause is half to all of that), so
     * that within {@link TckSettings#hangBound()} only a release's signal or grant can bring it the lock; refused at least
     * once when this returns, and queued by a refusal where the backend grants on release.
     */
    private OncePerMinuteWaiter oncePerMinuteWaiter(String name, Duration ttl) throws Exception {
        Duration poll = Duration.ofMinutes(1);
        InstrumentedBackend backend = new InstrumentedBackend(fixture.openBackend());
        LockClient waiting = client(
                backend,
                LockOptions.builder()
                        .ttl(ttl)
                        .autoRenew(true)
                        .initialPollInterval(poll)
                        .maxPollInterval(poll)
                        .build());
        ExecutorService thread = Executors.newSingleThreadExecutor();
        Future<Lease> lease =
                thread.submit(() -> waiting.acquire(name, poll.multipliedBy(2)).orElse(null));
        try {
            awaitWaitingForTheRelease(backend);
        } catch (Exception | AssertionError e) {
            thread.shutdownNow();
            throw e;
        }
        return new OncePerMinuteWaiter(thread, lease);
    }

    /**
     * Waits until the client behind {@code backend} waits for the holder's release the way the backend promises
     * to end that wait, so that a release sent next tests that promise and not a retry. The engine's first
     * attempt of an acquire is sent before it watches the name; its next attempt is sent while it watches.
     * Where a release grants ({@code GRANT_ON_RELEASE}) that attempt's refusal queues the client; where a
     * release wakes ({@code WAKE_ON_RELEASE}) it is the second refusal; elsewhere the client polls, and one
     * refusal is enough.
     */
    private void awaitWaitingForTheRelease(InstrumentedBackend backend) throws InterruptedException {
        if (capabilities.contains(Capability.GRANT_ON_RELEASE)) {
            awaitCondition("the waiter to be queued by a refusal", () -> backend.queuedRefusals() >= 1);
        } else if (capabilities.contains(Capability.WAKE_ON_RELEASE)) {
            awaitCondition("the waiter to be refused while it watches", () -> backend.refusedAcquires() >= 2);
        } else {
            awaitCondition("the waiter to find the lock held", () -> backend.refusedAcquires() >= 1);
        }
    }

    private record OncePerMinuteWaiter(ExecutorService thread, Future<Lease> acquire) implements AutoCloseable {
        /** Its lease, once it holds within the bound; else an AssertionError saying {@code lost}. */
        Lease lease(String lost) throws Exception {
            try {
                return acquire.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(lost);
            }
        }

        @Override
        public void close() {
            thread.shutdownNow();
        }
    }

    /**
     * A release grants the first queued waiting client in the same step ({@code GRANT_ON_RELEASE}): the name is
     * never free between the release and that client's grant, so a client that asks right after the release
     * is refused. The waiting client polls once a minute here, so only the grant, told by its feed, can bring it
     * the lock within the bound; its token is above the releaser's and the backend shows its lease.
     */
    @Test
    void releaseGrantsTheQueuedWaiter() throws Exception {
        requireClaim(Capability.GRANT_ON_RELEASE);
        String name = freshName();
        Duration ttl = Duration.ofSeconds(45); // longer than the bound, as in releaseWakesTheNextWaiterWhenOneLeft
        LockClient holderClient = client(options(ttl, true));
        Lease holder = holderClient.tryAcquire(name).orElseThrow();
        LockClient rival = client(options(ttl, true));
        try (OncePerMinuteWaiter waiter = oncePerMinuteWaiter(name, ttl)) {
            long released = System.nanoTime();
            assertThat(holder.release()).isTrue();
            assertThat(rival.tryAcquire(name))
                    .as("an attempt right after the release (the release grants the queued waiter in the same step)")
                    .isEmpty();
            Lease next = waiter.lease("a queued waiter that polls every minute did not hold the lock within "
                    + TckSettings.hangBound() + " of the release that granted it: the grant was not told");
            long heldAfter = System.nanoTime() - released;
            assertThat(next).as("the waiter's lease").isNotNull();
            assertThat(next.fencingToken())
                    .as("the queued waiter's token against the releaser's")
                    .isGreaterThan(holder.fencingToken());
            assertThat(next.isValid()).as("the queued waiter's lease is valid").isTrue();
            assertThat(rival.inspect(name).map(LockInfo::leaseId))
                    .as("the holder the backend shows")
                    .contains(next.leaseId());
            System.out.println("[fencelock-tck] queued waiter granted by the release: " + heldAfter / 1000 + " us");
            assertThat(next.release())
                    .as("the release of a lease a release granted")
                    .isTrue();
            assertThat(rival.tryAcquire(name))
                    .as("the lock after the queued waiter's release")
                    .isPresent();
        }
    }

    /**
     * A waiter that gave up leaves nothing behind that keeps the name: once its {@code acquire} has returned
     * empty, the holder's release leaves the name free for the next caller at once, its own client or
     * another (a backend that queues waiting clients, or grants the first of them in the release, must have
     * taken the one that left out by then).
     */
    @Test
    void aReleaseAfterAWaiterGaveUpLeavesTheNameFree() throws Exception {
        String name = freshName();
        Duration ttl = Duration.ofSeconds(45);
        LockClient holderClient = client(options(ttl, true));
        LockClient waiterClient = client(options(ttl, true));
        LockClient other = client(options(ttl, true));
        for (LockClient next : List.of(waiterClient, other)) {
            Lease holder = holderClient.tryAcquire(name).orElseThrow();
            assertThat(waiterClient.acquire(name, Duration.ofMillis(200)))
                    .as("a wait for a held lock")
                    .isEmpty();
            assertThat(holder.release()).isTrue();
            Optional<Lease> taken = next.tryAcquire(name);
            assertThat(taken)
                    .as(
                            "a tryAcquire by the %s right after the release",
                            next == other ? "another client" : "waiter's client")
                    .isPresent();
            assertThat(taken.get().release()).isTrue();
        }
    }

    @Test
    void tryAcquireHonoursTimeout() throws Exception {
        String name = freshName();
        LockClient holderClient = client(options(Duration.ofSeconds(20), true));
        LockClient waiterClient = client(options(Duration.ofSeconds(20), true));
        Lease holder = holderClient.tryAcquire(name).orElseThrow();
        assertThat(waiterClient.tryAcquire(name)).isEmpty();
        assertThat(waiterClient.acquire(name, Duration.ZERO)).isEmpty();
        Duration wait = Duration.ofMillis(300);
        long start = System.nanoTime();
        Optional<Lease> none = waiterClient.acquire(name, wait);
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        assertThat(none).as("acquire while held").isEmpty();
        assertThat(waited)
                .as("time waited for a held lock")
                .isGreaterThanOrEqualTo(wait)
                .isLessThan(wait.plus(TckSettings.hangBound()));
        // waiting is interruptible
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                waiterClient.acquire(name, Duration.ofMinutes(5));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        t.start();
        started.await();
        t.interrupt();
        t.join(TckSettings.hangBound().toMillis());
        assertThat(t.isAlive()).as("waiter still waiting after interrupt").isFalse();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
        assertThat(holder.isValid()).isTrue();
        holder.release();
    }

    /**
     * A wait bound is a promise: {@code acquire(name, wait)} returns within the wait plus about one
     * round trip however many callers wait, and a backend that is merely busy (a full connection
     * pool, a crowd of waiters) is never a failure the caller sees while its wait lasts.
     */
    @Test
    void acquireHonoursItsWaitUnderLoad() throws Exception {
        int threadsPerClient = 200;
        int nameCount = 8;
        Duration wait = Duration.ofMillis(400);
        Duration runFor = Duration.ofSeconds(3);
        List<LockClient> crowd =
                List.of(client(options(Duration.ofSeconds(10), true)), client(options(Duration.ofSeconds(10), true)));
        List<String> names = new ArrayList<>();
        for (int i = 0; i < nameCount; i++) {
            names.add(freshName());
        }
        int threads = threadsPerClient * crowd.size();
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        CountDownLatch start = new CountDownLatch(1);
        // the run's end is set when the load starts: opening the clients' sessions before it may take
        // longer than the whole run on a busy ensemble, and must not leave the workers no time at all
        AtomicLong end = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong longest = new AtomicLong();
        AtomicLong calls = new AtomicLong();
        AtomicLongArray grants = new AtomicLongArray(nameCount);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            LockClient c = crowd.get(t % crowd.size());
            int n = (t / crowd.size()) % nameCount;
            workers.add(pool.submit(() -> {
                start.await();
                while (System.nanoTime() - end.get() < 0 && failure.get() == null) {
                    long t0 = System.nanoTime();
                    Optional<Lease> lease;
                    try {
                        lease = c.acquire(names.get(n), wait);
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                        break;
                    }
                    long took = System.nanoTime() - t0;
                    longest.accumulateAndGet(took, Math::max);
                    calls.incrementAndGet();
                    if (lease.isPresent()) {
                        grants.incrementAndGet(n);
                        // the holder works for up to the others' whole wait, so that waits also run out
                        Thread.sleep(
                                java.util.concurrent.ThreadLocalRandom.current().nextLong(wait.toMillis() + 1));
                        lease.get().release();
                    }
                }
                return null;
            }));
        }
        // One round trip under this very load: a probe client takes and lets go a name nobody else wants.
        LockClient probe = client(options(Duration.ofSeconds(10), true));
        String probeName = freshName();
        AtomicLong roundTrip = new AtomicLong();
        AtomicLong wakeUpDelay = new AtomicLong();
        for (LockClient c : List.of(crowd.get(0), crowd.get(1), probe)) {
            c.tryAcquire(probeName).orElseThrow().release(); // connections and sessions opened before the clock runs
        }
        Future<?> prober = pool.submit(() -> {
            start.await();
            while (System.nanoTime() - end.get() < 0) {
                long t0 = System.nanoTime();
                Lease own = probe.tryAcquire(probeName)
                        .orElseThrow(() -> new AssertionError("a name nobody else wants was held"));
                roundTrip.accumulateAndGet(System.nanoTime() - t0, Math::max);
                own.release();
                long asleep = System.nanoTime();
                Thread.sleep(20); // pacing the probe: it measures, it is not part of the load
                // how late a sleeping thread gets the CPU back: what a waiter whose wait ran out also meets
                wakeUpDelay.accumulateAndGet(System.nanoTime() - asleep - 20_000_000L, Math::max);
            }
            return null;
        });
        end.set(System.nanoTime() + runFor.toNanos());
        start.countDown();
        for (Future<?> w : workers) {
            w.get(runFor.plus(TckSettings.hangBound()).toMillis(), TimeUnit.MILLISECONDS);
        }
        prober.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
        pool.shutdown();
        // the attempt in flight when the wait runs out, and the thread's way back to the caller on a busy
        // machine: the slowest wake-up the probe met under this load, and a fixed margin
        Duration allowance =
                Duration.ofNanos(2 * roundTrip.get() + wakeUpDelay.get()).plusMillis(250);
        System.out.println("[fencelock-tck] acquire under load: " + threads + " waiters on " + nameCount + " names, "
                + calls.get() + " calls, grants per name " + grants + ", longest call " + longest.get() / 1_000_000
                + " ms for a wait of " + wait.toMillis() + " ms (slowest uncontended round trip under the load "
                + roundTrip.get() / 1_000_000 + " ms, slowest wake-up of a sleeping thread "
                + wakeUpDelay.get() / 1_000_000 + " ms late)");
        assertThat(calls.get()).as("acquire calls completed under load").isPositive();
        assertThat(failure.get()).as("a call that failed while its wait lasted").isNull();
        for (int i = 0; i < nameCount; i++) {
            assertThat(grants.get(i)).as("grants of name %d under load", i).isPositive();
        }
        assertThat(Duration.ofNanos(longest.get()))
                .as("the longest acquire(name, " + wait + ") among " + calls.get() + " calls")
                .isLessThanOrEqualTo(wait.plus(allowance));
    }

    @Test
    void locksAreIndependent() {
        LockClient a = client(options(Duration.ofSeconds(20), true));
        LockClient b = client(options(Duration.ofSeconds(20), true));
        String x = freshName();
        String y = freshName();
        Lease ax = a.tryAcquire(x).orElseThrow();
        Lease by = b.tryAcquire(y).orElseThrow(() -> new AssertionError("holding one name blocked another"));
        assertThat(ax.release()).isTrue();
        assertThat(b.inspect(y).orElseThrow().leaseId())
                .as("releasing one name touched another")
                .isEqualTo(by.leaseId());
        assertThat(a.tryAcquire(y)).isEmpty();
        List<Lease> many = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            many.add((i % 2 == 0 ? a : b).tryAcquire(freshName()).orElseThrow());
        }
        assertThat(a.held().size() + b.held().size()).isEqualTo(21);
        assertThat(a.list(runPrefix).size()).isGreaterThanOrEqualTo(21);
        many.forEach(Lease::release);
        by.release();
        assertThat(a.held()).isEmpty();
    }

    /**
     * An acquisition's owner, type and data are stored with the grant, kept by renewals, shown by
     * inspect and list with the grant's server time, and cleared by the release: the next holder
     * never shows the last one's.
     */
    @Test
    void metadataRoundTrips() {
        requireClaim(Capability.METADATA);
        LockClient a = client(options(Duration.ofSeconds(20), false));
        LockClient b = client(options(Duration.ofSeconds(20), false));
        String name = freshName();
        Map<String, String> data = new java.util.TreeMap<>(
                Map.of("run", "42", "note", "caf\u00e9 \"quoted\" {json}, 'single' \\ back", "empty", ""));
        Lease lease = a.lock(name).type("job").data(data).tryAcquire().orElseThrow();
        String owner = lease.metadata().owner();
        assertThat(owner)
                .as("the default owner: host name, process id and client id")
                .contains("/" + ProcessHandle.current().pid() + "/")
                .endsWith(a.clientId());

        LockInfo seen = b.inspect(name).orElseThrow();
        assertThat(seen.held()).isTrue();
        assertThat(seen.leaseId()).isEqualTo(lease.leaseId());
        assertThat(seen.token()).isEqualTo(lease.fencingToken());
        assertThat(seen.owner()).as("owner").contains(owner);
        assertThat(seen.type()).as("type").contains("job");
        assertThat(seen.data()).as("data").isEqualTo(data);
        Instant heldSince = seen.heldSince();
        assertThat(heldSince).as("held since (the grant's server time)").isNotNull();
        assertThat(heldSince)
                .as("held since, against the server time of the answer")
                .isBetween(seen.serverTime().minusSeconds(20), seen.serverTime().plusSeconds(1));
        assertThat(seen.expiresAt()).as("expiry after the grant").isAfter(heldSince);

        List<LockInfo> listed =
                b.list(runPrefix).stream().filter(i -> i.name().equals(name)).toList();
        assertThat(listed).as("list shows the lock").hasSize(1);
        assertThat(listed.get(0).metadata()).as("list shows its metadata").isEqualTo(seen.metadata());
        assertThat(b.list(runPrefix, LockInfo.ofType("job")))
                .extracting(LockInfo::name)
                .contains(name);
        assertThat(b.list(runPrefix, LockInfo.ofType("other")))
                .extracting(LockInfo::name)
                .doesNotContain(name);
        assertThat(b.list(runPrefix, LockInfo.ownedBy(owner)))
                .extracting(LockInfo::name)
                .contains(name);

        assertThat(lease.renew()).isTrue();
        LockInfo renewed = b.inspect(name).orElseThrow();
        assertThat(renewed.metadata()).as("metadata after a renewal").isEqualTo(seen.metadata());
        assertThat(renewed.heldSince()).as("held since, after a renewal").isEqualTo(heldSince);

        // a named owner and no type or data
        String other = freshName();
        Lease named =
                a.lock(other).owner("ops team: batch-7 (nightly)").tryAcquire().orElseThrow();
        LockInfo namedSeen = b.inspect(other).orElseThrow();
        assertThat(namedSeen.owner()).contains("ops team: batch-7 (nightly)");
        assertThat(namedSeen.type()).as("no type given").isEmpty();
        assertThat(namedSeen.data()).as("no data given").isEmpty();
        named.release();

        assertThat(lease.release()).isTrue();
        // a backend may keep no record of a free lock (etcd deletes the key): then there is nothing to show
        b.inspect(name).ifPresent(free -> {
            assertThat(free.held()).isFalse();
            assertThat(free.owner()).as("owner of a free lock").isEmpty();
            assertThat(free.metadata().type()).as("type of a free lock").isNull();
            assertThat(free.metadata().data()).as("data of a free lock").isEmpty();
            assertThat(free.heldSince()).as("held since, of a free lock").isNull();
        });

        Lease next = b.lock(name).tryAcquire().orElseThrow();
        LockInfo nextSeen = a.inspect(name).orElseThrow();
        assertThat(nextSeen.owner())
                .as("the next holder's owner")
                .contains(next.metadata().owner());
        assertThat(nextSeen.type())
                .as("the next holder shows no type of the last one")
                .isEmpty();
        assertThat(nextSeen.data())
                .as("the next holder shows no data of the last one")
                .isEmpty();
        assertThat(nextSeen.heldSince()).as("the next grant's time").isAfterOrEqualTo(heldSince);
        next.release();
    }

    /**
     * An operator's forced release ends the holder's grant: the next grant (by a third client) gets
     * a higher token, the forced-out holder's renewal is refused so it learns of the loss, even though
     * a new grant of the same name exists by then, and its late write is turned away by the token.
     */
    @Test
    void forcedOutHolderLearnsLossAndIsFenced() throws Exception {
        InstrumentedBackend holderBackend = new InstrumentedBackend(fixture.openBackend());
        LockClient holder = client(holderBackend, options(Duration.ofSeconds(20), false));
        LockClient operator = client(options(Duration.ofSeconds(20), false));
        LockClient next = client(options(Duration.ofSeconds(20), false));
        FencedResource resource = new FencedResource();
        String name = freshName();
        Lease forcedOut = holder.tryAcquire(name).orElseThrow();
        assertThat(resource.write(forcedOut.fencingToken())).isTrue();

        LockInfo ended = operator.forceRelease(name).orElseThrow(() -> new AssertionError("nothing was released"));
        assertThat(ended.leaseId()).isEqualTo(forcedOut.leaseId());
        assertThat(ended.token()).isEqualTo(forcedOut.fencingToken());
        Lease successor = next.acquire(name, Duration.ofSeconds(10)).orElseThrow();
        assertThat(successor.fencingToken()).isGreaterThan(forcedOut.fencingToken());
        assertThat(resource.write(successor.fencingToken())).isTrue();

        // the forced-out holder's release (as its engine would send it) leaves the successor's grant alone
        assertThat(holderBackend.release(name, forcedOut.leaseId()))
                .as("the forced-out holder's release, with another grant of the name in place")
                .isFalse();
        assertThat(next.inspect(name).map(LockInfo::leaseId))
                .as("the successor's grant after the old holder's release")
                .contains(successor.leaseId());
        assertThat(forcedOut.renew())
                .as("the forced-out holder's renewal, with another grant of the name in place")
                .isFalse();
        LeaseLoss loss = forcedOut.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.REJECTED);
        assertThat(resource.write(forcedOut.fencingToken()))
                .as("the forced-out holder's late write")
                .isFalse();
        assertThat(next.inspect(name).orElseThrow().leaseId())
                .as("the successor still holds after the old holder's refused renewal")
                .isEqualTo(successor.leaseId());
        assertThat(operator.forceRelease(freshName()))
                .as("a free lock: nothing to end")
                .isEmpty();
        successor.release();
    }

    /**
     * {@code renew(ttl)} to a shorter TTL shortens the lease: the local deadline follows at once, and
     * the backend frees the lock when the new TTL ends (not the old one); until then nobody else
     * gets it.
     */
    @Test
    void shortenedLeaseIsFreeWhenItsNewTtlEnds() throws Exception {
        InstrumentedBackend holder = new InstrumentedBackend(fixture.openBackend());
        LockClient a = client(holder, options(Duration.ofSeconds(60), false));
        LockClient b = client(options(Duration.ofSeconds(60), false));
        String name = freshName();
        Lease lease = a.tryAcquire(name).orElseThrow();
        Duration shorter = Duration.ofMillis(1500);
        long sent = System.nanoTime();
        assertThat(lease.renew(shorter)).isTrue();
        // the holder reaches the backend no more (as if it crashed): its client cannot release the
        // lease it lets go, so only the backend's own expiry, at the new TTL, can free the lock
        holder.cutReleases(true);
        assertThat(lease.ttl()).isEqualTo(shorter);
        assertThat(lease.remainingValidity()).as("validity after shortening").isLessThanOrEqualTo(shorter);
        Optional<Lease> early = Optional.empty();
        while (lease.isValid() && early.isEmpty()) {
            early = b.tryAcquire(name);
            // a grant to another client is applied before its answer arrives: the shortened lease must
            // be past its local deadline by then (the grant may come a moment after isValid() was asked)
            assertThat(early.isEmpty() || !lease.isValid())
                    .as("another client got the lock while the shortened lease was still valid")
                    .isTrue();
            Thread.sleep(50);
        }
        // no longer than the bound asserted below: a lease held to its old TTL fails in seconds, not 30
        Optional<Lease> next = early.isPresent() ? early : b.acquire(name, shorter.plusSeconds(5));
        Duration took = Duration.ofNanos(System.nanoTime() - sent);
        assertThat(next).as("the lock after the shortened TTL").isPresent();
        assertThat(took)
                .as("from the shortening to the next grant (the old TTL was 60 s)")
                .isLessThan(shorter.plusSeconds(5));
        assertThat(next.get().fencingToken()).isGreaterThan(lease.fencingToken());
        next.get().release();
    }

    /** {@code renew(ttl)} to a longer TTL extends exclusivity past the old TTL; the watchdog then uses the new one. */
    @Test
    void longerRenewalExtendsExclusivity() throws Exception {
        LockClient a = client(options(Duration.ofSeconds(1), false));
        LockClient b = client(options(Duration.ofSeconds(1), false));
        String name = freshName();
        Lease lease = grantOfAFreeName(a, name);
        long granted = System.nanoTime();
        if (!capabilities.contains(Capability.EXTENDABLE_TTL)) {
            // not claimed: the engine refuses a longer TTL before any request, and the lease goes on as it was
            assertThatThrownBy(() -> lease.renew(Duration.ofSeconds(5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("EXTENDABLE_TTL");
            assertThat(lease.isValid())
                    .as("the lease after a refused longer renewal")
                    .isTrue();
            assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(1));
            assertThat(lease.release()).isTrue();
            requireClaim(Capability.EXTENDABLE_TTL);
        }
        assertThat(lease.renew(Duration.ofSeconds(5))).isTrue();
        assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(5));
        while (System.nanoTime() - granted < Duration.ofMillis(2500).toNanos()) {
            assertThat(lease.isValid())
                    .as("the extended lease, 2.5 s after a 1 s grant")
                    .isTrue();
            assertThat(b.tryAcquire(name))
                    .as("another client while the extended lease holds")
                    .isEmpty();
            Thread.sleep(100);
        }
        assertThat(lease.release()).isTrue();
        b.tryAcquire(name).orElseThrow().release();
    }

    /** {@code releaseAfter(d)} keeps the lock held on the backend for d, with no thread and no renewal, and then frees it. */
    @Test
    void releaseAfterHoldsUntilItsDelayEnds() throws Exception {
        LockClient a = client(options(Duration.ofSeconds(60), true));
        LockClient b = client(options(Duration.ofSeconds(60), true));
        String name = freshName();
        Lease lease = a.tryAcquire(name).orElseThrow();
        Duration delay = Duration.ofMillis(1500);
        long sent = System.nanoTime();
        assertThat(lease.releaseAfter(delay)).isTrue();
        assertThat(lease.state()).isEqualTo(io.fencelock.LeaseState.RELEASED);
        assertThat(a.held()).as("the client no longer holds it").isEmpty();
        Optional<Lease> rival = b.tryAcquire(name);
        long answered = System.nanoTime();
        // held until the delay ends: an attempt answered within the delay's validity window is refused. The
        // releaseAfter's renewal can itself outlast the delay (on a busy disk one fsync took longer), and an
        // attempt after the delay may be granted
        if (answered - sent < LockOptions.defaults().validityWindow(delay).toNanos()) {
            assertThat(rival)
                    .as("another client right after releaseAfter, answered "
                            + TimeUnit.NANOSECONDS.toMillis(answered - sent) + " ms after it was called")
                    .isEmpty();
        }
        Optional<Lease> next = rival.isPresent() ? rival : b.acquire(name, Duration.ofSeconds(30));
        Duration took = Duration.ofNanos((rival.isPresent() ? answered : System.nanoTime()) - sent);
        assertThat(next).isPresent();
        assertThat(took)
                .as("from releaseAfter(" + delay + ") to the next grant")
                .isGreaterThanOrEqualTo(delay.multipliedBy(9).dividedBy(10))
                .isLessThan(delay.plusSeconds(5));
        next.get().release();
    }

    @Test
    void badInputIsRejectedCleanly() throws Exception {
        InstrumentedBackend raw = new InstrumentedBackend(fixture.openBackend());
        LockClient c = client(raw, options(Duration.ofSeconds(5), true));
        String prefix = runPrefix + "-bad";
        List<LockInfo> before = c.list(runPrefix);
        int callsBefore = raw.totalCalls();
        List<String> badNames =
                List.of("", "x".repeat(256), "has space", "quote'", "semi;colon", "{tag}", "tab\t", "é");
        for (String bad : badNames) {
            assertThatThrownBy(() -> c.tryAcquire(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lock name")
                    .hasMessageContaining("characters");
            assertThatThrownBy(() -> c.acquire(bad, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> c.inspect(bad)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> c.tryAcquire(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> c.list("50%"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("50%");
        assertThatThrownBy(() -> c.tryAcquire(prefix, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl PT0S")
                .hasMessageContaining("positive");
        assertThatThrownBy(() -> c.tryAcquire(prefix, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> c.tryAcquire(prefix, Duration.ofMillis(3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too short");
        assertThatThrownBy(() -> c.acquire(prefix, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wait PT-0.001S");
        assertThatThrownBy(() -> c.purgeFree(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        LockClient periodic = client(options(Duration.ofSeconds(10), true).toBuilder()
                .tokenPeriod(Duration.ofSeconds(5))
                .build());
        assertThatThrownBy(() -> periodic.tryAcquire(prefix, Duration.ofSeconds(6)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl >= 2 x tokenPeriod");
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(Duration.ofSeconds(10))
                        .tokenPeriod(Duration.ofSeconds(6))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT6S");
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(Duration.ofSeconds(2))
                        .renewInterval(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("renewInterval PT2S");
        // durations past LockOptions.MAX_TTL: refused naming the value and the limit, not an overflow
        Duration thousandYears = Duration.ofDays(365_000);
        assertThatThrownBy(() -> c.tryAcquire(prefix, thousandYears))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl " + thousandYears)
                .hasMessageContaining("maximum " + LockOptions.MAX_TTL);
        assertThatThrownBy(() -> c.acquire(prefix, Duration.ofSeconds(1), thousandYears))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl " + thousandYears);
        assertThatThrownBy(() -> LockOptions.builder().ttl(thousandYears).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl " + thousandYears)
                .hasMessageContaining("maximum " + LockOptions.MAX_TTL);
        assertThatThrownBy(() -> c.purgeFree(thousandYears))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("freeFor " + thousandYears);
        // a property whose value is null (a System.getenv that found nothing): named by its key
        assertThatThrownBy(() -> LockClient.builder().property("password", null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'password'")
                .hasMessageContaining("null");
        // a port that is no port: named, not sent to DNS or a connect attempt
        fixture.clientConnection().ifPresent(connection -> {
            String hosts =
                    io.fencelock.spi.ConnectionString.parse(connection.uri()).hosts();
            String first = hosts.split(",")[0];
            if (first.matches(".*:[0-9]+")) {
                String bad = connection
                        .uri()
                        .replace(hosts, first.replaceAll(":[0-9]+$", ":notaport") + hosts.substring(first.length()));
                LockClient.Builder builder = LockClient.builder().uri(bad);
                connection.properties().forEach(builder::property);
                assertThatThrownBy(builder::build)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("port 'notaport'");
            }
        });
        // metadata: control characters, oversize data, a bad type; refused when given, before any request
        assertThatThrownBy(() -> c.lock(prefix).owner("evil\nowner"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> c.lock(prefix).data("blob", "x".repeat(LockMetadata.MAX_DATA_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(LockMetadata.MAX_DATA_BYTES));
        assertThatThrownBy(() -> c.lock(prefix).type("no spaces allowed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'no spaces allowed'");
        assertThatThrownBy(() -> c.lock(prefix).ttl(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl");
        assertThat(raw.totalCalls())
                .as("backend round trips caused by bad input")
                .isEqualTo(callsBefore);
        assertThat(c.list(runPrefix)).as("locks on the backend after bad input").isEqualTo(before);
        assertThat(c.inspect(prefix)).as("the lock a rejected call named").isEmpty();
        // and the longest TTL allowed is one the backend stores; a longer one is refused before any request
        Duration longestTtl = raw.maxTtl();
        assertThat(longestTtl).as("the backend's longest TTL").isPositive().isLessThanOrEqualTo(LockOptions.MAX_TTL);
        int callsNow = raw.totalCalls();
        assertThatThrownBy(() -> c.tryAcquire(prefix + "-longer", longestTtl.plusMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(longestTtl.toString());
        assertThat(raw.totalCalls())
                .as("round trips of a TTL above the backend's longest")
                .isEqualTo(callsNow);
        Lease longest = c.tryAcquire(prefix + "-longest", longestTtl).orElseThrow();
        assertThat(c.inspect(prefix + "-longest"))
                .as("a lease of the backend's longest TTL " + longestTtl)
                .isPresent();
        longest.close();
        assertThat(c.inspect(prefix + "-longest").map(LockInfo::held))
                .as("released")
                .isNotEqualTo(Optional.of(true));
    }

    @Test
    void coverageGuard() {
        Assumptions.assumeTrue(
                TckSettings.replaySeed().isEmpty(),
                "replaying one schedule (-Dfencelock.tck.seed): coverage is judged on full runs only");
        Coverage total = totalCoverage();
        List<String> missing = missingSituations(total);
        assertThat(missing)
                .as("situations the random schedules never produced, in "
                        + randomRun().size() + " schedules (the run proved nothing about them); coverage "
                        + total.describe())
                .isEmpty();
    }

    // ------------------------------------------------------------------ engine properties on this backend

    @Test
    void renewalIsBatched() throws Exception {
        requireClaim(Capability.BATCH_RENEW);
        InstrumentedBackend raw = new InstrumentedBackend(fixture.openBackend());
        AtomicInteger renewed = new AtomicInteger();
        // a renew interval of 3 s: the leases are all taken within its first half, so the first
        // watchdog tick finds every one of them due and must renew them in one round trip
        LockClient c = LockClient.builder()
                .backend(raw)
                .options(options(Duration.ofSeconds(9), true))
                .listener(new LockEventListener() {
                    @Override
                    public void renewed(Lease lease) {
                        renewed.incrementAndGet();
                    }
                })
                .build();
        clients.add(c);
        int leases = 300;
        ExecutorService acquirers = Executors.newFixedThreadPool(16);
        try {
            List<Future<Optional<Lease>>> taken = new ArrayList<>();
            for (int i = 0; i < leases; i++) {
                String name = freshName();
                taken.add(acquirers.submit(() -> c.tryAcquire(name)));
            }
            for (Future<Optional<Lease>> f : taken) {
                assertThat(f.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS))
                        .isPresent();
            }
        } finally {
            acquirers.shutdownNow();
        }
        awaitCondition("every lease to be renewed once", () -> renewed.get() >= leases);
        List<Integer> batches = raw.renewBatchSizes();
        assertThat(batches.get(0))
                .as("leases renewed by the first round trip (batches " + batches + ")")
                .isEqualTo(leases);
        assertThat(c.held()).hasSize(leases).allMatch(Lease::isValid);
    }

    @Test
    void tokenPeriodRaisesTokenOnRenew() throws Exception {
        requireClaim(Capability.TOKEN_PERIOD);
        String name = freshName();
        Duration period = Duration.ofMillis(200);
        LockClient c = client(options(Duration.ofMillis(800), false).toBuilder()
                .tokenPeriod(period)
                .build());
        // a renew within the period keeps the token: checked on a grant and renew that took less than the period
        // together, measured from before the grant was asked for (a loaded machine may take longer; then again)
        Lease lease = null;
        long first = 0;
        for (int attempt = 1; lease == null; attempt++) {
            long asked = System.nanoTime();
            Lease granted = grantOfAFreeName(c, name);
            first = granted.fencingToken();
            assertThat(granted.renew()).isTrue();
            if (System.nanoTime() - asked < period.toNanos()) {
                lease = granted;
            } else {
                granted.release();
                assertThat(attempt)
                        .as("attempts at a grant and a renew within the %d ms token period", period.toMillis())
                        .isLessThan(5);
            }
        }
        assertThat(lease.fencingToken())
                .as("token renewed within the token period")
                .isEqualTo(first);
        Thread.sleep(period.toMillis() + 20); // the period is the behaviour under test
        assertThat(lease.renew()).isTrue();
        assertThat(lease.fencingToken())
                .as("token renewed after the token period")
                .isGreaterThan(first);
        assertThat(c.inspect(name).orElseThrow().token()).isEqualTo(lease.fencingToken());
        lease.release();
    }

    @Test
    void lostLeaseIsSignalledAndItsTaskCancelled() throws Exception {
        InstrumentedBackend raw = new InstrumentedBackend(fixture.openBackend());
        LockClient c = client(raw, options(Duration.ofMillis(400), true));
        String name = freshName();
        // a task that outlives its lease: renewals are cut off as by a lost connection
        AtomicReference<Lease> seen = new AtomicReference<>();
        assertThatThrownBy(() -> c.runExclusively(name, TckSettings.hangBound(), lease -> {
                    seen.set(lease);
                    raw.cutRenewals(true);
                    Thread.sleep(TckSettings.hangBound().toMillis());
                    return "finished";
                }))
                .isInstanceOf(LeaseLostException.class)
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(seen.get().state()).isEqualTo(LeaseState.LOST);
        assertThat(seen.get().isValid()).isFalse();
        assertThat(Thread.currentThread().isInterrupted())
                .as("interrupt left on the caller")
                .isFalse();
        raw.cutRenewals(false);
        // a task that finishes in time gets its result, and the lock is released
        assertThat(c.runExclusively(
                        name, TckSettings.hangBound(), lease -> lease.fencingToken() > 0 ? "ran" : "no token"))
                .contains("ran");
        assertThat(c.held()).isEmpty();
        awaitCondition(
                "the lock to be free",
                () -> !c.inspect(name).map(LockInfo::held).orElse(false));
    }

    // ------------------------------------------------------------------ leader election and task spreading

    /** One leader at a time, found by anyone who asks; a resign hands over promptly; a cut-off leader is replaced within its TTL. */
    @Test
    void leadershipMovesOnResignAndLoss() throws Exception {
        coordination().leadershipMovesOnResignAndLoss(freshName());
    }

    /** A leader frozen (SIGSTOP, in a child JVM) past its TTL is replaced; thawed, its work is interrupted and its writes fenced. */
    @Test
    void frozenLeaderIsReplacedAndFenced() throws Exception {
        coordination()
                .frozenLeaderIsReplacedAndFenced(childJvmConnection("frozenLeaderIsReplacedAndFenced"), freshName());
    }

    /** Tasks spread within one of even, run once at a time, move off a killed (SIGKILL) instance within TTL + a monitor period, and rebalance on a join. */
    @Test
    void tasksSpreadAndMoveOnFailure() throws Exception {
        coordination().tasksSpreadAndMoveOnFailure(childJvmConnection("tasksSpreadAndMoveOnFailure"), freshName());
    }

    private CoordinationChecks coordination() {
        return new CoordinationChecks(this::client, () -> new InstrumentedBackend(fixture.openBackend()), this::client);
    }

    /** The connection a child JVM opens; without one the property is recorded as not run (and fails in CI). */
    private ClientConnection childJvmConnection(String property) {
        Optional<String> why = faults.holderJvmUnavailable();
        if (why.isPresent()) {
            if (TckSettings.ci() && fixture.inThisJvmOnly().isEmpty()) {
                fail("CI=true and a child JVM cannot connect: " + why.get());
            }
            matrix.record(property, GuaranteeMatrix.NO_FAULT, true, Outcome.NOT_RUN, why.get(), null);
            Assumptions.abort("not run: " + why.get());
        }
        return fixture.clientConnection().orElseThrow();
    }

    // ------------------------------------------------------------------ properties under faults

    @Test
    void exclusionUnderHolderPauses() throws Exception {
        faults.holderJvmUnavailable()
                .ifPresent(
                        why -> notRun("exclusionUnderHolderPauses", "holder JVM frozen (SIGSTOP) past its TTL", why));
        judgeFaults("exclusionUnderHolderPauses", pauseRuns(), HistoryChecker.PROPERTIES, List.of(), true);
    }

    @Test
    void indeterminateOutcomesNeverYieldTwoHolders() throws Exception {
        faults.proxyUnavailable()
                .ifPresent(
                        why -> notRun("indeterminateOutcomesNeverYieldTwoHolders", "connection faults (proxy)", why));
        judgeFaults(
                "indeterminateOutcomesNeverYieldTwoHolders",
                connectionRuns(),
                HistoryChecker.PROPERTIES,
                List.of(),
                true);
    }

    /** The paused or cut-off holder learns it lost the lease, its task is cancelled, and its late writes are turned away. */
    @Test
    void faultedHolderLearnsLossAndIsFenced() throws Exception {
        List<FaultRun> runs = new ArrayList<>(pauseRuns());
        runs.addAll(connectionRuns());
        judgeFaults(
                "faultedHolderLearnsLossAndIsFenced",
                runs,
                List.of(HistoryChecker.FENCED_RESOURCE_REJECTS_STALE_WRITERS),
                List.of(FaultRun.LOST_SIGNALLED, FaultRun.TASK_CANCELLED),
                true);
    }

    /** After a fault heals (a reconnection, a restart) the client acquires again by itself, and no lease is silently assumed. */
    @Test
    void clientRecoversAfterFaults() throws Exception {
        List<FaultRun> runs = new ArrayList<>(pauseRuns());
        runs.addAll(connectionRuns());
        runs.addAll(restartRuns());
        judgeFaults(
                "clientRecoversAfterFaults",
                runs,
                List.of(),
                List.of(FaultRun.RECOVERED, FaultRun.RECOVERED + " (takeover)", FaultRun.LEASE_NOT_ASSUMED),
                true);
    }

    /** Tokens keep rising across a restart of the backend; only a provider declaring DURABLE_TOKENS claims it. */
    @Test
    void tokensMonotoneAcrossBackendRestart() throws Exception {
        judgeRestarts(
                "tokensMonotoneAcrossBackendRestart",
                List.of(
                        HistoryChecker.NEW_HOLDER_EXCEEDS_ALL_PRIOR_TOKENS,
                        HistoryChecker.TOKENS_RESPECT_REAL_TIME_ORDER),
                List.of(FaultRun.TOKENS_MONOTONE));
    }

    /** No two clients hold one lock across a restart: the backend's lock records survive it (claimed with DURABLE_TOKENS). */
    @Test
    void exclusionAcrossBackendRestart() throws Exception {
        judgeRestarts(
                "exclusionAcrossBackendRestart",
                List.of(
                        HistoryChecker.CERTAIN_HOLDS_NEVER_OVERLAP,
                        HistoryChecker.FENCED_RESOURCE_REJECTS_STALE_WRITERS),
                List.of());
    }

    /** A client's wall clock plays no part: holders whose clocks are hours off keep and yield the lock as any other. */
    @Test
    void wallClockPlaysNoPart() throws Exception {
        Optional<String> why = faults.skewedClocksUnavailable();
        if (why.isPresent() && TckSettings.ci() && faults.holderJvmUnavailable().isEmpty()) {
            fail("CI=true and the skewed-clock holders cannot run: " + why.get());
        }
        if (why.isPresent()) {
            matrix.record("wallClockPlaysNoPart", "skewed client wall clocks", true, Outcome.NOT_RUN, why.get(), null);
            Assumptions.abort("not run: " + why.get());
        }
        judgeFaults(
                "wallClockPlaysNoPart",
                List.of(faults.skewedWallClocks()),
                HistoryChecker.PROPERTIES,
                List.of(FaultRun.HELD_THROUGHOUT),
                true);
    }

    /** Records that {@code property} could not be run under {@code fault} here, and why. */
    private void notRun(String property, String fault, String why) {
        matrix.record(property, fault, true, Outcome.NOT_RUN, why, null);
    }

    /** A restart property: claimed only with DURABLE_TOKENS, run (and its outcome recorded) either way. */
    private void judgeRestarts(String property, List<String> historyProperties, List<String> checks) throws Exception {
        boolean claimed = capabilities.contains(Capability.DURABLE_TOKENS);
        Optional<String> why = faults.restartUnavailable();
        if (why.isPresent()) {
            matrix.record(property, "backend restart", claimed, Outcome.NOT_RUN, why.get(), null);
            Assumptions.abort("not run: " + why.get());
        }
        judgeFaults(property, restartRuns(), historyProperties, checks, claimed);
    }

    /**
     * Records one matrix cell per fault run: held when the history shows none of
     * {@code historyProperties} violated and none of {@code checks} failed; then fails the test if a
     * claimed cell was violated. An unclaimed violation stays in the matrix (and the log) as a finding.
     */
    private void judgeFaults(
            String property,
            List<FaultRun> runs,
            List<String> historyProperties,
            List<String> checks,
            boolean claimed) {
        for (FaultRun run : runs) {
            List<Violation> violations = historyProperties.isEmpty() ? List.of() : run.violations(historyProperties);
            List<String> failed = checks.stream()
                    .filter(c -> run.check(c).map(r -> !r.passed()).orElse(false))
                    .toList();
            boolean held = violations.isEmpty() && failed.isEmpty();
            String detail;
            if (held) {
                List<String> passed = checks.stream()
                        .filter(c -> run.check(c).isPresent())
                        .map(c -> c + ": " + run.check(c).get().detail())
                        .toList();
                detail = passed.isEmpty() ? "history judged clean" : String.join("; ", passed);
                if (!run.notes().isEmpty()) {
                    detail += " (" + run.notes() + ")";
                }
            } else {
                detail = !failed.isEmpty()
                        ? failed.get(0) + ": " + run.check(failed.get(0)).get().detail()
                        : violations.get(0).property() + ": "
                                + violations.get(0).message();
            }
            matrix.record(
                    property,
                    run.fault(),
                    claimed,
                    held ? Outcome.HELD : Outcome.VIOLATED,
                    detail,
                    held ? null : run.counterExample(violations, failed));
            if (!held && !claimed) {
                System.out.println(
                        "[fencelock-tck] finding (not claimed): " + property + " under " + run.fault() + ": " + detail);
            }
        }
        matrix.assertClaimsHeld(property);
    }

    private List<FaultRun> pauseRuns() throws Exception {
        if (pauseRuns == null) {
            pauseRuns = inRounds(() -> {
                List<FaultRun> runs = new ArrayList<>();
                if (faults.holderJvmUnavailable().isEmpty()) {
                    runs.add(faults.holderJvmFrozen());
                }
                runs.add(faults.watchdogStalled());
                return runs;
            });
        }
        return pauseRuns;
    }

    private List<FaultRun> connectionRuns() throws Exception {
        if (connectionRuns == null) {
            connectionRuns = inRounds(faults::connectionFaults);
        }
        return connectionRuns;
    }

    private List<FaultRun> restartRuns() throws Exception {
        if (restartRuns == null) {
            restartRuns = faults.restartUnavailable().isPresent() ? List.of() : inRounds(faults::restarts);
        }
        return restartRuns;
    }

    private interface Scenarios {
        List<FaultRun> run() throws Exception;
    }

    /** Runs the scenarios {@code fencelock.tck.faultRounds} times (more rounds: more interleavings of the same faults). */
    private static List<FaultRun> inRounds(Scenarios scenarios) throws Exception {
        List<FaultRun> all = new ArrayList<>();
        for (int round = 0; round < TckSettings.faultRounds(); round++) {
            all.addAll(scenarios.run());
        }
        return all;
    }

    @Override
    public GuaranteeMatrix guaranteeMatrix() {
        return matrix;
    }

    // ------------------------------------------------------------------ shared and ordered locks

    /** The semaphore's N in the random schedules: small, so that requests of 1..N contend. */
    private static final int SHARED_LIMIT = 3;

    // ------------------------------------------------------------------ hand-over (HAND_OVER)

    @Test
    void handOverGrantsANewerTokenAndEndsTheHolder() {
        requireClaim(Capability.HAND_OVER);
        new HandOverChecks(fixture, this::freshName).grantsANewerTokenAndEndsTheHolder();
    }

    @Test
    void handOverIsOwnerChecked() throws Exception {
        requireClaim(Capability.HAND_OVER);
        new HandOverChecks(fixture, this::freshName).isOwnerChecked();
    }

    @Test
    void handOversKeepExclusionUnderFaults() throws Exception {
        requireClaim(Capability.HAND_OVER);
        String property = HandOverChecks.KEEPS_EXCLUSION_UNDER_FAULTS;
        try {
            List<SharedChecks.Hold> holds =
                    new HandOverChecks(fixture, this::freshName).randomRunUnderFaults(sharedSeed());
            matrix.record(
                    property,
                    HandOverChecks.RANDOM_RUN_FAULTS,
                    true,
                    Outcome.HELD,
                    holds.size() + " grants judged",
                    null);
        } catch (AssertionError e) {
            matrix.record(
                    property,
                    HandOverChecks.RANDOM_RUN_FAULTS,
                    true,
                    Outcome.VIOLATED,
                    e.getMessage().lines().findFirst().orElse(""),
                    e.getMessage());
            throw e;
        }
    }

    private List<SharedChecks.Hold> permitHolds;
    private List<SharedChecks.Hold> readWriteHolds;

    @Test
    void permitsNeverExceeded() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        SharedChecks.require(
                "permitsNeverExceeded",
                sharedSeed(),
                SharedChecks.permitsExceeded(permitHolds(), SHARED_LIMIT),
                permitHolds());
    }

    @Test
    void writersExcludeEveryone() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        SharedChecks.require(
                "writersExcludeEveryone",
                sharedSeed(),
                SharedChecks.writerOverlaps(readWriteHolds()),
                readWriteHolds());
    }

    @Test
    void sharedTokensRespectRealTimeOrder() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        requireClaim(Capability.FENCING);
        SharedChecks.require(
                "sharedTokensRespectRealTimeOrder",
                sharedSeed(),
                SharedChecks.tokenOrderViolations(permitHolds()),
                permitHolds());
        SharedChecks.require(
                "sharedTokensRespectRealTimeOrder",
                sharedSeed(),
                SharedChecks.tokenOrderViolations(readWriteHolds()),
                readWriteHolds());
    }

    @Test
    void sharedNamesKeepTheirKind() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
            checks.sharedNamesKeepTheirKind();
        }
    }

    @Test
    void renewalKeepsEveryKindOfGrant() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
            checks.renewalKeepsEveryKindOfGrant(capabilities.contains(Capability.FAIR_ORDER));
        }
    }

    @Test
    void waitingWriterIsNotStarved() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
            checks.waitingWriterIsNotStarved();
        }
    }

    @Test
    void downgradeLeavesNoGap() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
            checks.downgradeLeavesNoGap(20);
        }
    }

    @Test
    void fairGrantsFollowRequestOrder() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        requireClaim(Capability.FAIR_ORDER);
        try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
            checks.fairGrantsFollowRequestOrder(4);
        }
    }

    // shared grants under the fault suite's faults: one matrix cell per property and fault

    private SharedFaultScenarios sharedFaults;
    private List<FaultRun> sharedPauseRuns;
    private List<FaultRun> sharedConnectionRuns;
    private List<FaultRun> sharedRestartRuns;

    /**
     * Semaphore permits, writer exclusion and token order while a shared holder's renewals stall or
     * its JVM is frozen; the stalled renewals, arriving late, do not bring the lost grants back.
     */
    @Test
    void sharedExclusionUnderHolderPauses() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        faults.holderJvmUnavailable()
                .ifPresent(why ->
                        notRun("sharedExclusionUnderHolderPauses", "holder JVM frozen (SIGSTOP) past its TTL", why));
        judgeFaults(
                "sharedExclusionUnderHolderPauses",
                sharedPauseRuns(),
                sharedProperties(),
                List.of(FaultRun.LOST_GRANT_NOT_REVIVED),
                true);
    }

    /** The shared properties when answers of acquires, downgrades, renewals and releases are lost, and under the proxy's faults. */
    @Test
    void sharedIndeterminateOutcomesKeepTheLimits() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        faults.proxyUnavailable()
                .ifPresent(why -> notRun("sharedIndeterminateOutcomesKeepTheLimits", "connection faults (proxy)", why));
        judgeFaults(
                "sharedIndeterminateOutcomesKeepTheLimits",
                sharedConnectionRuns(),
                sharedProperties(),
                List.of(),
                true);
        recordRotatedOut("sharedIndeterminateOutcomesKeepTheLimits");
    }

    /** A matrix cell for each proxy fault this run left out of the shared runs (they are taken in turn across runs). */
    private void recordRotatedOut(String property) throws Exception {
        if (faults.proxyUnavailable().isPresent()) {
            return;
        }
        List<String> ran = sharedConnectionRuns().stream().map(FaultRun::fault).toList();
        for (String fault : SharedFaultScenarios.proxyFaultNames()) {
            if (!ran.contains(fault)) {
                notRun(
                        property,
                        fault,
                        "taken in turn: this run drove " + TckSettings.sharedProxyFaults() + " of the "
                                + SharedFaultScenarios.proxyFaultNames().size()
                                + " proxy faults per round on shared grants (the mutex runs under all of them);"
                                + " -Pthorough or -Dfencelock.tck.sharedProxyFaults=5 drives every one");
            }
        }
    }

    /**
     * A paused or cut-off shared holder learns it lost its grants, its late write is turned away by
     * the fence, its grants are renewed or lost (never assumed), and it gets grants again afterwards.
     */
    @Test
    void sharedHolderLearnsLossAndIsFenced() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        List<FaultRun> runs = new ArrayList<>(sharedPauseRuns());
        runs.addAll(sharedConnectionRuns());
        judgeFaults(
                "sharedHolderLearnsLossAndIsFenced",
                runs,
                List.of(),
                List.of(
                        FaultRun.LOST_SIGNALLED,
                        FaultRun.TASK_CANCELLED,
                        FaultRun.LATE_WRITE_FENCED,
                        FaultRun.LEASE_NOT_ASSUMED,
                        FaultRun.RECOVERED,
                        FaultRun.RECOVERED + " (takeover)"),
                true);
        recordRotatedOut("sharedHolderLearnsLossAndIsFenced");
    }

    /** Shared grants survive a restart of the backend, and their tokens keep rising: claimed with DURABLE_TOKENS. */
    @Test
    void sharedGrantsAcrossBackendRestart() throws Exception {
        requireClaim(Capability.SHARED_LOCKS);
        boolean claimed = capabilities.contains(Capability.DURABLE_TOKENS);
        Optional<String> why = faults.restartUnavailable();
        if (why.isPresent()) {
            matrix.record(
                    "sharedGrantsAcrossBackendRestart", "backend restart", claimed, Outcome.NOT_RUN, why.get(), null);
            Assumptions.abort("not run: " + why.get());
        }
        if (sharedRestartRuns == null) {
            sharedRestartRuns = inRounds(sharedFaults()::restarts);
        }
        judgeFaults(
                "sharedGrantsAcrossBackendRestart",
                sharedRestartRuns,
                sharedProperties(),
                List.of(FaultRun.TOKENS_MONOTONE, FaultRun.RECOVERED, FaultRun.LEASE_NOT_ASSUMED),
                claimed);
    }

    /** The shared properties a backend claims: token order only with FENCING. */
    private List<String> sharedProperties() {
        return SharedChecks.PROPERTIES.stream()
                .filter(p -> capabilities.contains(Capability.FENCING)
                        || !p.equals(SharedChecks.SHARED_TOKENS_RESPECT_REAL_TIME_ORDER))
                .toList();
    }

    private SharedFaultScenarios sharedFaults() {
        if (sharedFaults == null) {
            sharedFaults = new SharedFaultScenarios(fixture, this::freshName, faults);
        }
        return sharedFaults;
    }

    private List<FaultRun> sharedPauseRuns() throws Exception {
        if (sharedPauseRuns == null) {
            sharedPauseRuns = inRounds(() -> sharedFaults().pauses(sharedSeed()));
        }
        return sharedPauseRuns;
    }

    private List<FaultRun> sharedConnectionRuns() throws Exception {
        if (sharedConnectionRuns == null) {
            sharedConnectionRuns =
                    inRounds(() -> sharedFaults().connectionFaults(sharedSeed(), TckSettings.sharedProxyFaults()));
        }
        return sharedConnectionRuns;
    }

    /** The random schedules' seed for shared locks: the replay seed, or the base seed of this run. */
    private static long sharedSeed() {
        return TckSettings.replaySeed().orElse(TckSettings.baseSeed());
    }

    private List<SharedChecks.Hold> permitHolds() throws Exception {
        if (permitHolds == null) {
            try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
                permitHolds = checks.randomPermits(sharedSeed(), SHARED_LIMIT);
            }
        }
        return permitHolds;
    }

    private List<SharedChecks.Hold> readWriteHolds() throws Exception {
        if (readWriteHolds == null) {
            try (SharedChecks checks = new SharedChecks(fixture, this::freshName)) {
                readWriteHolds = checks.randomReadWrite(sharedSeed());
            }
        }
        return readWriteHolds;
    }

    // ------------------------------------------------------------------ machinery

    private record RunResult(Schedule schedule, History history) {}

    /** The random schedules, run once per class and judged by every history property. */
    private List<RunResult> randomRun() {
        if (randomRun == null) {
            ScheduleGenerator generator = new ScheduleGenerator(scheduleConfig());
            ScheduleRunner runner = new ScheduleRunner(fixture, runPrefix);
            List<RunResult> results = new ArrayList<>();
            OptionalLong replay = TckSettings.replaySeed();
            if (replay.isPresent()) {
                Schedule s = generator.generate(replay.getAsLong());
                results.add(new RunResult(s, runner.run(s, 0)));
            } else {
                long base = TckSettings.baseSeed();
                System.out.println("[fencelock-tck] " + getClass().getSimpleName() + ": " + TckSettings.schedules()
                        + " schedules from base seed " + base);
                results.addAll(runConcurrently(generator, runner, base, 0, TckSettings.schedules()));
                // A slow machine can time out enough steps that a run of random schedules never produces a
                // situation (a hand-off on a three-member ensemble, say), and then proves nothing about it. The
                // run draws more schedules, each judged by every property like the first ones, until every
                // situation has occurred or the bound is reached (the coverage guard then fails).
                int drawn = TckSettings.schedules();
                int bound = TckSettings.maxSchedules();
                List<String> missing = missingSituations(coverageOf(results));
                while (!missing.isEmpty() && drawn < bound) {
                    int more = Math.min(TckSettings.parallelSchedules(), bound - drawn);
                    System.out.println("[fencelock-tck] " + getClass().getSimpleName() + ": " + drawn
                            + " schedules never produced " + missing + "; drawing " + more + " more");
                    results.addAll(runConcurrently(generator, runner, base, drawn, more));
                    drawn += more;
                    missing = missingSituations(coverageOf(results));
                }
                matrix.settings(java.util.Map.of("schedules", drawn, "baseSeed", base));
            }
            randomRun = results;
        }
        return randomRun;
    }

    /**
     * The run's schedules, {@link TckSettings#parallelSchedules()} at a time, in seed order (SideBySide). Each
     * has its own lock names, clients and history, so running them together changes no verdict.
     */
    private static List<RunResult> runConcurrently(
            ScheduleGenerator generator, ScheduleRunner runner, long base, int from, int count) {
        List<Callable<RunResult>> runs = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            Schedule s = generator.generate(base + i);
            runs.add(() -> new RunResult(s, runner.run(s, 0)));
        }
        try {
            return SideBySide.run(runs, TckSettings.parallelSchedules(), "tck-schedule");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running the schedules", e);
        } catch (Exception e) {
            throw new AssertionError("a schedule failed: " + e, e);
        }
    }

    /** The situations a run must have produced for its verdicts to mean something, and which of them it did not. */
    private List<String> missingSituations(Coverage total) {
        List<String> missing = new ArrayList<>();
        if (total.acquisitions() == 0) missing.add("acquisitions");
        if (total.contendedAttempts() == 0) missing.add("contended attempts");
        if (total.takeovers() == 0) missing.add("takeovers after expiry");
        if (total.handOffs() == 0) missing.add("hand-offs after release");
        if (total.releases() == 0) missing.add("releases");
        if (total.staleReleases() == 0) missing.add("stale releases");
        if (total.zombieWritesRejected() == 0 && capabilities.contains(Capability.FENCING))
            missing.add("rejected zombie writes");
        if (total.purges() == 0 && capabilities.contains(Capability.PURGE_FREE)) missing.add("purges");
        return missing;
    }

    private static Coverage coverageOf(List<RunResult> results) {
        Coverage total = Coverage.NONE;
        for (RunResult r : results) total = total.plus(Coverage.of(r.history().events()));
        return total;
    }

    private Coverage totalCoverage() {
        return coverageOf(randomRun());
    }

    private void assertHistories(String property, Function<List<Event>, List<Violation>> checker) {
        for (RunResult r : randomRun()) {
            List<Violation> violations = checker.apply(r.history().events());
            if (!violations.isEmpty()) {
                fail(failureReport(property, r, violations, checker));
            }
        }
    }

    private String failureReport(
            String property,
            RunResult failed,
            List<Violation> violations,
            Function<List<Event>, List<Violation>> checker) {
        ScheduleRunner runner = new ScheduleRunner(fixture, runPrefix + "-shrink");
        AtomicInteger attempt = new AtomicInteger();
        AtomicReference<RunResult> smallest = new AtomicReference<>();
        Schedule shrunk = Shrinker.shrink(
                failed.schedule(),
                candidate -> {
                    History h = runner.run(candidate, attempt.incrementAndGet());
                    boolean fails = !checker.apply(h.events()).isEmpty();
                    if (fails) {
                        smallest.set(new RunResult(candidate, h));
                    }
                    return fails;
                },
                TckSettings.shrinkAttempts());
        RunResult shown = smallest.get() != null && smallest.get().schedule().equals(shrunk) ? smallest.get() : failed;
        List<Violation> shownViolations =
                shown == failed ? violations : checker.apply(shown.history().events());
        StringBuilder sb = new StringBuilder();
        sb.append("property ")
                .append(property)
                .append(" failed on ")
                .append(fixture.description())
                .append('\n');
        sb.append("replay with -Dfencelock.tck.seed=")
                .append(failed.schedule().seed())
                .append('\n');
        sb.append("violations:\n");
        shownViolations.forEach(v -> sb.append("  ").append(v).append('\n'));
        sb.append(shown == failed ? "schedule (could not be shrunk):\n" : "shrunk schedule:\n")
                .append(shown.schedule())
                .append('\n');
        sb.append("history:\n").append(shown.history());
        return sb.toString();
    }

    private void requireClaim(Capability capability) {
        Assumptions.assumeTrue(
                capabilities.contains(capability),
                "not claimed: " + fixture.description() + " does not declare " + capability);
    }

    /** A lock name no other test or run uses. */
    protected String freshName() {
        return runPrefix + "-" + nameCounter.incrementAndGet();
    }

    private static LockOptions options(Duration ttl, boolean autoRenew) {
        return LockOptions.builder()
                .ttl(ttl)
                .autoRenew(autoRenew)
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(100))
                .build();
    }

    private LockClient client(LockOptions options) {
        return client(fixture.openBackend(), options);
    }

    private LockClient client(LockBackend backend, LockOptions options) {
        LockClient c = LockClient.create(backend, options);
        clients.add(c);
        return c;
    }

    /** A recorded client of a fresh backend, closed after the test like the others. */
    private RecordedClient recorded(int process, History history, LockOptions options) {
        RecordedClient c = new RecordedClient(process, history, fixture.openBackend(), options);
        clients.add(c.client());
        return c;
    }

    /**
     * A {@code tryAcquire} of a name nobody holds, with {@code c}'s TTL: granted. An answer that took longer than
     * the lease's validity window (a loaded machine: a cold fork's first grants, or two cores shared with other suites'
     * servers) may come back refused: the engine lets a grant that arrives too late to be used go, and
     * ZooKeeper's provider gives such a grant back at its TTL (the CI run of 98b1ad6 saw a 1 s lease refused so on
     * a fresh name). Then, once the name reads free again, it is asked again, up to five times. A refusal that
     * came within the validity window fails at once: that is a free name refused.
     */
    private static Lease grantOfAFreeName(LockClient c, String name) throws InterruptedException {
        return grantAndWhenAsked(c, name).lease();
    }

    /** The grant of {@link #grantOfAFreeName} and the {@link System#nanoTime} its granted attempt was sent at. */
    private record Grant(Lease lease, long askedNanos) {}

    private static Grant grantAndWhenAsked(LockClient c, String name) throws InterruptedException {
        Duration ttl = c.options().ttl();
        Duration window = c.options().validityWindow(ttl);
        return grantUnlessLate(
                "free lock not granted",
                "TTL " + ttl.toMillis() + " ms, validity window " + window.toMillis() + " ms",
                window,
                () -> {
                    long asked = System.nanoTime();
                    return c.tryAcquire(name).map(lease -> new Grant(lease, asked));
                },
                () -> !c.inspect(name).map(LockInfo::held).orElse(false));
    }

    /**
     * The same through the SPI: a grant of {@code ttl} on a name nobody holds, its lease id returned. Only a refusal
     * that took the whole TTL is asked again (with a new lease id, once the name reads free): a provider may give
     * back a grant whose answer came after its TTL, as ZooKeeper's does.
     */
    static String grantOfAFreeName(LockBackend backend, String name, Duration ttl) throws InterruptedException {
        return grantUnlessLate(
                "free name '" + name + "' not granted through the SPI",
                "TTL " + ttl.toMillis() + " ms",
                ttl,
                () -> {
                    String leaseId = UUID.randomUUID().toString();
                    return backend.tryAcquire(name, leaseId, ttl).acquired()
                            ? Optional.of(leaseId)
                            : Optional.<String>empty();
                },
                () -> !backend.inspect(name).map(LockInfo::held).orElse(false));
    }

    /**
     * {@code attempt}'s grant; a refusal that took at least {@code lateAfter} (a grant whose answer came too late,
     * let go) is asked again once {@code nameFree}, up to five attempts; a sooner one fails at once.
     */
    private static <T> T grantUnlessLate(
            String failure, String limits, Duration lateAfter, Supplier<Optional<T>> attempt, BooleanSupplier nameFree)
            throws InterruptedException {
        for (int n = 1; ; n++) {
            long asked = System.nanoTime();
            Optional<T> granted = attempt.get();
            if (granted.isPresent()) {
                return granted.get();
            }
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
            if (tookMillis < lateAfter.toMillis() || n == 5) {
                throw new AssertionError(
                        failure + " (attempt " + n + " answered in " + tookMillis + " ms, " + limits + ")");
            }
            awaitCondition("the name given back after a late answer to be free", nameFree);
        }
    }

    /** Waits for a condition, bounded only to stop a hang (the coordination and shared checks use it too). */
    static void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TckSettings.hangBound().toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out after " + TckSettings.hangBound() + " waiting for " + what);
            }
            Thread.sleep(5);
        }
    }
}
