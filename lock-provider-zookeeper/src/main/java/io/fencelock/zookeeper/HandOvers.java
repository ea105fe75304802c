package io.fencelock.zookeeper;

import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.zookeeper.Holds.Hold;
import io.fencelock.zookeeper.ZooKeeperCalls.Reply;
import java.time.Duration;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;

/**
 * The hand-over of a held mutex to a new lease ({@code LockBackend.handOver}): the holder's znode is read
 * as a release reads it, then one {@code multi} deletes it with the version read and creates the new
 * lease's ephemeral znode in the session of the new TTL's class. The name is never free in between (no
 * other create can come between the two ops), and the new znode's czxid, the multi's zxid, is above every
 * token the name had, as for any create.
 *
 * <p>Why a read first, as for a release: a {@code multi} can compare only data versions, 0 for every lock
 * znode, so a {@code delete} by version would also take a znode another client created after the holder's
 * was force-released; the read ties it to the holder's own (ephemeral owner, lease id, czxid). That is two
 * round trips where a release and the waiter's acquire are three.
 *
 * <p>What other clients' waiters see: the {@code multi}'s delete fires their persistent watch
 * ({@code NodeDeleted}, then {@code NodeCreated}) like a release; each wakes, is refused (the znode is the
 * new holder's) and waits on, its watch still in place for the new holder's release.
 */
final class HandOvers {
    private static final String OPERATION = "handOver of '";

    private final Sessions sessions;
    private final Znodes znodes;
    private final ZooKeeperCalls calls;
    private final Holds holds;
    private final LockReads reads;

    HandOvers(Sessions sessions, Znodes znodes, ZooKeeperCalls calls, Holds holds, LockReads reads) {
        this.sessions = sessions;
        this.znodes = znodes;
        this.calls = calls;
        this.holds = holds;
        this.reads = reads;
    }

    AcquireResult handOver(String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        Session s = znodes.ensureBase(sessions.forTtl(ttl));
        if (holds.get(leaseId) != null) {
            return AcquireResult.held(null); // a retry of a lease id this backend knows: refused, as the SPI allows
        }
        Hold known = holds.get(fromLeaseId);
        Hold from = null; // stays null for a lease granted elsewhere
        if (known != null && known.name().equals(name)) {
            // taken out first, as a release does, so that its TTL's give-back cannot delete by version after the multi
            from = holds.take(fromLeaseId, name, true);
            if (from == null) {
                return AcquireResult.held(null); // past its TTL (given back at it), its session ended, or released
            }
        }
        int version;
        try {
            version = from != null
                    ? calls.await(OPERATION, name, reads.versionIfOwn(from, OPERATION))
                    : foreignVersion(name, fromLeaseId);
        } catch (RuntimeException e) {
            unsure(from);
            throw e;
        }
        if (version < 0) {
            return AcquireResult.held(null); // its znode is gone or another grant's; ZooKeeper does not tell a deadline
        }
        // begun just before the multi, as an acquire before its create: its give-back reads after the multi
        Hold pending = holds.begin(name, leaseId, s, ttl);
        if (pending == null) {
            unsure(from);
            return AcquireResult.held(null); // the same lease id raced in: nothing was sent
        }
        return swap(name, from, pending, version, metadata);
    }

    /**
     * A holder taken out whose znode may still be its own: it comes back uncertain, settled (read, then deleted
     * only if its own) at its due time or by the engine's release.
     */
    private void unsure(Hold from) {
        if (from != null) {
            holds.unsure(from);
        }
    }

    /** The version of the znode of a lease this backend did not grant, when it holds that lease id; -1 otherwise. */
    private int foreignVersion(String name, String fromLeaseId) {
        Reply<byte[]> read = reads.read(sessions.control(), OPERATION, name);
        return read != null
                        && fromLeaseId.equals(Znodes.leaseIdOf(read.value()))
                        && !sessions.isOwn(read.stat().getEphemeralOwner()) // being given back here
                ? read.stat().getVersion()
                : -1;
    }

    /**
     * The {@code multi}: the holder's znode deleted with the version read, the new lease's created; all or
     * nothing. {@code from} is the holder's hold when this backend granted it (taken out), else null.
     */
    private AcquireResult swap(String name, Hold from, Hold pending, int version, LockMetadata metadata) {
        Session s = pending.session();
        String path = znodes.path(name);
        Op create = Op.create( // create2: the answer carries the stat, so the czxid
                path,
                Znodes.data(pending.leaseId(), s.negotiatedMillis(), metadata),
                CreateOptions.newBuilder(ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL)
                        .build());
        Reply<List<OpResult>> r;
        try {
            r = calls.await(OPERATION, name, ZooKeeperCalls.multi(s, List.of(Op.delete(path, version), create)));
        } catch (RuntimeException e) {
            unsure(from); // timed out: the outcome is unknown, as below
            throw e;
        }
        Code code = r.code();
        if (code == Code.OK) {
            if (!sessions.proven(s, pending.sent(), pending.due(), calls, OPERATION, name)) {
                holds.remove(pending); // the session expired at the leader, and the new lock with it
                throw calls.failure(OPERATION, name, Code.SESSIONEXPIRED);
            }
            OpResult.CreateResult created = (OpResult.CreateResult) r.value().get(1);
            Hold held = new Hold(
                    name,
                    pending.leaseId(),
                    s,
                    pending.due(),
                    true,
                    0,
                    created.getStat().getCzxid(),
                    pending.sent());
            if (!holds.confirm(pending, held)) {
                return AcquireResult.held(null); // given back meanwhile: its TTL ran out before the answer came
            }
            return AcquireResult.granted(held.token(), held.expiresAt());
        }
        if (ZooKeeperCalls.outcomeUnknown(code)) {
            // both holds stay, uncertain: each is settled (read, then deleted only if still its own) at its due time
            // or by the engine's background release of both lease ids
            unsure(from);
            throw calls.failure(OPERATION, name, code);
        }
        holds.remove(pending); // not applied: a multi is all or nothing
        if (code == Code.NONODE || code == Code.BADVERSION) {
            return AcquireResult.held(null); // the holder's znode ended after the read: it no longer holds
        }
        unsure(from);
        if (code == Code.SESSIONEXPIRED) {
            s.abandon(); // found dead: the next call opens a new session
        }
        throw calls.failure(OPERATION, name, code);
    }
}
