package io.fencelock.etcd;

import static io.fencelock.etcd.EtcdLockBackend.bytes;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.options.LeaseOption;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.HeldValue;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * How a held lock is recorded in etcd and read back: the key's value is the holder's lease id, its
 * grant time and metadata ({@link HeldValue}), and the key's create revision is its token. Owner
 * checks in transactions and the keys read as {@link LockInfo}s.
 */
final class EtcdRecords {
    private final Lease leaseClient;
    private final EtcdCalls calls;
    private final String prefix;

    EtcdRecords(Lease leaseClient, EtcdCalls calls, String prefix) {
        this.leaseClient = leaseClient;
        this.calls = calls;
        this.prefix = prefix;
    }

    /**
     * The owner check of a transaction: {@code key}'s value starts with {@code leaseId LF}
     * ({@link HeldValue}). etcd compares values only as wholes or by byte order, so it is the range
     * {@code leaseId LF < value < leaseId VT} (VT follows LF); every value has a grant time after the
     * LF, and lease ids hold no LF, so the range holds exactly the grants of {@code leaseId}. A
     * missing key fails a value compare.
     */
    static Cmp[] heldBy(ByteSequence key, String leaseId) {
        return new Cmp[] {
            new Cmp(key, Cmp.Op.GREATER, CmpTarget.value(bytes(leaseId + HeldValue.SEPARATOR))),
            new Cmp(key, Cmp.Op.LESS, CmpTarget.value(bytes(leaseId + (char) (HeldValue.SEPARATOR + 1))))
        };
    }

    /**
     * The keys as held locks, with their etcd leases' remaining TTLs (one query per distinct lease,
     * all at once). etcd has no clock API: the answer's time is this client's clock.
     */
    List<LockInfo> infos(String operation, String subject, List<KeyValue> kvs) {
        Map<Long, CompletableFuture<LeaseTimeToLiveResponse>> ttls = new HashMap<>();
        for (KeyValue v : kvs) {
            if (v.getLease() != 0) {
                ttls.computeIfAbsent(v.getLease(), id -> leaseClient.timeToLive(id, LeaseOption.DEFAULT));
            }
        }
        Map<Long, Long> seconds = new HashMap<>();
        for (Map.Entry<Long, CompletableFuture<LeaseTimeToLiveResponse>> e : ttls.entrySet()) {
            try {
                seconds.put(
                        e.getKey(),
                        calls.await(operation, subject, e.getValue()).getTTL());
            } catch (LockBackendException ex) {
                if (!EtcdLeases.leaseGone(ex)) {
                    throw ex;
                }
                seconds.put(e.getKey(), 0L);
            }
        }
        Instant now = Instant.now();
        List<LockInfo> infos = new ArrayList<>(kvs.size());
        for (KeyValue v : kvs) {
            String key = v.getKey().toString(StandardCharsets.UTF_8);
            long left = Math.max(0, seconds.getOrDefault(v.getLease(), 0L));
            HeldValue holder = HeldValue.decode(v.getValue().toString(StandardCharsets.UTF_8));
            infos.add(new LockInfo(
                    key.substring(prefix.length()),
                    true,
                    holder.leaseId(),
                    v.getCreateRevision(),
                    now.plusSeconds(left),
                    now,
                    holder.metadata(),
                    holder.heldSince()));
        }
        return infos;
    }
}
