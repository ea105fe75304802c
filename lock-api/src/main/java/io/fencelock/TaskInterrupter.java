package io.fencelock;

import java.util.concurrent.locks.ReentrantLock;

/** Interrupts a task's thread on loss of its lease, but never after the task has finished. */
final class TaskInterrupter {
    private final Thread thread;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean finished;
    private boolean interrupted;

    TaskInterrupter(Thread thread) {
        this.thread = thread;
    }

    void interrupt() {
        lock.lock();
        try {
            if (!finished) {
                interrupted = true;
                thread.interrupt();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Marks the task finished and clears the interrupt this class caused. */
    void finish() {
        lock.lock();
        try {
            finished = true;
            if (interrupted) {
                Thread.interrupted();
            }
        } finally {
            lock.unlock();
        }
    }
}
