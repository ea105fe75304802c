package io.fencelock.redis;

import static io.fencelock.redis.CommandConnection.eval;
import static io.fencelock.redis.Scripts.millis;
import static io.fencelock.redis.Scripts.number;

import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.HeldValue;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Semaphores, read-write locks and fair waiting on Redis ({@code SHARED_LOCKS}, {@code FAIR_ORDER}):
 * the Java side of {@link SharedScripts}, one script call per operation, and the reading of a name's
 * record as the inspect script returns it (a mutex's or a shared name's). Renewal and release go
 * through the mutex's scripts, which find a lease among the shared grants when the lock key holds
 * the shared marker.
 */
final class RedisSharedLocks {
    private final RedisLockBackend backend;
    private final KeyLayout keys;
    private final CommandConnection connection;

    RedisSharedLocks(RedisLockBackend backend, KeyLayout keys, CommandConnection connection) {
        this.backend = backend;
        this.keys = keys;
        this.connection = connection;
    }

    AcquireResult tryAcquire(String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        requireId(leaseId);
        requireId(request.waiterId());
        List<Object> r = backend.await(
                "tryAcquireShared of '",
                name,
                eval(
                        connection.current(),
                        SharedScripts.ACQUIRE,
                        ScriptOutputType.MULTI,
                        keys.keysOf(name),
                        leaseId,
                        Long.toString(millis(ttl)),
                        request.mode().name(),
                        Integer.toString(request.permits()),
                        Integer.toString(request.limit()),
                        request.waiterId(),
                        request.waits() ? "1" : "0",
                        request.fair() ? "1" : "0",
                        HeldValue.json(metadata)));
        return acquired(name, r, request.mode() == LockMode.WRITE ? LockMode.READ : request.mode(), request.limit());
    }

    RenewResult downgrade(String name, String leaseId, Duration ttl) {
        requireId(leaseId);
        List<Object> r = backend.await(
                "downgrade of '",
                name,
                eval(
                        connection.current(),
                        SharedScripts.DOWNGRADE,
                        ScriptOutputType.MULTI,
                        keys.keysOf(name),
                        leaseId,
                        Long.toString(millis(ttl)),
                        keys.channel,
                        name));
        return number(r, 0) == 1
                ? RenewResult.renewed(number(r, 1), Instant.ofEpochMilli(number(r, 2)))
                : RenewResult.rejected();
    }

    /**
     * An acquire script's reply: {1, token, expiry ms}, {0, time left ms (negative: unknown), now ms},
     * or {2, kind, limit} when the name is another kind of lock than the request's {@code kind} of
     * {@code limit}.
     */
    static AcquireResult acquired(String name, List<Object> r, LockMode kind, int limit) {
        long verdict = number(r, 0);
        if (verdict == 1) {
            return AcquireResult.granted(number(r, 1), Instant.ofEpochMilli(number(r, 2)));
        }
        if (verdict == 2) {
            throw new IllegalArgumentException("lock '" + name + "' is "
                    + describe(LockMode.valueOf((String) r.get(1)), (int) number(r, 2)) + "; a request for "
                    + describe(kind, limit) + " is refused");
        }
        long left = number(r, 1);
        return AcquireResult.held(left >= 0 ? Duration.ofMillis(left) : null);
    }

    private static String describe(LockMode kind, int limit) {
        return switch (kind) {
            case PERMITS -> "a semaphore of " + limit + " permits";
            case READ, WRITE -> "a read-write lock";
            case EXCLUSIVE -> "a mutex";
        };
    }

    /**
     * {@code name}'s record from the inspect script's reply, starting at {@code at}: the lock's value,
     * its expiry, the last token, whether anything is known (else null), and the shared grants.
     */
    static LockInfo info(String name, List<Object> r, int at, Instant now) {
        if (number(r, at + 3) == 0) {
            return null; // no lock and no token record: the backend knows nothing of this name
        }
        long token = number(r, at + 2);
        List<?> shared = (List<?>) r.get(at + 4);
        if (!shared.isEmpty()) {
            List<LockHolder> holders = new ArrayList<>();
            for (int i = 2; i + 1 < shared.size(); i += 2) {
                holders.add(holder((String) shared.get(i), (String) shared.get(i + 1)));
            }
            holders.sort(Comparator.comparingLong(LockHolder::token));
            if (!holders.isEmpty()) {
                LockHolder latest = holders.get(holders.size() - 1);
                return new LockInfo(
                        name,
                        true,
                        latest.leaseId(),
                        token,
                        latest.expiresAt(),
                        now,
                        latest.metadata(),
                        latest.heldSince(),
                        LockMode.valueOf((String) shared.get(0)),
                        ((Long) shared.get(1)).intValue(),
                        holders);
            }
            return new LockInfo(name, false, null, token, null, now, LockMetadata.NONE, null);
        }
        String value = (String) r.get(at);
        HeldValue holder = value == null || value.isEmpty() ? null : HeldValue.decode(value);
        long expiry = number(r, at + 1);
        return new LockInfo(
                name,
                holder != null,
                holder != null ? holder.leaseId() : null,
                token,
                holder != null && expiry > 0 ? Instant.ofEpochMilli(expiry) : null,
                now,
                holder != null ? holder.metadata() : LockMetadata.NONE,
                holder != null ? holder.heldSince() : null);
    }

    /** A grant's value: {@code MODE permits token expiry grantMs issuedUs LF metadata} (SharedScripts). */
    private static LockHolder holder(String leaseId, String value) {
        int end = value.indexOf(HeldValue.SEPARATOR);
        String[] f = value.substring(0, end).split(" ");
        return new LockHolder(
                leaseId,
                LockMode.valueOf(f[0]),
                Integer.parseInt(f[1]),
                Long.parseLong(f[2]),
                Instant.ofEpochMilli(Long.parseLong(f[3])),
                MetadataCodec.decode(value.substring(end + 1)),
                Instant.ofEpochMilli(Long.parseLong(f[4])));
    }

    /**
     * A lease or waiter id, checked before any I/O: as {@link HeldValue#requireLeaseId}, and not empty,
     * for an empty id would pass the owner check against the shared marker (a lone line feed).
     */
    static String requireId(String id) {
        if (HeldValue.requireLeaseId(id).isEmpty()) {
            throw new IllegalArgumentException("lease id is empty; a lease or waiter id needs at least one character");
        }
        return id;
    }
}
