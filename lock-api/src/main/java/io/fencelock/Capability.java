package io.fencelock;

/**
 * What a backend guarantees or offers. The TCK runs the properties a provider's capabilities make
 * applicable and records the matrix; a capability a provider does not declare is reported as
 * "not claimed", never silently skipped.
 */
public enum Capability {
    /** Every grant carries a fencing token that obeys the token rules of the contract. */
    FENCING,
    /** Tokens keep rising across a restart of the backend (the counter is persisted before a grant returns). */
    DURABLE_TOKENS,
    /** Expiry is decided by the backend's clock only; no client clock takes part. */
    SERVER_TIME,
    /** Releases are signalled to waiters, so a hand-off costs about one round trip instead of a poll interval. */
    WAKE_ON_RELEASE,
    /** All due leases of a client are renewed in one round trip. */
    BATCH_RENEW,
    /** The token may rise on renew once per token period (the token-period rule). */
    TOKEN_PERIOD,
    /** Grants are linearizable across the backend's replicas (single-server backends are trivially so). */
    LINEARIZABLE,
    /** Free lock records can be purged without breaking token monotonicity. */
    PURGE_FREE,
    /**
     * Each grant stores its {@link LockMetadata} (owner, type, data) in the same round trip, keeps it
     * across renewals, and shows it, with the grant's server time, in {@code inspect} and {@code list}.
     */
    METADATA,
    /**
     * A renewal may give a lease a longer TTL than it was granted with ({@code Lease.renew(Duration)},
     * {@code Lease.releaseAfter}). Without it the engine refuses a longer TTL before any request (a
     * backend whose leases ride on something fixed at the grant, such as a ZooKeeper session).
     */
    EXTENDABLE_TTL,
    /**
     * Semaphores of N permits and read-write locks ({@code LockBackend.tryAcquireShared} and
     * {@code LockBackend.downgrade}): at no instant more permits held than N, readers or one writer,
     * a waiting writer's intent holding back new readers, a downgrade without a gap, and a token per
     * grant above every earlier completed grant's. Renewal and release find a lease among the name's
     * holders; {@code inspect} and {@code list} show every holder.
     */
    SHARED_LOCKS,
    /**
     * Fair waiting: a fair request is granted in the order in which waiters reached the backend
     * (a queue the backend keeps in one order: a sequence, a revision, a sorted set). Applies to the
     * fair mutex and to fair semaphores and read-write locks, so it comes with {@link #SHARED_LOCKS}.
     */
    FAIR_ORDER,
    /**
     * A mutex grant can be handed to another lease of the same client in one atomic step
     * ({@code LockBackend.handOver}): the holder's grant ends and the new lease is granted with a token
     * above every earlier one, or, when the holder's grant no longer stands, nothing changes. The engine
     * uses it when a holder releases a name a waiter of its own client waits for: one round trip per
     * hand-over instead of a release and an acquire.
     */
    HAND_OVER,
    /**
     * A release grants the mutex to the first queued waiting client in the same atomic step, so a hand-off
     * across clients costs the release alone (with {@link #WAKE_ON_RELEASE}). A refused attempt of a client
     * that waits for the name (its feed watches it) queues the client under that attempt's lease id, TTL and
     * metadata ({@code AcquireResult.queuedAs}); the release grants that lease a new token and an expiry at
     * least its TTL after that attempt (PostgreSQL: the TTL from the backend's now), and tells the client through its feed ({@code ReleaseFeed.Sink.granted}); a later attempt
     * of the client learns of it too ({@code AcquireResult.queuedGrant}). A client that stops waiting leaves
     * the queue: a {@code release} of the lease it is queued under, when that lease holds nothing, withdraws
     * its place. The engine counts the grant's validity from the queuing attempt's send time (the grant came
     * after it), and a waiter that stops waiting releases its queued lease, so a grant nobody takes never
     * stands until it expires.
     */
    GRANT_ON_RELEASE
}
