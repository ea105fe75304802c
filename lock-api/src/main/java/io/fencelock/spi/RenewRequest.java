package io.fencelock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One lease to renew.
 *
 * @param tokenPeriod when not null, the backend issues a new (higher) token on this renewal if the
 *                    current token is at least this old (the token-period rule); when null the
 *                    token stays the same for the whole lease
 * @param grant       which call granted the lease: a backend that keeps the mutex's holder and shared
 *                    grants in different places looks for the lease in that one place only
 */
public record RenewRequest(String name, String leaseId, Duration ttl, Duration tokenPeriod, Grant grant) {

    /** Which call granted a lease; a lease keeps its kind for its whole life (a downgrade stays shared). */
    public enum Grant {
        /** {@link LockBackend#tryAcquire} or {@link LockBackend#handOver}: the mutex's holder. */
        MUTEX,
        /** {@link LockBackend#tryAcquireShared}: a reader, writer, permit holder or fair mutex's holder. */
        SHARED,
        /** Not said (a caller that does not track it): the backend looks for the lease as either. */
        EITHER
    }

    public RenewRequest {
        Objects.requireNonNull(grant, "grant");
    }

    /** A renewal whose grant is not said ({@link Grant#EITHER}). */
    public RenewRequest(String name, String leaseId, Duration ttl, Duration tokenPeriod) {
        this(name, leaseId, ttl, tokenPeriod, Grant.EITHER);
    }

    /** Whether the lease may be the mutex's holder. */
    public boolean mayBeMutex() {
        return grant != Grant.SHARED;
    }

    /** Whether the lease may be a shared grant. */
    public boolean mayBeShared() {
        return grant != Grant.MUTEX;
    }
}
