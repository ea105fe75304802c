package io.fencelock.tck.schedule;

/** What one {@link Step} of a process script does. */
public enum Action {
    /** One attempt to acquire the step's lock, without waiting. */
    TRY_ACQUIRE,
    /** Acquire the step's lock, waiting up to {@code millis} for it. */
    ACQUIRE,
    /** Sleep {@code millis} while keeping what is held (with autoRenew the watchdog keeps renewing). */
    HOLD,
    /** Guarded write: if the current lease of the lock is valid, write its token to the lock's fenced resource. */
    WRITE,
    /** Manual renew of the current lease of the lock. */
    RENEW,
    /** Release the current lease of the lock. */
    RELEASE,
    /**
     * Release the previous lease of the lock again; it may have expired or been released already,
     * so this tests the owner check and idempotence of release.
     */
    RELEASE_STALE,
    /** Write with the last lease's token without checking its validity: a stale writer. */
    ZOMBIE_WRITE,
    /**
     * Drop the current lease without releasing it, like a crashed holder. Only in processes with
     * autoRenew off, so the lease really expires.
     */
    ABANDON,
    /** Ask the backend to purge records of free locks (the step's lock is ignored). */
    PURGE,
    /** Sleep {@code millis} (the step's lock is ignored). */
    PAUSE;

    /** Whether the step's {@code millis} means something for this action. */
    public boolean isTimed() {
        return this == ACQUIRE || this == HOLD || this == PAUSE;
    }

    /** Whether the step's lock index means something for this action. */
    public boolean usesLock() {
        return this != PURGE && this != PAUSE;
    }
}
