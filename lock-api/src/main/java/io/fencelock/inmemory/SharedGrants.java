package io.fencelock.inmemory;

import io.fencelock.LockHolder;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * The shared grants of one name in the in-memory store: holders (semaphore permits, readers, a
 * writer, a fair mutex) and waiters (a waiting writer's intent, a fair waiter's queue place, in the
 * order they first arrived). Every method runs under the store's lock; times are the store clock's
 * nanoseconds, and anything past its expiry counts as gone.
 */
final class SharedGrants {
    /** One live grant. */
    static final class Holder {
        final String leaseId;
        LockMode mode;
        final int permits;
        long token;
        long tokenIssuedAt;
        final long grantedAt;
        long expiresAt;
        final LockMetadata metadata;

        Holder(String leaseId, LockMode mode, int permits, long token, long now, long expiresAt, LockMetadata md) {
            this.leaseId = leaseId;
            this.mode = mode;
            this.permits = permits;
            this.token = token;
            this.tokenIssuedAt = now;
            this.grantedAt = now;
            this.expiresAt = expiresAt;
            this.metadata = md;
        }
    }

    /** A request's outcome: the new holder, or (refused) the time until the earliest expiry that may change it. */
    record Outcome(Holder granted, Duration remaining) {}

    /** A waiting acquire that left something behind: a writer's intent and/or a fair queue place. */
    private record Waiter(LockMode mode, boolean queued, long expiresAt) {}

    /** The name's kind while anything lives: PERMITS (with {@link #limit}), READ for read-write, or EXCLUSIVE. */
    private LockMode kind;

    private int limit;
    private final LinkedHashMap<String, Holder> holders = new LinkedHashMap<>();
    /** In order of first arrival: a waiter keeps its place when it comes again. */
    private final LinkedHashMap<String, Waiter> waiters = new LinkedHashMap<>();

    /** Drops what has expired; returns whether anything still lives (then the kind stands). */
    boolean live(long now) {
        holders.values().removeIf(h -> h.expiresAt - now <= 0);
        waiters.values().removeIf(w -> w.expiresAt - now <= 0);
        return !holders.isEmpty() || !waiters.isEmpty();
    }

    /** The kind a request asks the name to be. */
    static LockMode kindOf(LockMode mode) {
        return mode == LockMode.WRITE ? LockMode.READ : mode;
    }

    static String describe(LockMode kind, int limit) {
        return switch (kind) {
            case PERMITS -> "a semaphore of " + limit + " permits";
            case READ, WRITE -> "a read-write lock";
            case EXCLUSIVE -> "a mutex";
        };
    }

    /** Refuses a request of another kind (or another N) while anything of this name lives. */
    void requireKind(String name, LockMode requestedKind, int requestedLimit, long now) {
        if (live(now) && (kind != requestedKind || limit != requestedLimit)) {
            throw new IllegalArgumentException("lock '" + name + "' is " + describe(kind, limit) + "; a request for "
                    + describe(requestedKind, requestedLimit) + " is refused");
        }
    }

    /** The time until the earliest live holder's expiry, or null when none holds. */
    Duration holderRemaining(long now) {
        live(now);
        return holders.values().stream()
                .map(h -> Duration.ofNanos(h.expiresAt - now))
                .min(Duration::compareTo)
                .orElse(null);
    }

    int limit() {
        return limit;
    }

    /**
     * Grants {@code request} when the holders leave room, no writer's intent holds back a reader, and
     * (fair) no live queue place comes before the request's; else records the waiter (when it waits)
     * and returns the time until the earliest expiry that may change the answer. {@code mutexHeld}: an
     * ordinary mutex holder's remaining time (a fair mutex request then waits in line), or null.
     */
    Outcome tryGrant(
            String leaseId,
            long ttlNanos,
            SharedRequest request,
            LockMetadata md,
            long now,
            LongSupplier nextToken,
            Duration mutexHeld) {
        live(now);
        LockMode mode = request.mode();
        String me = request.waiterId();
        boolean room = mutexHeld == null
                && switch (mode) {
                    case PERMITS -> permitsHeld() + request.permits() <= request.limit();
                    case READ ->
                        holders.values().stream().noneMatch(h -> h.mode == LockMode.WRITE) && !writerIntentAhead(me);
                    case WRITE, EXCLUSIVE -> holders.isEmpty();
                };
        if (room && request.fair()) {
            room = !queuedAhead(me);
        }
        if (room) {
            kind = kindOf(mode);
            limit = request.limit();
            waiters.remove(me);
            Holder h = new Holder(leaseId, mode, request.permits(), nextToken.getAsLong(), now, now + ttlNanos, md);
            holders.put(leaseId, h);
            return new Outcome(h, null);
        }
        if (request.waits() && (mode == LockMode.WRITE || request.fair())) {
            Waiter before = waiters.get(me);
            kind = kindOf(mode);
            limit = request.limit();
            // put on an existing key keeps its place in the order
            waiters.put(me, new Waiter(mode, request.fair() || before != null && before.queued(), now + ttlNanos));
        }
        long soonest = mutexHeld == null ? Long.MAX_VALUE : mutexHeld.toNanos();
        for (Holder h : holders.values()) {
            soonest = Math.min(soonest, h.expiresAt - now);
        }
        for (Waiter w : waiters.values()) {
            soonest = Math.min(soonest, w.expiresAt - now);
        }
        return new Outcome(null, soonest == Long.MAX_VALUE ? null : Duration.ofNanos(soonest));
    }

    private int permitsHeld() {
        int sum = 0;
        for (Holder h : holders.values()) {
            sum += h.permits;
        }
        return sum;
    }

    /** A live writer's intent that a reader must wait behind: any but one queued after the reader's own place. */
    private boolean writerIntentAhead(String me) {
        boolean passedMe = false;
        for (var e : waiters.entrySet()) {
            if (e.getKey().equals(me)) {
                passedMe = true;
            } else if (e.getValue().mode() == LockMode.WRITE
                    && !(passedMe && e.getValue().queued())) {
                return true;
            }
        }
        return false;
    }

    /** Whether a live queue place of another waiter comes before {@code me}'s (or exists, when {@code me} has none). */
    private boolean queuedAhead(String me) {
        for (var e : waiters.entrySet()) {
            if (e.getKey().equals(me)) {
                return false;
            }
            if (e.getValue().queued()) {
                return true;
            }
        }
        return false;
    }

    /** The live holder with this lease id, or null. */
    Holder holder(String leaseId, long now) {
        live(now);
        return holders.get(leaseId);
    }

    /** Removes the holder (true) or the waiter (false) with this id. */
    boolean remove(String id, long now) {
        live(now);
        if (holders.remove(id) != null) {
            return true;
        }
        waiters.remove(id);
        return false;
    }

    /** Whether a waiter with this id stands (its withdrawal may let readers in: worth a signal). */
    boolean isWaiter(String id) {
        return waiters.containsKey(id);
    }

    /** Every live holder, for inspect and list, oldest grant first. */
    List<LockHolder> holders(long now, LongFunction<Instant> wall) {
        live(now);
        List<LockHolder> out = new ArrayList<>(holders.size());
        for (Holder h : holders.values()) {
            out.add(new LockHolder(
                    h.leaseId,
                    h.mode,
                    h.permits,
                    h.token,
                    wall.apply(h.expiresAt),
                    h.metadata,
                    wall.apply(h.grantedAt)));
        }
        return out;
    }

    /** The kind shown for this name ({@link LockMode#EXCLUSIVE} when nothing shared lives). */
    LockMode shownKind(long now) {
        return live(now) ? kind : LockMode.EXCLUSIVE;
    }
}
