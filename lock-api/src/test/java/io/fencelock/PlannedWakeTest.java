package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PlannedWakeTest {
    private static final long HANG_GUARD_SECONDS = 30;
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    @Test
    void workDueBeforeThePlannedMomentWakesTheSleeper() throws InterruptedException {
        PlannedWake wake = new PlannedWake();
        CountDownLatch sleeping = new CountDownLatch(1);
        CountDownLatch woken = new CountDownLatch(1);
        Thread sleeper = new Thread(() -> {
            try {
                wake.looking();
                sleeping.countDown();
                wake.sleepUntil(System.nanoTime() + HOUR, () -> false);
                woken.countDown();
            } catch (InterruptedException ignored) {
                // the test failed by then
            }
        });
        sleeper.setDaemon(true);
        sleeper.start();
        assertThat(sleeping.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        // whether the sleeper still looks or already sleeps an hour, work due in a second wakes it
        wake.wakeIfBefore(System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
        assertThat(woken.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                .as("woken")
                .isTrue();
    }

    @Test
    void workDueAfterThePlannedMomentLeavesTheSleeperAlone() throws InterruptedException {
        PlannedWake wake = new PlannedWake();
        long planned = System.nanoTime();
        wake.sleepUntil(planned, () -> false); // plans a moment, returns at once

        wake.wakeIfBefore(planned + HOUR); // the sleeper looks again by then: no wake-up request

        long nap = TimeUnit.MILLISECONDS.toNanos(30);
        long start = System.nanoTime();
        wake.sleepUntil(start + nap, () -> false);
        assertThat(System.nanoTime() - start)
                .as("slept its whole nap, not woken")
                .isGreaterThanOrEqualTo(nap);
    }

    @Test
    void aWakeWhileLookingEndsTheNextSleepAtOnce() throws InterruptedException {
        PlannedWake wake = new PlannedWake();
        wake.looking();
        wake.wakeIfBefore(System.nanoTime() + HOUR); // looking: the sleeper may have missed the work

        long start = System.nanoTime();
        wake.sleepUntil(start + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS), () -> false);
        assertThat(System.nanoTime() - start)
                .as("returned on the pending wake-up")
                .isLessThan(TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS));
    }
}
