package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WaitLinesTest {
    private final WaitLines lines = new WaitLines();

    @Test
    void theFirstWaiterIsTheHeadAndTheOthersQueueInOrder() throws InterruptedException {
        WaitLines.Waiter first = lines.join("a", null);
        WaitLines.Waiter second = lines.join("a", null);
        WaitLines.Waiter third = lines.join("a", null);
        assertThat(first.isHead()).isTrue();
        assertThat(second.isHead()).isFalse();
        assertThat(lines.waiting("a")).isEqualTo(3);

        lines.leave(first);
        assertThat(second.isHead()).as("the next in line after the head left").isTrue();
        assertThat(second.await(0)).as("a zero wait never blocks").isFalse();
        assertThat(second.await(1_000_000_000L))
                .as("promotion wakes the new head")
                .isTrue();
        assertThat(third.isHead()).isFalse();
        lines.leave(second);
        assertThat(third.isHead()).isTrue();
        lines.leave(third);
        assertThat(lines.waiting("a")).isZero();
    }

    @Test
    void aWaiterLeavingFromTheMiddleDoesNotPromoteAnyone() {
        WaitLines.Waiter head = lines.join("a", null);
        WaitLines.Waiter middle = lines.join("a", null);
        WaitLines.Waiter last = lines.join("a", null);
        lines.leave(middle); // its wait ran out, or it was interrupted
        assertThat(head.isHead()).isTrue();
        assertThat(last.isHead()).isFalse();
        lines.leave(head);
        assertThat(last.isHead()).isTrue();
    }

    @Test
    void namesHaveLinesOfTheirOwn() {
        WaitLines.Waiter a = lines.join("a", null);
        WaitLines.Waiter b = lines.join("b", null);
        assertThat(a.isHead()).isTrue();
        assertThat(b.isHead()).isTrue();
    }

    @Test
    void aLocalReleaseWakesOnlyTheHead() throws InterruptedException {
        WaitLines.Waiter head = lines.join("a", null);
        WaitLines.Waiter behind = lines.join("a", null);
        lines.released("a");
        lines.released("b"); // nobody waits for b: nothing happens
        assertThat(head.await(1_000_000_000L)).isTrue();
        assertThat(behind.await(1_000_000L))
                .as("a waiter behind the head sleeps on")
                .isFalse();
        head.signal();
        head.forgetSignals();
        assertThat(head.await(1_000_000L))
                .as("signals seen before an attempt are forgotten")
                .isFalse();
    }
}
