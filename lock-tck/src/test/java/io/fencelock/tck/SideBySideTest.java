package io.fencelock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SideBySideTest {
    @Test
    void resultsComeInTheRunsOrderAndNoMoreThanAtOnceRunTogether() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        List<Callable<Integer>> runs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int n = i;
            runs.add(() -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    // the first ends only after another started, and that one only after the first started
                    // (threads start in any order): so two surely ran together
                    if (n == 0) {
                        firstStarted.countDown();
                        firstMayEnd.await(10, TimeUnit.SECONDS);
                    } else {
                        firstStarted.await(10, TimeUnit.SECONDS);
                        firstMayEnd.countDown();
                    }
                    return n;
                } finally {
                    running.decrementAndGet();
                }
            });
        }
        assertThat(SideBySide.run(runs, 3, "test-run")).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(most.get()).isBetween(2, 3);
    }

    @Test
    void aFailedRunFailsTheWholeWithItsOwnErrorOnceTheOthersEnded() {
        AtomicInteger ended = new AtomicInteger();
        AssertionError failure = new AssertionError("the history of the failed run");
        CountDownLatch failing = new CountDownLatch(1);
        List<Callable<Integer>> runs = List.of(
                () -> {
                    // ends only once the other run is failing: the failure comes first, the end after it
                    if (!failing.await(10, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the failing run never ran");
                    }
                    ended.incrementAndGet();
                    return 1;
                },
                () -> {
                    failing.countDown();
                    throw failure;
                });
        assertThatThrownBy(() -> SideBySide.run(runs, 2, "test-run")).isSameAs(failure);
        assertThat(ended.get())
                .as("runs that ended before the failure was thrown")
                .isEqualTo(1);
    }

    @Test
    void callsOnOwnThreadsDoNotQueueBehindABlockedOne() throws Exception {
        int calls = Runtime.getRuntime().availableProcessors() + 2; // more than the common pool's threads
        CountDownLatch allStarted = new CountDownLatch(calls);
        CountDownLatch release = new CountDownLatch(1);
        List<CompletableFuture<Boolean>> started = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            started.add(SideBySide.onOwnThread(
                    () -> {
                        allStarted.countDown();
                        try {
                            return release.await(10, TimeUnit.SECONDS); // a call blocked on a broken connection
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return false;
                        }
                    },
                    "test-call"));
        }
        assertThat(allStarted.await(5, TimeUnit.SECONDS))
                .as("every call running at once")
                .isTrue();
        release.countDown();
        for (CompletableFuture<Boolean> f : started) {
            assertThat(f.get(5, TimeUnit.SECONDS)).isTrue();
        }
    }
}
