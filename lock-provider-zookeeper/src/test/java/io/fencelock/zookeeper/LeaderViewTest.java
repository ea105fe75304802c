package io.fencelock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The rule of {@link LeaderView}, on explicit times (ms as nanos): timeout 1,000, lag 100. */
class LeaderViewTest {
    private static final long MS = 1_000_000L;
    private static final long TIMEOUT = 1_000 * MS;
    private static final long LAG = 100 * MS;

    private static LeaderView openedAt(long asked, long connected) {
        LeaderView view = new LeaderView(TIMEOUT, LAG);
        view.opened(asked, connected);
        return view;
    }

    @Test
    void aGrantRightAfterTheOpenIsCoveredOnceItsOwnAnswerChainsOn() {
        LeaderView view = openedAt(0, 5 * MS);
        assertThat(view.covers(10 * MS, 1_010 * MS))
                .as("the open alone ends at asked + timeout")
                .isFalse();
        view.heard(10 * MS, 12 * MS); // the grant: the leader counts it from 112 ms until 1,010 ms
        assertThat(view.covers(10 * MS, 1_010 * MS)).isTrue();
        assertThat(view.covers(4 * MS, 1_010 * MS))
                .as("before the session was connected")
                .isFalse();
    }

    @Test
    void requestsCloserThanTimeoutMinusLagKeepOneRun() {
        LeaderView view = openedAt(0, 5 * MS);
        for (long sent = 300; sent <= 3_000; sent += 300) {
            view.heard(sent * MS, (sent + 2) * MS);
        }
        assertThat(view.covers(2_990 * MS, 3_990 * MS))
                .as("a grant sent at 2,990 ms and answered at 3,000 ms")
                .isTrue();
        assertThat(view.covers(0, 3_000 * MS)).isFalse();
    }

    @Test
    void aSilenceLongerThanTimeoutMinusLagStartsANewRunAndLeavesAGrantUnproven() {
        LeaderView view = openedAt(0, 5 * MS);
        view.heard(10 * MS, 12 * MS); // covers until 1,010 ms
        // silent until a grant sent at 950 ms is answered at 960 ms: the leader may hear of it only at 1,060 ms,
        // 50 ms after what it heard before runs out
        view.heard(950 * MS, 960 * MS);
        assertThat(view.covers(950 * MS, 1_950 * MS)).isFalse();
        // a check answered after the lag proves the session; the next grant is covered at once
        view.heard(1_070 * MS, 1_072 * MS);
        view.heard(1_080 * MS, 1_082 * MS); // the next grant's own answer
        assertThat(view.covers(1_080 * MS, 2_080 * MS))
                .as("sent after the new run began (1,060 ms)")
                .isTrue();
    }

    @Test
    void anAnswerSlowerThanTimeoutMinusLagSaysNothing() {
        LeaderView view = openedAt(0, 5 * MS);
        view.heard(10 * MS, 12 * MS);
        view.heard(20 * MS, 1_000 * MS); // counted from 1,100 ms until 1,020 ms: nothing
        assertThat(view.covers(10 * MS, 1_010 * MS)).isTrue();
        assertThat(view.covers(10 * MS, 1_020 * MS)).isFalse();
    }

    @Test
    void answersOutOfOrderMergeIntoTheRun() {
        LeaderView view = openedAt(0, 5 * MS);
        view.heard(200 * MS, 210 * MS);
        view.heard(100 * MS, 220 * MS); // sent earlier, answered later: inside the run
        assertThat(view.covers(5 * MS, 1_200 * MS)).isTrue();
        view.heard(1 * MS, 3 * MS); // older news inside the run: nothing changes
        assertThat(view.covers(5 * MS, 1_200 * MS)).isTrue();
    }

    @Test
    void theLastSendIsTheLatest() {
        LeaderView view = new LeaderView(TIMEOUT, LAG);
        view.sending(Long.MAX_VALUE - 10);
        view.sending(Long.MAX_VALUE + 10); // nanoTime may wrap: compared by difference
        view.sending(Long.MAX_VALUE - 20);
        assertThat(view.lastSent()).isEqualTo(Long.MAX_VALUE + 10);
    }
}
