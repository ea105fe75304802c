package io.fencelock.spring;

import io.fencelock.Lease;
import java.util.Optional;

/** The lease of the {@link Exclusive} method running on this thread. */
public final class ExclusiveContext {
    private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

    private ExclusiveContext() {}

    /**
     * The lease of the innermost {@link Exclusive} method running on this thread.
     *
     * @throws IllegalStateException when no exclusive method runs on this thread
     */
    public static Lease currentLease() {
        Lease lease = CURRENT.get();
        if (lease == null) {
            throw new IllegalStateException("no @Exclusive method runs on this thread");
        }
        return lease;
    }

    /** The lease of the innermost {@link Exclusive} method running on this thread, if any. */
    public static Optional<Lease> findCurrentLease() {
        return Optional.ofNullable(CURRENT.get());
    }

    /** Makes {@code lease} current; returns the one it hides, for {@link #restore}. */
    static Lease enter(Lease lease) {
        Lease previous = CURRENT.get();
        CURRENT.set(lease);
        return previous;
    }

    static void restore(Lease previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }
}
