package io.fencelock.spi;

import io.fencelock.LockMode;
import java.util.Objects;

/**
 * What a shared grant asks for ({@link LockBackend#tryAcquireShared}), validated.
 *
 * @param mode     how the grant holds the name; {@link LockMode#EXCLUSIVE} only for a fair mutex
 * @param permits  the permits it takes: {@code 1 <= permits <= limit} for {@link LockMode#PERMITS}, else 1
 * @param limit    the semaphore's N for {@link LockMode#PERMITS} (recorded with the name; a live name
 *                 of another N refuses the request), else 0
 * @param waiterId the waiting acquire's id, the same for all its attempts (never a lease id): a
 *                 waiting writer's intent and a fair waiter's queue place are kept under it, and
 *                 {@link LockBackend#release} of it withdraws them
 * @param waits    whether the call waits: only then does a refused writer record its intent, or a
 *                 refused fair request take a queue place ({@code tryAcquire} leaves nothing behind)
 * @param fair     whether grants follow the order in which waiters reached the backend (only with
 *                 {@link io.fencelock.Capability#FAIR_ORDER})
 */
public record SharedRequest(LockMode mode, int permits, int limit, String waiterId, boolean waits, boolean fair) {
    public SharedRequest {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(waiterId, "waiterId");
        if (mode == LockMode.PERMITS) {
            if (limit < 1) {
                throw new IllegalArgumentException("permit limit " + limit + " must be at least 1");
            }
            if (permits < 1 || permits > limit) {
                throw new IllegalArgumentException(
                        "permits " + permits + " must be between 1 and the semaphore's " + limit + " permits");
            }
        } else if (permits != 1 || limit != 0) {
            throw new IllegalArgumentException(
                    "a " + mode + " request takes 1 permit of no limit, got " + permits + " of " + limit);
        }
        if (mode == LockMode.EXCLUSIVE && !fair) {
            throw new IllegalArgumentException("an EXCLUSIVE shared request is the fair mutex: fair must be set");
        }
    }
}
