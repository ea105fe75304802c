package io.fencelock;

/**
 * Why a lease stopped being held without being released.
 *
 * @param lease  the lost lease
 * @param reason what happened
 * @param cause  the last backend failure when renewals failed, else {@code null}
 */
public record LeaseLoss(Lease lease, Reason reason, Throwable cause) {
    public enum Reason {
        /** The local validity deadline passed without a successful renewal (backend unreachable or too slow). */
        EXPIRED,
        /** The backend refused a renewal: the lease had expired there or another lease holds the lock. */
        REJECTED
    }
}
