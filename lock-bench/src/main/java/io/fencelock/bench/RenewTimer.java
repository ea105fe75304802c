package io.fencelock.bench;

import io.fencelock.spi.LockBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Times the watchdog's own renew calls, so the renewal workload measures a tick as it happens
 * instead of sending a second batch of the same rows beside it (which can deadlock on PostgreSQL).
 * A dynamic proxy, so every other call passes through untouched; round trips are counted by the
 * TCK's {@code InstrumentedBackend} underneath.
 */
final class RenewTimer {
    /** One renew call: how many leases, how long. */
    record Call(int size, long nanos) {}

    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final LockBackend timed;

    RenewTimer(LockBackend delegate) {
        this.timed = (LockBackend) Proxy.newProxyInstance(
                LockBackend.class.getClassLoader(), new Class<?>[] {LockBackend.class}, (proxy, method, args) -> {
                    long start = System.nanoTime();
                    try {
                        return method.invoke(delegate, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (method.getName().equals("renew")) {
                            calls.add(new Call(((List<?>) args[0]).size(), System.nanoTime() - start));
                        }
                    }
                });
    }

    /** The backend to hand to the client. */
    LockBackend backend() {
        return timed;
    }

    List<Call> calls() {
        return List.copyOf(calls);
    }
}
