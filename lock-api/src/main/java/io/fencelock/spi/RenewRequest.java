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
public record RenewRequest(String name, String leaseId, Duration ttl, Duration tokenPeriod, GrantKind grant) {

    public RenewRequest {
        Objects.requireNonNull(grant, "grant");
    }

    /** A renewal whose grant is not said ({@link GrantKind#EITHER}). */
    public RenewRequest(String name, String leaseId, Duration ttl, Duration tokenPeriod) {
        this(name, leaseId, ttl, tokenPeriod, GrantKind.EITHER);
    }
}
