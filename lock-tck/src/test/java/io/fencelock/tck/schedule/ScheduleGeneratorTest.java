package io.fencelock.tck.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.tck.schedule.ScheduleGenerator.Config;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class ScheduleGeneratorTest {

    private final ScheduleGenerator generator = new ScheduleGenerator();

    private List<Schedule> schedules(int count) {
        return LongStream.range(0, count).mapToObj(generator::generate).toList();
    }

    @Test
    void sameSeedGivesTheSameSchedule() {
        for (long seed : new long[] {0, 1, 42, -7, Long.MAX_VALUE}) {
            assertThat(generator.generate(seed)).isEqualTo(new ScheduleGenerator().generate(seed));
            assertThat(generator.generate(seed).seed()).isEqualTo(seed);
        }
        assertThat(generator.generate(1)).isNotEqualTo(generator.generate(2));
    }

    @Test
    void defaultSchedulesRespectTheBounds() {
        Config config = Config.defaults();
        for (Schedule schedule : schedules(200)) {
            assertThat(schedule.processes()).hasSizeBetween(config.minProcesses(), config.maxProcesses());
            assertThat(schedule.lockCount()).isBetween(1, config.maxLocks());
            assertThat(schedule.estimatedDuration()).isLessThanOrEqualTo(Duration.ofSeconds(3));
            for (ProcessScript script : schedule.processes()) {
                assertThat(script.steps()).hasSizeBetween(config.minSteps(), config.maxSteps());
                assertThat(script.ttlMillis()).isBetween(config.minTtlMillis(), config.maxTtlMillis());
                assertThat(script.steps()).allSatisfy(step -> {
                    assertThat(step.lock()).isLessThan(schedule.lockCount());
                    assertThat(step.millis()).isEqualTo(step.action().isTimed() ? Math.max(1, step.millis()) : 0);
                });
            }
        }
    }

    @Test
    void otherConfigsAreRespectedToo() {
        Config config = new Config(1, 1, 3, 12, 12, 50, 60, false);
        ScheduleGenerator custom = new ScheduleGenerator(config);
        for (long seed = 0; seed < 100; seed++) {
            Schedule schedule = custom.generate(seed);
            assertThat(schedule.processes()).singleElement().satisfies(script -> {
                assertThat(script.steps()).hasSize(12);
                assertThat(script.ttlMillis()).isBetween(50L, 60L);
                assertThat(script.steps()).noneMatch(step -> step.action() == Action.PURGE);
            });
            assertThat(schedule.lockCount()).isBetween(1, 3);
            // the budget is five of the longest TTL, plus at most 1 ms per step once it is spent
            assertThat(schedule.estimatedDuration().toMillis()).isLessThanOrEqualTo(5 * 60 + 12);
        }
    }

    @Test
    void everyActionAppearsAndOnlyCrashableProcessesAbandon() {
        Set<Action> seen = EnumSet.noneOf(Action.class);
        for (Schedule schedule : schedules(50)) {
            for (ProcessScript script : schedule.processes()) {
                script.steps().forEach(step -> seen.add(step.action()));
                if (script.autoRenew()) {
                    assertThat(script.steps()).noneMatch(step -> step.action() == Action.ABANDON);
                }
            }
        }
        assertThat(seen).containsExactlyInAnyOrder(Action.values());
    }

    @Test
    void everyScheduleMixesWatchdogAndManualRenewal() {
        assertThat(schedules(50))
                .allSatisfy(schedule -> assertThat(schedule.processes())
                        .extracting(ProcessScript::autoRenew)
                        .contains(true, false));
    }

    @Test
    void holdsOftenOutlastTheTtl() {
        // expiries and watchdog renewals need holds longer than the TTL, with and without a watchdog
        long outlasting = schedules(15).stream()
                .flatMap(schedule -> schedule.processes().stream())
                .filter(script -> script.steps().stream()
                        .anyMatch(step -> step.action() == Action.HOLD && step.millis() > script.ttlMillis()))
                .map(ProcessScript::autoRenew)
                .distinct()
                .count();
        assertThat(outlasting).isEqualTo(2);
    }

    @Test
    void scheduleReadsWellInAReport() {
        Schedule schedule = new Schedule(
                7,
                2,
                List.of(
                        new ProcessScript(
                                0,
                                false,
                                300,
                                List.of(
                                        Step.acquire(0, 300),
                                        Step.of(Action.WRITE, 0),
                                        Step.hold(0, 400),
                                        Step.of(Action.ABANDON, 0))),
                        new ProcessScript(
                                1, true, 250, List.of(Step.pause(50), Step.of(Action.TRY_ACQUIRE, 1), Step.purge()))));

        assertThat(schedule.toString()).isEqualTo("""
                Schedule seed=7, locks=2, processes=2, estimated 700ms
                  p0 (ttl=300ms, manual renew): ACQUIRE(L0, wait=300ms), WRITE(L0), HOLD(L0, 400ms), ABANDON(L0)
                  p1 (ttl=250ms, autoRenew): PAUSE(50ms), TRY_ACQUIRE(L1), PURGE""");
        assertThat(schedule.estimatedDuration()).isEqualTo(Duration.ofMillis(700));
    }

    @Test
    void invalidSchedulesAreRejected() {
        assertThatThrownBy(() -> new ProcessScript(0, true, 300, List.of(Step.of(Action.ABANDON, 0))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ABANDON");
        assertThatThrownBy(() -> new Schedule(
                        1, 1, List.of(new ProcessScript(0, false, 300, List.of(Step.of(Action.WRITE, 1))))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockCount");
        assertThatThrownBy(() -> new Schedule(1, 1, List.of(new ProcessScript(1, false, 300, List.of()))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Config(3, 2, 1, 1, 1, 1, 1, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("processes");
    }
}
