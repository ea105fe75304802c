package io.fencelock.spi;

import java.time.Duration;

/**
 * One lease to renew.
 *
 * @param tokenPeriod when not null, the backend issues a new (higher) token on this renewal if the
 *                    current token is at least this old (the token-period rule); when null the
 *                    token stays the same for the whole lease
 */
public record RenewRequest(String name, String leaseId, Duration ttl, Duration tokenPeriod) {}
