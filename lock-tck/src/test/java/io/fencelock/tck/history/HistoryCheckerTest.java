package io.fencelock.tck.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.fencelock.tck.history.Event.Kind;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The checker judged on synthetic histories: a good one must pass, each bad one must be caught by
 * its property. Times are in ms; leases are "a", "b", "c"; all on lock "L0".
 */
class HistoryCheckerTest {

    private static final String L0 = "L0";

    /**
     * p0 holds (renewing once), releases; p1, waiting since the start, gets the lock (hand-off) and
     * crashes; p0 takes over after p1's deadline. p0 also re-releases its old lease and writes as a
     * zombie (rejected); p2 tries once while the lock is held and purges at the end.
     */
    private static List<Event> goodHandOverHistory() {
        return new HistoryBuilder()
                .acquire(0, L0, 0, 1, "a", 1, 300)
                .acquire(1, L0, 2, 203, "b", 2, 503)
                .write(0, L0, "a", 1, true, 10, 11, true)
                .renew(0, L0, "a", 100, 101, 1, 400)
                .write(0, L0, "a", 1, true, 150, 151, true)
                .release(0, L0, "a", 200, 202, true)
                .write(1, L0, "b", 2, true, 210, 211, true)
                .release(0, L0, "a", 220, 221, false)
                .write(0, L0, "a", 1, false, 230, 231, false)
                .acquireFails(2, L0, 250, 251)
                .acquire(0, L0, 300, 510, "c", 3, 800)
                .lost(1, L0, "b", 503)
                .write(0, L0, "c", 3, true, 520, 521, true)
                .release(0, L0, "c", 600, 601, true)
                .purge(2, 700, 701)
                .events();
    }

    @Nested
    class GoodHistory {

        @Test
        void passesEveryProperty() {
            assertThat(HistoryChecker.check(goodHandOverHistory())).isEmpty();
        }

        @Test
        void coverageCountsWhatHappened() {
            assertThat(Coverage.of(goodHandOverHistory())).isEqualTo(new Coverage(3, 1, 1, 1, 2, 1, 1, 1, 1, 1));
        }

        @Test
        void emptyHistoryPassesWithNoCoverage() {
            assertThat(HistoryChecker.check(List.of())).isEmpty();
            assertThat(Coverage.of(List.of())).isEqualTo(Coverage.NONE);
        }
    }

    @Nested
    class CertainHoldsNeverOverlap {

        @Test
        void catchesTwoLeasesHoldingAtOnce() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 50, 100, "b", 2, 400)
                    .release(1, L0, "b", 150, 151, true)
                    .release(0, L0, "a", 250, 251, true)
                    .events();

            assertThat(HistoryChecker.certainHoldsNeverOverlap(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("certainHoldsNeverOverlap"))
                    .satisfies(v -> assertThat(v.message()).contains("lease a", "lease b", "L0"));
            assertThat(HistoryChecker.check(history))
                    .extracting(Violation::property)
                    .contains("certainHoldsNeverOverlap");
        }

        @Test
        void renewArrivingInTimeExtendsTheHold() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .renew(0, L0, "a", 250, 290, 1, 600)
                    .acquire(1, L0, 320, 350, "b", 2, 650)
                    .release(1, L0, "b", 400, 401, true)
                    .events();

            assertThat(HistoryChecker.certainHoldsNeverOverlap(history)).hasSize(1);
        }

        @Test
        void renewArrivingAfterTheDeadlineDoesNotExtendTheHold() {
            // the same history, but the renew's answer comes after the lease's local deadline:
            // the lease was invalid from 300 on, so b acquiring at 350 is a fair takeover
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .renew(0, L0, "a", 250, 310, 1, 600)
                    .acquire(1, L0, 320, 350, "b", 2, 650)
                    .release(1, L0, "b", 400, 401, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }

        @Test
        void acquireOfUnknownOutcomeCausesNoFalseOverlap() {
            List<Event> history = new HistoryBuilder()
                    .acquireUnknown(0, L0, 0, 5)
                    .acquire(1, L0, 10, 11, "b", 2, 300)
                    .write(1, L0, "b", 2, true, 20, 21, true)
                    .release(1, L0, "b", 100, 101, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
            assertThat(Coverage.of(history).acquisitions()).isEqualTo(1);
        }

        @Test
        void releaseOfUnknownOutcomeEndsTheHoldAtItsInvocation() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 1000)
                    .releaseUnknown(0, L0, "a", 100, 150)
                    .acquire(1, L0, 120, 160, "b", 2, 500)
                    .release(1, L0, "b", 200, 201, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }

        @Test
        void lostSignalEndsTheHold() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 1000)
                    .lost(0, L0, "a", 100)
                    .acquire(1, L0, 120, 150, "b", 2, 500)
                    .release(1, L0, "b", 200, 201, true)
                    .events();

            assertThat(HistoryChecker.certainHoldsNeverOverlap(history)).isEmpty();
        }

        @Test
        void holdsOnDifferentLocksAreIndependent() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, "L0", 0, 1, "a", 1, 300)
                    .acquire(1, "L1", 0, 2, "b", 1, 300)
                    .release(0, "L0", "a", 100, 101, true)
                    .release(1, "L1", "b", 100, 101, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }
    }

    @Nested
    class Tokens {

        @Test
        void catchesNewHolderWithSmallerTokenAfterReleaseAndReacquire() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 5, 300)
                    .release(0, L0, "a", 10, 11, true)
                    .acquire(1, L0, 20, 21, "b", 1, 320)
                    .release(1, L0, "b", 30, 31, true)
                    .events();

            assertThat(HistoryChecker.newHolderExceedsAllPriorTokens(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("newHolderExceedsAllPriorTokens"))
                    .satisfies(v -> assertThat(v.message()).contains("token 1", "was 5"));
            assertThat(HistoryChecker.tokensRespectRealTimeOrder(history)).hasSize(1);
        }

        @Test
        void catchesRenewTokenBelowAnEarlierGrant() {
            // acquires are fine; b's renew goes back below both a's token and b's own
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 3, 300)
                    .release(0, L0, "a", 10, 11, true)
                    .acquire(1, L0, 20, 21, "b", 4, 320)
                    .renew(1, L0, "b", 100, 101, 2, 400)
                    .release(1, L0, "b", 150, 151, true)
                    .events();

            assertThat(HistoryChecker.newHolderExceedsAllPriorTokens(history)).isEmpty();
            assertThat(HistoryChecker.tokensRespectRealTimeOrder(history))
                    .hasSize(2)
                    .allSatisfy(v -> assertThat(v.property()).isEqualTo("tokensRespectRealTimeOrder"))
                    .anySatisfy(v -> assertThat(v.message()).contains("token 2", "token 3", "lease a"))
                    .anySatisfy(v -> assertThat(v.message()).contains("token 2", "token 4", "its own lease"));
        }

        @Test
        void concurrentGrantsAreNotOrdered() {
            // b asked before a's renew answered: the renew may have run first on the server
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 200)
                    .renew(0, L0, "a", 150, 190, 7, 200)
                    .acquire(1, L0, 180, 250, "b", 5, 500)
                    .release(1, L0, "b", 300, 301, true)
                    .events();

            assertThat(HistoryChecker.tokensRespectRealTimeOrder(history)).isEmpty();
            assertThat(HistoryChecker.newHolderExceedsAllPriorTokens(history)).isEmpty();
        }

        @Test
        void equalTokenOnANewHolderIsAViolation() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 4, 300)
                    .release(0, L0, "a", 10, 11, true)
                    .acquire(1, L0, 20, 21, "b", 4, 320)
                    .events();

            assertThat(HistoryChecker.newHolderExceedsAllPriorTokens(history)).hasSize(1);
            assertThat(HistoryChecker.tokensRespectRealTimeOrder(history)).hasSize(1);
        }

        @Test
        void equalTokenWithinOneLeaseIsFine() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 4, 300)
                    .renew(0, L0, "a", 100, 101, 4, 400)
                    .renew(0, L0, "a", 200, 201, 5, 500)
                    .release(0, L0, "a", 250, 251, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }
    }

    @Nested
    class FencedResource {

        @Test
        void catchesAcceptedZombieWrite() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .write(1, L0, "b", 2, true, 360, 361, true)
                    .write(0, L0, "a", 1, false, 400, 401, true)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.fencedResourceRejectsStaleWriters(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("fencedResourceRejectsStaleWriters"))
                    .satisfies(v -> assertThat(v.message()).contains("zombie", "token 1", "token 2"));
        }

        @Test
        void rejectedZombieWriteIsFine() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .write(1, L0, "b", 2, true, 360, 361, true)
                    .write(0, L0, "a", 1, false, 400, 401, false)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
            assertThat(Coverage.of(history).zombieWritesRejected()).isEqualTo(1);
        }

        @Test
        void catchesValidHoldersWriteRejected() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .write(0, L0, "a", 1, true, 50, 51, false)
                    .release(0, L0, "a", 100, 101, true)
                    .events();

            assertThat(HistoryChecker.fencedResourceRejectsStaleWriters(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.message()).contains("rejected", "certain hold"));
        }

        @Test
        void writeStillInFlightWhenTheHoldEndsMayBeRejected() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 250, 301, "b", 2, 600)
                    .write(0, L0, "a", 1, true, 290, 330, false)
                    .write(1, L0, "b", 2, true, 302, 303, true)
                    .release(1, L0, "b", 400, 401, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }
    }

    @Nested
    class Release {

        @Test
        void catchesNonOwnerReleaseThatFreed() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .release(0, L0, "a", 400, 401, true)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.releaseIsOwnerChecked(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("releaseIsOwnerChecked"))
                    .satisfies(v -> assertThat(v.message()).contains("lease a", "lease b"));
            assertThat(HistoryChecker.certainHoldsNeverOverlap(history)).isEmpty();
        }

        @Test
        void staleReleaseThatFreedNothingIsFine() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .release(0, L0, "a", 400, 401, false)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
            assertThat(Coverage.of(history)).satisfies(c -> {
                assertThat(c.staleReleases()).isEqualTo(1);
                assertThat(c.takeovers()).isEqualTo(1);
            });
        }

        @Test
        void catchesDoubleReleaseBothFreeing() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .release(0, L0, "a", 100, 101, true)
                    .release(0, L0, "a", 200, 201, true)
                    .events();

            assertThat(HistoryChecker.releaseIsIdempotent(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("releaseIsIdempotent"));
            assertThat(HistoryChecker.releaseIsOwnerChecked(history)).isEmpty();
        }
    }

    @Nested
    class Renew {

        @Test
        void catchesRenewAcceptedAfterAnotherLeaseAcquired() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .renew(0, L0, "a", 400, 401, 3, 700)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.renewAfterExpiryIsRejected(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.property()).isEqualTo("renewAfterExpiryIsRejected"))
                    .satisfies(v -> assertThat(v.message()).contains("lease a", "lease b"));
            // the late renew does not extend a's hold: no overlap is claimed on top
            assertThat(HistoryChecker.certainHoldsNeverOverlap(history)).isEmpty();
        }

        @Test
        void catchesRenewAcceptedAfterLost() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .lost(0, L0, "a", 300)
                    .renew(0, L0, "a", 310, 311, 1, 600)
                    .events();

            assertThat(HistoryChecker.renewAfterExpiryIsRejected(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.message()).contains("lost"));
        }

        @Test
        void catchesRenewAcceptedAfterRelease() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .release(0, L0, "a", 100, 101, true)
                    .renew(0, L0, "a", 150, 151, 1, 450)
                    .events();

            assertThat(HistoryChecker.renewAfterExpiryIsRejected(history))
                    .singleElement()
                    .satisfies(v -> assertThat(v.message()).contains("release"));
        }

        @Test
        void rejectedRenewIsFine() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .acquire(1, L0, 100, 350, "b", 2, 650)
                    .renewRejected(0, L0, "a", 400, 401)
                    .release(1, L0, "b", 500, 501, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }
    }

    @Nested
    class Robustness {

        @Test
        void cutOffHistoryDoesNotCrashAndBlamesNothing() {
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 300)
                    .invokeOnly(0, Kind.WRITE, L0, "a", 1, true, 10)
                    .invokeOnly(0, Kind.RENEW, L0, "a", 0, false, 20)
                    .invokeOnly(0, Kind.RELEASE, L0, "a", 0, false, 30)
                    .invokeOnly(1, Kind.ACQUIRE, L0, null, 0, false, 40)
                    .invokeOnly(2, Kind.PURGE, null, null, 0, false, 50)
                    .events();

            assertThatCode(() -> HistoryChecker.check(history)).doesNotThrowAnyException();
            assertThat(HistoryChecker.check(history)).isEmpty();
            assertThat(Coverage.of(history)).isEqualTo(new Coverage(1, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        }

        @Test
        void holdOfALeaseStillHeldAtTheEndOfTheHistoryEndsThere() {
            // b's acquire comes after the last event of a's knowledge; a has no deadline recorded
            List<Event> history = new HistoryBuilder()
                    .acquire(0, L0, 0, 1, "a", 1, 0)
                    .write(0, L0, "a", 1, true, 10, 11, true)
                    .events();

            assertThat(HistoryChecker.check(history)).isEmpty();
        }
    }

    @Test
    void checkReportsEveryPropertyByItsContractName() {
        assertThat(HistoryChecker.PROPERTIES)
                .containsExactly(
                        "certainHoldsNeverOverlap",
                        "tokensRespectRealTimeOrder",
                        "newHolderExceedsAllPriorTokens",
                        "fencedResourceRejectsStaleWriters",
                        "releaseIsOwnerChecked",
                        "releaseIsIdempotent",
                        "renewAfterExpiryIsRejected");
    }

    @Test
    void violationPrintsPropertyMessageAndEvidence() {
        List<Event> history = new HistoryBuilder()
                .acquire(0, L0, 0, 1, "a", 1, 300)
                .release(0, L0, "a", 100, 101, true)
                .release(0, L0, "a", 200, 201, true)
                .events();

        String printed = HistoryChecker.check(history).get(0).toString();

        assertThat(printed).startsWith("releaseIsIdempotent: ");
        assertThat(printed.lines()).hasSize(5); // the message, then both releases' invoke and completion
        assertThat(printed).contains("freed=true");
    }

    @Test
    void coveragesAddUp() {
        Coverage one = new Coverage(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        assertThat(one.plus(one)).isEqualTo(new Coverage(2, 4, 6, 8, 10, 12, 14, 16, 18, 20));
        assertThat(one.plus(Coverage.NONE)).isEqualTo(one);
        assertThat(one.describe()).contains("takeovers=3", "hand-offs=4", "zombie writes rejected=9");
    }
}
