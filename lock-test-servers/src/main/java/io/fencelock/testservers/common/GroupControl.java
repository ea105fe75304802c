package io.fencelock.testservers.common;

import io.fencelock.tck.fixture.ServerControl;
import java.util.List;

/**
 * One {@link ServerControl} over every member of a cluster this fixture runs: each call acts on all
 * members, in order, and {@link #start()} returns only once the cluster as a whole serves again (the
 * {@code awaitServing} check), since a member that is up is not yet a cluster that answers.
 */
public final class GroupControl implements ServerControl {
    private final String what;
    private final List<? extends ServerControl> members;
    private final Runnable awaitServing;

    public GroupControl(String what, List<? extends ServerControl> members, Runnable awaitServing) {
        this.what = what;
        this.members = List.copyOf(members);
        this.awaitServing = awaitServing;
    }

    @Override
    public void stop() {
        each(ServerControl::stop);
    }

    @Override
    public void kill() {
        each(ServerControl::kill);
    }

    @Override
    public void pause() {
        each(ServerControl::pause);
    }

    @Override
    public void resume() {
        each(ServerControl::resume);
    }

    /** Starts the members that are not running (a running member is left alone), then waits for the cluster. */
    @Override
    public void start() {
        each(ServerControl::start);
        awaitServing.run();
    }

    /** Whether every member runs: a cluster with a member down is not the cluster the fixture started. */
    @Override
    public boolean isRunning() {
        return members.stream().allMatch(ServerControl::isRunning);
    }

    /** Acts on every member even when one fails, then throws the first failure (with the others suppressed). */
    private void each(java.util.function.Consumer<ServerControl> action) {
        RuntimeException failure = null;
        for (ServerControl member : members) {
            try {
                action.accept(member);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "all " + members.size() + " members of " + what;
    }
}
