package io.fencelock.testservers.common;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The members of a cluster a fixture runs itself, with who leads, a follower and waiting until the
 * cluster serves: what every replicated fixture shares. The fixture says only how it tells the leader
 * and whether the members serve.
 *
 * @param <P> the fixture's member process
 */
public final class ReplicaSet<P extends ServerProcess> implements ReplicaSetControl {
    private final String what;
    private final List<P> processes;
    private final Supplier<Optional<P>> leader;
    private final BooleanSupplier serving;

    /**
     * @param what      the cluster, for messages ("ZooKeeper 127.0.0.1:1,127.0.0.1:2")
     * @param processes the members, in a fixed order
     * @param leader    the member the running members agree leads, empty while they do not
     * @param serving   whether the running members serve requests (with one leader, where there are several)
     */
    public ReplicaSet(String what, List<P> processes, Supplier<Optional<P>> leader, BooleanSupplier serving) {
        this.what = what;
        this.processes = List.copyOf(processes);
        this.leader = leader;
        this.serving = serving;
    }

    /** The member processes, in a fixed order. */
    public List<P> processes() {
        return processes;
    }

    @Override
    public List<ServerControl> members() {
        return List.copyOf(processes);
    }

    /** The member the running members agree leads, or empty during an election or without quorum. */
    public Optional<P> leaderProcess() {
        return leader.get();
    }

    /** A running member that does not lead, for crashing a follower. */
    public Optional<P> followerProcess() {
        return leaderProcess()
                .flatMap(l ->
                        processes.stream().filter(p -> p != l && p.isRunning()).findFirst());
    }

    @Override
    public Optional<ServerControl> leader() {
        return leaderProcess().map(ServerControl.class::cast);
    }

    @Override
    public Optional<ServerControl> follower() {
        return followerProcess().map(ServerControl.class::cast);
    }

    /**
     * Polls until the members serve; throws when {@code timeout} passes first, or at once when a member
     * exited by itself (a cluster short of a member is not the one the fixture started, though the
     * others may serve without it).
     */
    @Override
    public void awaitHealthy(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (P p : processes) {
                OptionalInt exit = p.exitedByItself();
                if (exit.isPresent()) {
                    throw new IllegalStateException(what + ": " + p + " exited by itself with code " + exit.getAsInt()
                            + "; its log's last lines:\n" + p.logTail());
                }
            }
            if (serving.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(what + " not serving with one leader after " + timeout);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(20); // polling the members' status
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what + " to serve", e);
            }
        }
    }

    @Override
    public String toString() {
        return "the members of " + what;
    }
}
