package io.fencelock.tck.broken;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.matrix.MatrixRecorder;
import io.fencelock.testservers.postgres.PostgresServer;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * The kit is not vacuous: run against a backend with one seeded flaw, the property that guards
 * against that flaw must fail. Each flawed backend is a real PostgreSQL table with unsafe SQL, but for
 * the wake-up queue, which is the in-memory backend's with a queue of its own (QueuedWakeUpBackend).
 */
class BrokenBackendsAreCaughtTest {
    /** The flawed backends' matrices are no real backend's results: kept out of the comparison report's way. */
    private static final String FLAWED_MATRICES = "target/fencelock-tck-flawed";

    private static final String HANG_SECONDS = "fencelock.tck.hangSeconds";
    private static final String IN_MEMORY_HANG_SECONDS = "5";

    private static String previousSchedules;
    private static String previousMaxSchedules;
    private static String previousShrink;
    private static String previousRace;

    @BeforeAll
    static void fewerSchedules() {
        previousSchedules = System.getProperty("fencelock.tck.schedules");
        previousShrink = System.getProperty("fencelock.tck.shrinkAttempts");
        System.setProperty("fencelock.tck.schedules", "6");
        // no more schedules to cover a situation a flawed backend may never produce (a backend without
        // mutual exclusion is never contended): what counts here is the property that catches the flaw
        previousMaxSchedules = System.getProperty("fencelock.tck.maxSchedules");
        System.setProperty("fencelock.tck.maxSchedules", "6");
        System.setProperty("fencelock.tck.shrinkAttempts", "4");
        // a race property stops at its first violation: a long bound costs a flawed backend nothing
        // and makes missing the flaw vanishingly unlikely
        previousRace = System.getProperty("fencelock.tck.raceSeconds");
        System.setProperty("fencelock.tck.raceSeconds", "30");
    }

    @AfterAll
    static void restore() {
        restore("fencelock.tck.schedules", previousSchedules);
        restore("fencelock.tck.maxSchedules", previousMaxSchedules);
        restore("fencelock.tck.shrinkAttempts", previousShrink);
        restore("fencelock.tck.raceSeconds", previousRace);
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    @Test
    void releaseWithoutOwnerCheckIsCaught() {
        assertFails(ReleaseWithoutOwnerCheck.class, "releaseIsOwnerChecked");
    }

    @Test
    void seedTokenPlusOneWithCleanupIsCaught() {
        assertFails(TokenPlusOneWithCleanup.class, "newHolderExceedsAllPriorTokens");
    }

    @Test
    void purgeWithoutGuardIsCaught() {
        Events events = run(PurgeWithoutGuard.class, "tokensRiseWhilePurgesRace");
        assertThat(events.failed().count())
                .as("tokensRiseWhilePurgesRace on PurgeWithoutGuard")
                .isEqualTo(1);
        // judged by the history checker: a holder's write inside its certain hold was turned away
        assertThat(failure(events).getMessage()).contains("fencedResourceRejectsStaleWriters");
    }

    @Test
    void renewAfterExpiryIsCaught() {
        assertFails(RenewIgnoresExpiry.class, "renewAfterExpiryIsRejected");
    }

    @Test
    void takeoverKeepingTheTokenIsCaught() {
        assertFails(TakeoverKeepsToken.class, "fencedResourceRejectsStaleWriters");
    }

    @Test
    void aPrimitiveThatBlocksPastTheWaitIsCaught() {
        assertFails(BlocksUntilFree.class, "acquireHonoursItsWaitUnderLoad");
    }

    @Test
    void interruptedGrantReportedAsRefusalIsCaught() {
        assertFails(InterruptedGrantReportedRefused.class, "interruptedAcquireLeavesNoGrantBehind");
    }

    @Test
    void releaseNotAwaitedIsCaught() {
        assertFails(ReleaseNotAwaited.class, "releaseWorksOnAnInterruptedThread");
    }

    @Test
    void metadataLeftByTheLastHolderIsCaught() {
        Events events = run(MetadataLeftByLastHolder.class, "metadataRoundTrips");
        assertThat(events.failed().count())
                .as("metadataRoundTrips on MetadataLeftByLastHolder")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("the next holder shows no type of the last one");
    }

    @Test
    void aRenewalThatNeverShortensIsCaught() {
        Events events = run(RenewNeverShortens.class, "shortenedLeaseIsFreeWhenItsNewTtlEnds");
        assertThat(events.failed().count())
                .as("shortenedLeaseIsFreeWhenItsNewTtlEnds on RenewNeverShortens")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("the lock after the shortened TTL");
    }

    @Test
    void aHandOverKeepingTheTokenIsCaught() {
        Events events = run(HandOverKeepsToken.class, "handOverGrantsANewerTokenAndEndsTheHolder");
        assertThat(events.failed().count())
                .as("handOverGrantsANewerTokenAndEndsTheHolder on HandOverKeepsToken")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("is not above the holder's");
    }

    @Test
    void aHandOverWithoutOwnerCheckIsCaught() {
        Events events = run(HandOverWithoutOwnerCheck.class, "handOverIsOwnerChecked");
        assertThat(events.failed().count())
                .as("handOverIsOwnerChecked on HandOverWithoutOwnerCheck")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("the hand-over of an expired lease");
    }

    @Test
    void aWakeUpLostWithAWaiterThatLeftIsCaught() {
        assertFailsInMemory(WakeUpDroppedByAClientThatLeft.class, "releaseWakesTheNextWaiterWhenOneLeft");
        // the same queue, passing the wake-up on to the next client, is not flagged
        Events events = inMemory(WakeUpPassedOn.class, "releaseWakesTheNextWaiterWhenOneLeft");
        assertThat(events.failed().count()).as("failures: " + failures(events)).isZero();
        assertThat(events.succeeded().count()).isEqualTo(1);
    }

    @Test
    void aGrantByReleaseToldToNobodyIsCaught() {
        Events events = inMemory(GrantToldToNobody.class, "releaseGrantsTheQueuedWaiter");
        assertThat(events.failed().count())
                .as("releaseGrantsTheQueuedWaiter on GrantToldToNobody")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("the grant was not told");
    }

    @Test
    void aGrantByReleaseLeftStandingForAWaiterThatLeftIsCaught() {
        assertFailsInMemory(QueuedGrantUnreleasable.class, "releaseWakesTheNextWaiterWhenOneLeft");
        // the same kept places, whose grants are released as any grant, are not flagged: the engine lets them go
        for (String property : List.of(
                "releaseWakesTheNextWaiterWhenOneLeft",
                "releaseGrantsTheQueuedWaiter",
                "aReleaseAfterAWaiterGaveUpLeavesTheNameFree")) {
            Events events = inMemory(QueuedGrantKeepsPlaces.class, property);
            assertThat(events.failed().count())
                    .as(property + " failures: " + failures(events))
                    .isZero();
            assertThat(events.succeeded().count()).as(property).isEqualTo(1);
        }
    }

    @Test
    void aQueuePlaceOutlivingItsWaiterIsCaught() {
        Events events = inMemory(QueuePlaceNotWithdrawn.class, "aReleaseAfterAWaiterGaveUpLeavesTheNameFree");
        assertThat(events.failed().count())
                .as("aReleaseAfterAWaiterGaveUpLeavesTheNameFree on QueuePlaceNotWithdrawn")
                .isEqualTo(1);
        assertThat(failure(events).getMessage()).contains("right after the release");
    }

    @Test
    void missingMutualExclusionIsCaughtByTheRandomSchedules() {
        Events events = run(NoMutualExclusion.class, "certainHoldsNeverOverlap");
        assertThat(events.failed().count()).as("failed tests").isEqualTo(1);
        // the report names the property, the seed to replay and the shrunk schedule
        assertThat(failure(events).getMessage())
                .contains("certainHoldsNeverOverlap")
                .contains("-Dfencelock.tck.seed=")
                .contains("schedule")
                .contains("history:");
    }

    @Test
    void aCorrectTableDesignPassesTheSameProperties() {
        // The same SQL without a flaw is not flagged: the failures above come from the flaws.
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(
                        selectMethod(NoFlaw.class, "releaseIsOwnerChecked"),
                        selectMethod(NoFlaw.class, "renewAfterExpiryIsRejected"),
                        selectMethod(NoFlaw.class, "fencedResourceRejectsStaleWriters"),
                        selectMethod(NoFlaw.class, "acquireHonoursItsWaitUnderLoad"),
                        selectMethod(NoFlaw.class, "interruptedAcquireLeavesNoGrantBehind"),
                        selectMethod(NoFlaw.class, "releaseWorksOnAnInterruptedThread"),
                        selectMethod(NoFlaw.class, "metadataRoundTrips"),
                        selectMethod(NoFlaw.class, "shortenedLeaseIsFreeWhenItsNewTtlEnds"),
                        selectMethod(NoFlaw.class, "handOverGrantsANewerTokenAndEndsTheHolder"),
                        selectMethod(NoFlaw.class, "handOverIsOwnerChecked"),
                        selectMethod(NoFlaw.class, "handOversKeepExclusionUnderFaults"))
                .configurationParameter(MatrixRecorder.DIRECTORY_PARAMETER, FLAWED_MATRICES)
                .execute()
                .testEvents();
        assertThat(events.failed().count())
                .as("failures on the sound variant: " + failures(events))
                .isZero();
        assertThat(events.succeeded().count()).isEqualTo(11);
    }

    private static Throwable failure(Events events) {
        return events.failed().stream()
                .findFirst()
                .orElseThrow()
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
    }

    private static String failures(Events events) {
        StringBuilder sb = new StringBuilder();
        events.failed().stream()
                .forEach(e -> e.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                        .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable)
                        .ifPresent(t -> sb.append('\n')
                                .append(e.getTestDescriptor().getDisplayName())
                                .append(": ")
                                .append(t)));
        return sb.toString();
    }

    private static void assertFails(Class<? extends LockBackendContract> contract, String property) {
        assertFailed(run(contract, property), contract, property);
    }

    private static void assertFailsInMemory(Class<? extends LockBackendContract> contract, String property) {
        assertFailed(inMemory(contract, property), contract, property);
    }

    private static void assertFailed(Events events, Class<? extends LockBackendContract> contract, String property) {
        assertThat(events.failed().count())
                .as(property + " on " + contract.getSimpleName())
                .isEqualTo(1);
    }

    /**
     * One property on a fixture of the in-memory store, whose wake-ups and grants arrive within microseconds:
     * the TCK's bound on a wait ({@code fencelock.tck.hangSeconds}) is cut from 20 to {@value
     * #IN_MEMORY_HANG_SECONDS} seconds, since a lost wake-up is caught only when that bound passes.
     */
    private static Events inMemory(Class<? extends LockBackendContract> contract, String property) {
        String previous = System.getProperty(HANG_SECONDS);
        System.setProperty(HANG_SECONDS, IN_MEMORY_HANG_SECONDS);
        try {
            return run(contract, property);
        } finally {
            restore(HANG_SECONDS, previous);
        }
    }

    private static Events run(Class<? extends LockBackendContract> contract, String property) {
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(contract, property))
                .configurationParameter(MatrixRecorder.DIRECTORY_PARAMETER, FLAWED_MATRICES)
                .execute()
                .testEvents();
    }

    /** A fixture for one flaw, on its own database of the shared PostgreSQL. */
    private static BackendFixture fixtureWith(FlawedTableBackend.Flaw flaw) {
        PostgresServer server = PostgresServer.shared();
        String url = server.createDatabase("flawed");
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return new FlawedTableBackend(flaw, url, server.user(), server.password());
            }

            @Override
            public String description() {
                return "flawed backend (" + (flaw == null ? "no flaw" : flaw) + ") on " + server.description();
            }
        };
    }

    /** The contract on a flawed backend; subclasses only name the flaw. */
    abstract static class FlawedContract extends LockBackendContract {
        abstract FlawedTableBackend.Flaw flaw();

        @Override
        protected BackendFixture fixture() {
            return fixtureWith(flaw());
        }
    }

    static class ReleaseWithoutOwnerCheck extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.RELEASE_WITHOUT_OWNER_CHECK;
        }
    }

    static class HandOverKeepsToken extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.HAND_OVER_KEEPS_TOKEN;
        }
    }

    static class HandOverWithoutOwnerCheck extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.HAND_OVER_WITHOUT_OWNER_CHECK;
        }
    }

    static class TokenPlusOneWithCleanup extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.TOKEN_PLUS_ONE_WITH_CLEANUP;
        }
    }

    static class RenewIgnoresExpiry extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.RENEW_IGNORES_EXPIRY;
        }
    }

    static class TakeoverKeepsToken extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.TAKEOVER_KEEPS_TOKEN;
        }
    }

    static class PurgeWithoutGuard extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.PURGE_WITHOUT_GUARD;
        }
    }

    static class NoMutualExclusion extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.NO_MUTUAL_EXCLUSION;
        }
    }

    static class BlocksUntilFree extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.BLOCKS_UNTIL_FREE;
        }
    }

    static class InterruptedGrantReportedRefused extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.INTERRUPTED_GRANT_REPORTED_REFUSED;
        }
    }

    static class ReleaseNotAwaited extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.RELEASE_NOT_AWAITED;
        }
    }

    static class MetadataLeftByLastHolder extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.METADATA_LEFT_BY_LAST_HOLDER;
        }
    }

    static class RenewNeverShortens extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return FlawedTableBackend.Flaw.RENEW_NEVER_SHORTENS;
        }
    }

    /** A fixture of wake-up queues on one in-memory store of this JVM. */
    private static BackendFixture queuedWakeUps(boolean passesOn) {
        return onOneInMemoryStore(
                "in-memory store with wake-up queues that " + (passesOn ? "pass a wake-up on" : "drop it"),
                store -> new QueuedWakeUpBackend(store, passesOn));
    }

    /** A fixture of queued grants on one in-memory store of this JVM, with {@code flaw}. */
    private static BackendFixture queuedGrants(QueuedGrantBackend.Flaw flaw) {
        return onOneInMemoryStore(
                "in-memory store whose releases grant queued waiters, " + flaw,
                store -> new QueuedGrantBackend(store, flaw));
    }

    /** Backends {@code open} makes on one fresh in-memory store of this JVM (by its name). */
    private static BackendFixture onOneInMemoryStore(
            String description, java.util.function.Function<String, LockBackend> open) {
        String store = "broken-" + java.util.UUID.randomUUID();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return open.apply(store);
            }

            @Override
            public String description() {
                return description;
            }

            @Override
            public java.util.Optional<String> inThisJvmOnly() {
                return java.util.Optional.of("the in-memory store lives in this JVM");
            }
        };
    }

    static class WakeUpDroppedByAClientThatLeft extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedWakeUps(false);
        }
    }

    static class WakeUpPassedOn extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedWakeUps(true);
        }
    }

    static class GrantToldToNobody extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedGrants(QueuedGrantBackend.Flaw.SILENT_GRANT);
        }
    }

    static class QueuedGrantUnreleasable extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedGrants(QueuedGrantBackend.Flaw.UNRELEASABLE_QUEUED_GRANT);
        }
    }

    static class QueuePlaceNotWithdrawn extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedGrants(QueuedGrantBackend.Flaw.PLACE_NOT_WITHDRAWN);
        }
    }

    static class QueuedGrantKeepsPlaces extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            return queuedGrants(QueuedGrantBackend.Flaw.KEEPS_PLACES_OF_WAITERS_THAT_LEFT);
        }
    }

    /** The same table design without a flaw. */
    static class NoFlaw extends FlawedContract {
        FlawedTableBackend.Flaw flaw() {
            return null;
        }
    }
}
