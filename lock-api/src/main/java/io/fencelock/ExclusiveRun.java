package io.fencelock;

import java.util.Optional;

/** Runs a task under a held lease: a lost lease interrupts the task's thread and surfaces as {@link LeaseLostException}. */
final class ExclusiveRun {
    private ExclusiveRun() {}

    /** Runs {@code task} on this thread and releases {@code lease} when it ends; returns the task's result. */
    static <T> T run(ManagedLease lease, LeaseTask<T> task) throws Exception {
        return run(lease, task, lease::close);
    }

    /** As {@link #run(ManagedLease, LeaseTask)}, ending with {@code end} instead of releasing (a reentrant hold's release). */
    static <T> T run(ManagedLease lease, LeaseTask<T> task, Runnable end) throws Exception {
        TaskInterrupter interrupter = new TaskInterrupter(Thread.currentThread());
        lease.whenLost(interrupter::interrupt);
        T result = null;
        Exception failure = null;
        try {
            result = task.run(lease);
        } catch (Exception e) {
            failure = e;
        } finally {
            interrupter.finish();
            end.run();
        }
        Optional<LeaseLoss> loss = lease.loss();
        if (loss.isPresent()) {
            throw new LeaseLostException(loss.get(), failure);
        }
        if (failure != null) {
            throw failure;
        }
        return result;
    }
}
