package io.fencelock.tck.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class ShrinkerTest {

    private static final Predicate<Schedule> HAS_STALE_RELEASE = schedule -> schedule.lockCount() >= 1
            && schedule.processes().stream()
                    .anyMatch(
                            script -> script.steps().stream().anyMatch(step -> step.action() == Action.RELEASE_STALE));

    /** A generated schedule with several processes and locks that fails the predicate. */
    private static Schedule bigScheduleThatFails(Predicate<Schedule> fails) {
        ScheduleGenerator generator = new ScheduleGenerator();
        return LongStream.range(0, 1_000)
                .mapToObj(generator::generate)
                .filter(schedule -> schedule.processes().size() >= 3 && schedule.lockCount() == 2)
                .filter(fails)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void shrinksToTheOneStepThatMatters() {
        Schedule failing = bigScheduleThatFails(HAS_STALE_RELEASE);

        Schedule shrunk = Shrinker.shrink(failing, HAS_STALE_RELEASE, 10_000);

        assertThat(shrunk.seed()).isEqualTo(failing.seed());
        assertThat(shrunk.lockCount()).isEqualTo(1);
        assertThat(shrunk.processes()).singleElement().satisfies(script -> {
            assertThat(script.process()).isZero();
            assertThat(script.steps()).containsExactly(Step.of(Action.RELEASE_STALE, 0));
        });
    }

    @Test
    void halvesSleepsAsFarAsTheFailureAllows() {
        Predicate<Schedule> longHold = schedule -> schedule.processes().stream()
                .anyMatch(script ->
                        script.steps().stream().anyMatch(step -> step.action() == Action.HOLD && step.millis() >= 100));
        Schedule failing = new Schedule(
                3,
                1,
                List.of(new ProcessScript(
                        0,
                        false,
                        300,
                        List.of(Step.acquire(0, 500), Step.hold(0, 1_000), Step.of(Action.RELEASE, 0)))));

        Schedule shrunk = Shrinker.shrink(failing, longHold, 1_000);

        assertThat(shrunk.processes().get(0).steps()).singleElement().satisfies(step -> {
            assertThat(step.action()).isEqualTo(Action.HOLD);
            assertThat(step.millis()).isBetween(100L, 199L);
        });
    }

    @Test
    void mergesLocksByRemappingIndices() {
        // fails while one process writes twice to the same lock: merging locks 1 and 2 away keeps that
        Predicate<Schedule> twoWritesOnOneLock = schedule -> schedule.processes().stream()
                .anyMatch(script -> script.steps().stream()
                                        .filter(step -> step.action() == Action.WRITE)
                                        .map(Step::lock)
                                        .distinct()
                                        .count()
                                == 1
                        && script.steps().stream()
                                        .filter(step -> step.action() == Action.WRITE)
                                        .count()
                                == 2);
        Schedule failing = new Schedule(
                5,
                3,
                List.of(new ProcessScript(
                        0,
                        true,
                        300,
                        List.of(Step.of(Action.WRITE, 2), Step.of(Action.RENEW, 1), Step.of(Action.WRITE, 2)))));

        Schedule shrunk = Shrinker.shrink(failing, twoWritesOnOneLock, 1_000);

        assertThat(shrunk.lockCount()).isEqualTo(1);
        assertThat(shrunk.processes().get(0).steps())
                .containsExactly(Step.of(Action.WRITE, 0), Step.of(Action.WRITE, 0));
    }

    @Test
    void neverAsksMoreThanMaxAttempts() {
        Schedule failing = bigScheduleThatFails(HAS_STALE_RELEASE);
        AtomicInteger asked = new AtomicInteger();

        Schedule shrunk = Shrinker.shrink(
                failing,
                schedule -> {
                    asked.incrementAndGet();
                    return HAS_STALE_RELEASE.test(schedule);
                },
                5);

        assertThat(asked).hasValue(5);
        assertThat(HAS_STALE_RELEASE).accepts(shrunk);
        assertThat(shrunk.stepCount()).isLessThanOrEqualTo(failing.stepCount());
    }

    @Test
    void returnsTheOriginalWhenNothingSmallerFails() {
        Schedule failing = bigScheduleThatFails(HAS_STALE_RELEASE);
        AtomicInteger asked = new AtomicInteger();

        Schedule shrunk = Shrinker.shrink(
                failing,
                schedule -> {
                    asked.incrementAndGet();
                    return false;
                },
                100_000);

        assertThat(shrunk).isSameAs(failing);
        // one full pass: every process, lock, step and timed step tried once
        assertThat(asked.get()).isPositive().isLessThan(100_000);
    }
}
