package io.fencelock.zookeeper;

import io.fencelock.LockBackendException;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.zookeeper.Holds.Hold;
import io.fencelock.zookeeper.ZooKeeperCalls.Reply;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * The batch renewal, one round trip for every session at once. Per session: a {@code multi} of one
 * {@code check(basePath, any version)}, then, pipelined right after it on the same session, a read
 * {@code multi} of {@code getData} of each renewed znode (chunks of {@value #READS_PER_MULTI}). A
 * renewal is accepted only when that read shows the znode with the hold's token as its creation zxid
 * and the session as its ephemeral owner.
 *
 * <p>Why both. The {@code multi} is a write: the leader orders it and checks the session first
 * ({@code checkSession}, also when the op then fails), so its success proves the session alive at a
 * point after the renewal was sent, and its arrival touched the session. It cannot say whose znode is
 * at a path: a {@code check} compares the data version, and every lock znode has version 0, so a
 * znode another client created after a forced release would pass it. The {@code exists} can: the
 * server runs one session's requests in order and a member answers a read only after it applied that
 * session's earlier writes, so the read shows a state at least as new as the {@code multi}. A czxid
 * belongs to one znode for ever (a znode created again gets a new one), so a read that shows the
 * hold's czxid proves its znode was there from the grant to the read, so also at the {@code multi}.
 * The read alone would not do: a member cut off from the leader answers reads from its stale copy.
 * The reads are one read {@code multi} per chunk, not one {@code exists} per znode: the client
 * writes one request per turn of its send loop, and a batch of 100 took ten times as long that way.
 */
final class Renewals {
    /**
     * Reads per read {@code multi}: the answer carries each znode's data, at most about 6 KB as this
     * provider writes it (lease id, timeout, bounded metadata), so a chunk stays far below the client's
     * 1 MB packet limit ({@code jute.maxbuffer}); one request per znode costs a server round each.
     */
    static final int READS_PER_MULTI = 100;

    private final Sessions sessions;
    private final Holds holds;
    private final Znodes znodes;
    private final ZooKeeperCalls calls;

    Renewals(Sessions sessions, Holds holds, Znodes znodes, ZooKeeperCalls calls) {
        this.sessions = sessions;
        this.holds = holds;
        this.znodes = znodes;
        this.calls = calls;
    }

    /** The requests of one session and their calls, all sent before any answer is awaited. */
    private record Sent(
            Session session,
            List<Integer> indexes,
            long longestTtlNanos,
            CompletableFuture<Reply<List<OpResult>>> touch,
            List<CompletableFuture<Reply<List<OpResult>>>> reads) {}

    List<RenewResult> renew(List<RenewRequest> requests) {
        sessions.requireOpen();
        long t0 = System.nanoTime();
        RenewResult[] results = new RenewResult[requests.size()];
        Hold[] taken = new Hold[results.length];
        Map<Session, List<Integer>> bySession = new LinkedHashMap<>();
        for (int i = 0; i < results.length; i++) {
            taken[i] = holds.takeForRenewal(requests.get(i), t0);
            if (taken[i] == null) {
                results[i] = RenewResult.rejected(); // not granted here, past its TTL, or its session ended
            } else {
                bySession
                        .computeIfAbsent(taken[i].session(), s -> new ArrayList<>())
                        .add(i);
            }
        }
        List<Sent> sent = new ArrayList<>();
        bySession.forEach((s, indexes) -> sent.add(send(s, indexes, requests)));
        Boolean[] alive = new Boolean[results.length];
        LockBackendException failed = null;
        try {
            for (Sent one : sent) {
                decide(one, taken, alive, requests.size(), t0);
            }
        } catch (LockBackendException e) {
            failed = e;
        }
        for (int i = 0; i < results.length; i++) {
            if (results[i] == null) { // taken for renewal
                Hold after = holds.renewed(requests.get(i), failed == null ? alive[i] : null, t0);
                results[i] = failed == null && Boolean.TRUE.equals(alive[i]) && after != null
                        ? RenewResult.renewed(after.token(), after.expiresAt())
                        : RenewResult.rejected();
            }
        }
        if (failed != null) {
            throw failed;
        }
        return List.of(results);
    }

    private Sent send(Session s, List<Integer> indexes, List<RenewRequest> requests) {
        CompletableFuture<Reply<List<OpResult>>> touch =
                ZooKeeperCalls.multi(s, List.of(Op.check(znodes.basePath(), -1)));
        List<CompletableFuture<Reply<List<OpResult>>>> reads = new ArrayList<>();
        for (int from = 0; from < indexes.size(); from += READS_PER_MULTI) {
            reads.add(ZooKeeperCalls.multi(
                    s,
                    indexes.subList(from, Math.min(indexes.size(), from + READS_PER_MULTI)).stream()
                            .map(i -> Op.getData(znodes.path(requests.get(i).name())))
                            .toList()));
        }
        long longest = indexes.stream()
                .mapToLong(i -> requests.get(i).ttl().toNanos())
                .max()
                .orElse(0);
        return new Sent(s, indexes, longest, touch, reads);
    }

    /** Sets {@code alive} for the holds of one session: true only for a znode that is still the hold's own. */
    private void decide(Sent sent, Hold[] taken, Boolean[] alive, int batch, long t0) {
        Session s = sent.session();
        Code touched =
                calls.await("renew of ", batch + " lease(s)", sent.touch(), t0).code();
        if (touched == Code.SESSIONEXPIRED) {
            s.abandon();
            sent.indexes().forEach(i -> alive[i] = false);
            return;
        }
        // NONODE: the base path was deleted, so none of its znodes is left; the session was checked before the op
        if (touched != Code.OK && touched != Code.NONODE) {
            throw calls.failure("renew of ", batch + " lease(s)", touched);
        }
        if (!sessions.proven(s, t0, t0 + sent.longestTtlNanos(), calls, "renew of ", batch + " lease(s)")) {
            sent.indexes().forEach(i -> alive[i] = false); // the session expired at the leader, its locks with it
            return;
        }
        for (int c = 0; c < sent.reads().size(); c++) {
            Reply<List<OpResult>> read =
                    calls.await("renew of ", batch + " lease(s)", sent.reads().get(c), t0);
            if (read.code() == Code.SESSIONEXPIRED) {
                s.abandon();
                sent.indexes().forEach(i -> alive[i] = false);
                return;
            }
            int from = c * READS_PER_MULTI;
            int size = Math.min(READS_PER_MULTI, sent.indexes().size() - from);
            // a read multi answers every op; its code is the first op's error, if any (NONODE: a lock gone)
            if (read.value() == null || read.value().size() != size) {
                throw calls.failure("renew of ", batch + " lease(s)", read.code());
            }
            for (int j = 0; j < size; j++) {
                int i = sent.indexes().get(from + j);
                OpResult one = read.value().get(j);
                if (one instanceof OpResult.GetDataResult data) {
                    Stat stat = data.getStat();
                    alive[i] = stat.getCzxid() == taken[i].token() && stat.getEphemeralOwner() == s.id();
                } else if (one instanceof OpResult.ErrorResult e && e.getErr() == Code.NONODE.intValue()) {
                    alive[i] = false;
                } else {
                    throw calls.failure(
                            "renew of ",
                            batch + " lease(s)",
                            one instanceof OpResult.ErrorResult e ? Code.get(e.getErr()) : Code.SYSTEMERROR);
                }
            }
        }
    }
}
