package io.fencelock.testservers.common;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** The checks the fixtures of replicated and single-node servers share: their controls, on a counter the server keeps. */
public final class FixtureChecks {
    private FixtureChecks() {}

    /** One write to the server that returns its durable, rising counter (a revision, a zxid). */
    @FunctionalInterface
    public interface Write {
        long run() throws Exception;
    }

    /**
     * Kills and starts, pauses and resumes, stops and starts the server through {@code control}; its
     * counter must rise across each restart (the data survived), and {@code isRunning} must say so.
     */
    public static void assertControlKeepsTheData(ServerControl control, Write write) throws Exception {
        long before = write.run();
        control.kill();
        assertThat(control.isRunning()).isFalse();
        control.start();
        assertThat(write.run()).as("counter after SIGKILL + start").isGreaterThan(before);
        control.pause();
        assertThat(control.isRunning()).isTrue();
        control.resume();
        control.stop();
        assertThat(control.isRunning()).isFalse();
        control.start();
        assertThat(write.run()).isGreaterThan(before + 1);
    }

    /**
     * Kills the leader of {@code members}: the others elect a new one and take writes; then the old
     * leader starts again and the set is healthy with a leader.
     */
    public static Failover assertTheLeadersLossIsSurvived(ReplicaSetControl members, Write write) throws Exception {
        ServerControl leader = members.leader().orElseThrow();
        ServerControl follower = members.follower().orElseThrow();
        assertThat(follower).isNotSameAs(leader);
        assertThat(members.members()).contains(leader, follower);
        long before = write.run();
        leader.kill();
        long killed = System.nanoTime();
        await(() -> members.leader().filter(l -> l != leader).isPresent(), Duration.ofSeconds(30));
        System.out.println(
                "[fixture] " + members + ": a new leader after " + (System.nanoTime() - killed) / 1_000_000 + " ms");
        assertThat(write.run())
                .as("the members left elect a leader and take writes")
                .isGreaterThan(before);
        leader.start();
        members.awaitHealthy(Duration.ofSeconds(30)); // the killed member is back and agrees on the leader
        assertThat(leader.isRunning()).isTrue();
        assertThat(members.leader()).isPresent();
        return new Failover(before, leader);
    }

    /**
     * @param before   the counter before the leader was killed
     * @param rejoined the member that led, was killed and started again
     */
    public record Failover(long before, ServerControl rejoined) {}

    /** Polls {@code condition} until it holds; fails after {@code timeout}. */
    public static void await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end)
                    .as("condition within " + timeout)
                    .isNegative();
            Thread.sleep(20); // polling the members
        }
    }
}
