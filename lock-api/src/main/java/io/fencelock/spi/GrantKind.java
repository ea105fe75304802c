package io.fencelock.spi;

/**
 * Which call granted a lease, as a renewal or release tells the backend: one that keeps the mutex's
 * holder and shared grants in different places then looks in that one place only. A lease keeps its
 * kind for its whole life (a downgraded writer is still a shared grant).
 */
public enum GrantKind {
    /** {@link LockBackend#tryAcquire} or {@link LockBackend#handOver}: the mutex's holder. */
    MUTEX,
    /** {@link LockBackend#tryAcquireShared}: a reader, writer, permit holder or fair mutex's holder. */
    SHARED,
    /** Not said (a caller that does not track it, or a waiter's id): the backend looks in both places. */
    EITHER;

    /** Whether the lease may be the mutex's holder. */
    public boolean mayBeMutex() {
        return this != SHARED;
    }

    /** Whether the lease may be a shared grant (or, for {@link #EITHER}, a waiter's id). */
    public boolean mayBeShared() {
        return this != MUTEX;
    }
}
