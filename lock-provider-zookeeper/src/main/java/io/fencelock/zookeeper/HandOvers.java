package io.fencelock.zookeeper;

import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.zookeeper.Holds.Hold;
import io.fencelock.zookeeper.ZooKeeperCalls.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * The hand-over of a held mutex to a new lease ({@code LockBackend.handOver}): one {@code multi}, in the
 * session of the new TTL's class, that ends the holder's grant as a release does (its lock znode and its
 * lease marker deleted) and creates the new lease's ephemeral znode and marker. All or nothing: the name is
 * never free in between (no other create can come between the ops), the new znode's czxid, the multi's
 * zxid, is above every token the name had, as for any create, and once the holder's marker is gone (a
 * forced release, an expiry) the whole {@code multi} fails and nothing changes ({@link Znodes} says why the
 * marker ties the delete to the holder's own grant). One round trip, where a release and the waiter's
 * acquire are two.
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

    HandOvers(Sessions sessions, Znodes znodes, ZooKeeperCalls calls, Holds holds) {
        this.sessions = sessions;
        this.znodes = znodes;
        this.calls = calls;
        this.holds = holds;
    }

    AcquireResult handOver(String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        Session s = znodes.ensureBase(sessions.forTtl(ttl));
        if (holds.get(leaseId) != null) {
            return AcquireResult.held(null); // a retry of a lease id this backend knows: refused, as the SPI allows
        }
        Hold known = holds.get(fromLeaseId);
        Hold from = null; // stays null for a lease granted elsewhere
        if (known != null && known.name().equals(name)) {
            // taken out first, as a release does, so that its TTL's give-back does not race the multi
            from = holds.take(fromLeaseId, name, true);
            if (from == null) {
                return AcquireResult.held(null); // past its TTL (given back at it), its session ended, or released
            }
        }
        // begun just before the multi, as an acquire before its create: its give-back settles an unknown outcome
        Hold pending = holds.begin(name, leaseId, s, ttl);
        if (pending == null) {
            unsure(from);
            return AcquireResult.held(null); // the same lease id raced in: nothing was sent
        }
        return swap(name, fromLeaseId, from, pending, metadata);
    }

    /**
     * A holder taken out whose grant may still stand: it comes back uncertain, settled (ended only if still its
     * own) at its due time or by the engine's release.
     */
    private void unsure(Hold from) {
        if (from != null) {
            holds.unsure(from);
        }
    }

    /**
     * The {@code multi}: the holder's grant ended, the new lease's created; all or nothing. {@code from} is the
     * holder's hold when this backend granted it (taken out), else null.
     */
    private AcquireResult swap(String name, String fromLeaseId, Hold from, Hold pending, LockMetadata metadata) {
        Session s = pending.session();
        List<Op> ops = new ArrayList<>(znodes.end(name, fromLeaseId));
        ops.addAll(
                znodes.grant(name, pending.leaseId(), Znodes.data(pending.leaseId(), s.negotiatedMillis(), metadata)));
        Reply<List<OpResult>> r;
        try {
            r = calls.await(OPERATION, name, ZooKeeperCalls.multi(s, ops));
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
            OpResult.CreateResult created = (OpResult.CreateResult) r.value().get(2);
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
            // both holds stay, uncertain: each is settled (ended only if still its own) at its due time or by the
            // engine's background release of both lease ids
            unsure(from);
            throw calls.failure(OPERATION, name, code);
        }
        holds.remove(pending); // not applied: a multi is all or nothing
        if (code == Code.NONODE) {
            return AcquireResult.held(null); // the holder's grant had ended (its marker is gone): it no longer holds
        }
        unsure(from);
        if (code == Code.SESSIONEXPIRED) {
            s.abandon(); // found dead: the next call opens a new session
        }
        throw calls.failure(OPERATION, name, code);
    }
}
