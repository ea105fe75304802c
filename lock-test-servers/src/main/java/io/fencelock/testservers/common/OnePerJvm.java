package io.fencelock.testservers.common;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The shared server of one backend: created on first use by whichever test asks first, then
 * handed to every later caller. A failure to find one is remembered and thrown again, so a JVM
 * searches once (and every test of a run without the server fails, or is skipped, alike).
 */
public final class OnePerJvm<T> {
    private final ReentrantLock lock = new ReentrantLock();
    private volatile T value;
    private Throwable failure; // guarded by lock

    public T get(Supplier<T> create) {
        T found = value;
        if (found != null) {
            return found;
        }
        lock.lock();
        try {
            if (value == null) {
                if (failure instanceof Error error) {
                    throw error;
                }
                if (failure != null) {
                    throw (RuntimeException) failure;
                }
                try {
                    value = create.get();
                } catch (RuntimeException | Error e) {
                    failure = e;
                    throw e;
                }
            }
            return value;
        } finally {
            lock.unlock();
        }
    }
}
