package io.fencelock.tck;

import io.fencelock.Capability;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockOptions;
import io.fencelock.SemaphoreHandle;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The properties of a hand-over ({@link Capability#HAND_OVER}, {@code LockBackend.handOver}): one step
 * that ends a holder's grant and grants another lease of its client. Two targeted checks on the SPI
 * (what a hand-over grants, and that only the holder can hand over) and a random run of several clients'
 * threads on one name, where a release with a waiter of the same client is a hand-over, under lost
 * answers and holds past the TTL, judged by mutual exclusion and real-time token order. Each check throws
 * an {@link AssertionError} naming its property. Used by {@link LockBackendContract} on every backend that
 * claims the capability, and on a deliberately flawed backend to show that the checks catch it.
 */
public final class HandOverChecks {
    public static final String GRANTS_A_NEWER_TOKEN = "handOverGrantsANewerTokenAndEndsTheHolder";
    public static final String IS_OWNER_CHECKED = "handOverIsOwnerChecked";
    public static final String KEEPS_EXCLUSION_UNDER_FAULTS = "handOversKeepExclusionUnderFaults";
    /** The faults of the random run, as the guarantee matrix names them. */
    public static final String RANDOM_RUN_FAULTS = "lost answers, holds past the TTL";

    private static final Duration LONG_TTL = Duration.ofSeconds(20);
    private static final Duration SHORT_TTL = Duration.ofMillis(300);
    private static final int RANDOM_RUN_CLIENTS = 2;

    private final BackendFixture fixture;
    private final Supplier<String> freshName;

    public HandOverChecks(BackendFixture fixture, Supplier<String> freshName) {
        this.fixture = fixture;
        this.freshName = freshName;
    }

    /**
     * handOverGrantsANewerTokenAndEndsTheHolder: a hand-over grants the new lease a token above the
     * holder's, with its own metadata; the old lease can neither renew, release nor hand over again;
     * nobody else can take the name; the new holder's release frees it, and the next grant's token rises.
     */
    public void grantsANewerTokenAndEndsTheHolder() {
        String name = freshName.get();
        try (LockBackend backend = fixture.openBackend();
                LockBackend other = fixture.openBackend()) {
            boolean metadata = backend.capabilities().contains(Capability.METADATA);
            String first = leaseId();
            AcquireResult held = backend.tryAcquire(name, first, LONG_TTL, LockMetadata.of("first", "job", Map.of()));
            require(held.acquired(), GRANTS_A_NEWER_TOKEN + ": the first grant of a free name");
            String second = leaseId();
            LockMetadata handedMeta = LockMetadata.of("second", "handed", Map.of("step", "2"));
            AcquireResult handed = backend.handOver(name, first, second, LONG_TTL, handedMeta);
            require(handed.acquired(), GRANTS_A_NEWER_TOKEN + ": the holder's hand-over was refused");
            require(
                    handed.token() > held.token(),
                    GRANTS_A_NEWER_TOKEN + ": the handed-over grant's token " + handed.token()
                            + " is not above the holder's " + held.token());
            LockInfo seen = other.inspect(name).orElseThrow();
            require(
                    seen.held() && second.equals(seen.leaseId()) && seen.token() == handed.token(),
                    GRANTS_A_NEWER_TOKEN + ": inspect shows " + seen + " after the hand-over to " + second);
            if (metadata) {
                require(
                        seen.owner().equals(Optional.of("second"))
                                && seen.type().equals(Optional.of("handed"))
                                && seen.data().equals(Map.of("step", "2")),
                        GRANTS_A_NEWER_TOKEN + ": the new holder's metadata, seen " + seen);
            }
            require(
                    !backend.renew(List.of(new RenewRequest(name, first, LONG_TTL, null)))
                            .get(0)
                            .renewed(),
                    GRANTS_A_NEWER_TOKEN + ": the old lease renewed after its hand-over");
            require(
                    !backend.release(name, first),
                    GRANTS_A_NEWER_TOKEN + ": the old lease released after its hand-over");
            require(
                    !backend.handOver(name, first, leaseId(), LONG_TTL, LockMetadata.NONE)
                            .acquired(),
                    GRANTS_A_NEWER_TOKEN + ": the old lease handed over twice");
            require(
                    !other.tryAcquire(name, leaseId(), LONG_TTL).acquired(),
                    GRANTS_A_NEWER_TOKEN + ": another client took the handed-over name");
            LockInfo after = other.inspect(name).orElseThrow();
            require(
                    second.equals(after.leaseId()) && after.token() == handed.token(),
                    GRANTS_A_NEWER_TOKEN + ": the name changed after refused requests: " + after);
            require(
                    backend.release(name, second),
                    GRANTS_A_NEWER_TOKEN + ": the new holder's release did not free the name");
            AcquireResult next = other.tryAcquire(name, leaseId(), LONG_TTL);
            require(
                    next.acquired() && next.token() > handed.token(),
                    GRANTS_A_NEWER_TOKEN + ": the next grant after the new holder's release: " + next);
        }
    }

    /**
     * handOverIsOwnerChecked: a hand-over from a lease that does not hold the name (a stranger, an expired
     * lease whose name another took, a released lease, an expired lease nobody took, a shared grant)
     * changes nothing: it grants nothing, the holder keeps its grant and token, a free name stays free.
     */
    public void isOwnerChecked() throws InterruptedException {
        String name = freshName.get();
        try (LockBackend backend = fixture.openBackend();
                LockBackend other = fixture.openBackend()) {
            refused(backend, name, leaseId(), "a stranger on a free name");
            require(!held(other, name), IS_OWNER_CHECKED + ": a stranger's hand-over took a free name");

            String expired = LockBackendContract.grantOfAFreeName(backend, name, SHORT_TTL);
            awaitFree(other, name);
            refused(backend, name, expired, "an expired lease nobody took over");
            require(!held(other, name), IS_OWNER_CHECKED + ": an expired lease's hand-over took the name");

            String holder = leaseId();
            AcquireResult holding = other.tryAcquire(name, holder, LONG_TTL);
            require(holding.acquired(), IS_OWNER_CHECKED + ": a grant of the name after the expiry");
            refused(backend, name, expired, "an expired lease whose name another lease holds");
            refused(backend, name, leaseId(), "a stranger on a held name");
            LockInfo seen = other.inspect(name).orElseThrow();
            require(
                    seen.held() && holder.equals(seen.leaseId()) && seen.token() == holding.token(),
                    IS_OWNER_CHECKED + ": the holder's grant changed under refused hand-overs: " + seen);
            require(
                    other.renew(List.of(new RenewRequest(name, holder, LONG_TTL, null)))
                            .get(0)
                            .renewed(),
                    IS_OWNER_CHECKED + ": the holder could not renew after refused hand-overs");

            require(other.release(name, holder), IS_OWNER_CHECKED + ": the holder's release");
            refused(backend, name, holder, "a released lease");
            require(!held(other, name), IS_OWNER_CHECKED + ": a released lease's hand-over took the name");

            if (backend.capabilities().contains(Capability.SHARED_LOCKS)) {
                String semaphore = freshName.get();
                try (LockClient client = LockClient.create(fixture.openBackend(), options())) {
                    SemaphoreHandle permits = client.semaphore(semaphore, 2);
                    var permit = permits.tryAcquire().orElseThrow();
                    refused(backend, semaphore, permit.leaseId(), "a semaphore permit");
                    LockInfo shared = other.inspect(semaphore).orElseThrow();
                    require(
                            shared.permitsHeld() == 1,
                            IS_OWNER_CHECKED + ": the semaphore after a permit's refused hand-over: " + shared);
                    permit.release();
                }
            }
        }
    }

    /**
     * handOversKeepExclusionUnderFaults: threads of {@value #RANDOM_RUN_CLIENTS} clients, {@link
     * SharedChecks#THREADS_PER_CLIENT} each, take one name with random TTLs and holds (some past the TTL,
     * unrenewed), while answers of one client or the other are lost for short spells (the request took
     * effect, the caller saw a failure). No two certain holds overlap, and a grant asked for after another
     * was granted has a higher token; at least one hand-over must have happened.
     */
    public List<SharedChecks.Hold> randomRunUnderFaults(long seed) throws Exception {
        List<InstrumentedBackend> backends = new ArrayList<>();
        List<LockClient> clients = new ArrayList<>();
        for (int c = 0; c < RANDOM_RUN_CLIENTS; c++) {
            InstrumentedBackend backend = new InstrumentedBackend(fixture.openBackend());
            backends.add(backend);
            clients.add(LockClient.create(backend, options()));
        }
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService faults = Executors.newSingleThreadExecutor();
        List<SharedChecks.Hold> holds;
        try (SharedChecks schedule = new SharedChecks(fixture, freshName)) {
            Future<?> spells = faults.submit(() -> {
                Random random = new Random(seed);
                while (!stop.get()) {
                    Thread.sleep(50 + random.nextInt(150));
                    InstrumentedBackend faulted = backends.get(random.nextInt(backends.size()));
                    faulted.loseAnswers(true);
                    try {
                        Thread.sleep(10 + random.nextInt(40));
                    } finally {
                        faulted.loseAnswers(false);
                    }
                }
                return null;
            });
            try {
                holds = schedule.randomMutex(seed, clients);
            } finally {
                stop.set(true);
                spells.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            faults.shutdownNow();
            backends.forEach(b -> b.loseAnswers(false));
            clients.forEach(LockClient::close);
        }
        List<String> violations = new ArrayList<>(SharedChecks.permitsExceeded(holds, 1));
        violations.addAll(SharedChecks.tokenOrderViolations(holds));
        SharedChecks.require(KEEPS_EXCLUSION_UNDER_FAULTS, seed, violations, holds);
        int handOvers =
                backends.stream().mapToInt(InstrumentedBackend::handOverCalls).sum();
        require(
                handOvers > 0,
                KEEPS_EXCLUSION_UNDER_FAULTS + ": no release was a hand-over in " + holds.size() + " grants (seed "
                        + seed + "): the run did not cover what it checks");
        return holds;
    }

    // ------------------------------------------------------------------ machinery

    private static void refused(LockBackend backend, String name, String from, String what) {
        AcquireResult answer = backend.handOver(name, from, leaseId(), LONG_TTL, LockMetadata.NONE);
        require(!answer.acquired(), IS_OWNER_CHECKED + ": the hand-over of " + what + " granted " + answer);
    }

    private static boolean held(LockBackend backend, String name) {
        return backend.inspect(name).map(LockInfo::held).orElse(false);
    }

    private static void awaitFree(LockBackend backend, String name) throws InterruptedException {
        long end = System.nanoTime() + TckSettings.hangBound().toNanos();
        while (held(backend, name)) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError(
                        "timed out after " + TckSettings.hangBound() + " waiting for " + name + " to expire");
            }
            Thread.sleep(5);
        }
    }

    private static String leaseId() {
        return UUID.randomUUID().toString();
    }

    private static LockOptions options() {
        return LockOptions.builder()
                .ttl(Duration.ofSeconds(5))
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(50))
                .build();
    }

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
