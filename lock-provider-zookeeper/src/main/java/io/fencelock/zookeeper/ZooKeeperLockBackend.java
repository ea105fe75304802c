package io.fencelock.zookeeper;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.zookeeper.Holds.Hold;
import io.fencelock.zookeeper.ZooKeeperCalls.Reply;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;

/**
 * The ZooKeeper primitive on the official client. A held lock is the ephemeral znode
 * {@code <basePath>/<name>} (a {@code /} in the name is written {@code %2F}), whose data is the lease
 * id, the session timeout and the grant's metadata (its grant time is the znode's {@code ctime}); the fencing token is the znode's creation zxid ({@code czxid}), which is
 * ensemble-wide, strictly increasing and in the transaction log, so tokens rise across release,
 * expiry, takeover, leader changes and restarts.
 * <ul>
 *   <li><b>Acquire</b>: one {@code multi} creating the ephemeral znode and its lease marker in the
 *       session of the lock's TTL class ({@link Sessions}; {@link Znodes} says why the marker).</li>
 *   <li><b>Renew</b>: per session, one {@code multi} of a single {@code check} (a write: ordered by the
 *       leader, which checks the session, and it touches the session), with a read {@code multi} of
 *       the due znodes pipelined after it; accepted only for a znode whose czxid is the hold's token
 *       ({@link Renewals}). All sessions at once: one round trip.</li>
 *   <li><b>Release</b>: one {@code multi} deleting the znode and its lease marker, which fails whole
 *       once the marker is gone: another session can delete the znode (a forced release) and a third
 *       create the path again, so the znode at the path is not always the one this grant created.</li>
 *   <li><b>Hand-over</b>: one {@code multi} that ends the holder's grant as a release does and creates the
 *       new lease's znode and marker in the session of its TTL's class: never free in between, a new
 *       czxid above every earlier one ({@link HandOvers}).</li>
 *   <li><b>Locks the engine let go</b> are deleted by the backend itself when their TTL runs out
 *       ({@link Holds} says why this provider must schedule that).</li>
 *   <li><b>Wake-ups</b>: persistent watches on the control session, which holds no locks ({@link ReleaseWatcher}).</li>
 *   <li><b>Inspect and list</b>: reads after a {@code sync} on the control session ({@link LockReads}).</li>
 * </ul>
 * Around the primitive: {@link ZooKeeperSettings} (the builder's values and the URI, checked before
 * any I/O), {@link Sessions} (the sessions per TTL class, the control session, the server's longest
 * session), {@link Holds} (this backend's locks and their expiry), {@link Renewals} (the batch
 * renewal), {@link Znodes} (paths, data, the base path) and {@link ZooKeeperCalls} (the calls as
 * futures, waiting for them, codes as failures).
 */
public final class ZooKeeperLockBackend implements LockBackend {
    private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(
            Capability.FENCING,
            Capability.DURABLE_TOKENS,
            Capability.SERVER_TIME,
            Capability.WAKE_ON_RELEASE,
            Capability.BATCH_RENEW,
            Capability.LINEARIZABLE,
            Capability.METADATA,
            Capability.HAND_OVER));

    private final Znodes znodes;
    private final String where;
    private final ZooKeeperCalls calls;
    private final Sessions sessions;
    private final Holds holds;
    private final ReleaseWatcher watcher;
    private final LockReads reads;
    private final Renewals renewals;
    private final HandOvers handOvers;

    private ZooKeeperLockBackend(ZooKeeperSettings settings) {
        this.where = settings.connectString();
        this.calls = new ZooKeeperCalls(settings.requestTimeout, where);
        this.znodes = new Znodes(settings.basePath, calls);
        this.holds = new Holds(h -> giveBack(h, "giving back the expired lock '"), settings.requestTimeout, where);
        this.sessions = new Sessions(settings, this::controlEvent, holds.timer());
        this.watcher = new ReleaseWatcher(sessions::control, znodes::path, where);
        this.reads = new LockReads(sessions, znodes, calls, holds);
        this.renewals = new Renewals(sessions, holds, znodes, calls);
        this.handOvers = new HandOvers(sessions, znodes, calls, holds);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /** The metadata goes in the znode's data, written by the same create; the grant time is its ctime. */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        sessions.requireOpen();
        for (int attempt = 0; ; attempt++) {
            Session s = znodes.ensureBase(sessions.forTtl(ttl));
            Hold pending = holds.begin(name, leaseId, s, ttl);
            if (pending == null) {
                return AcquireResult.held(null); // a retry of a lease id this backend knows: refused, as the SPI allows
            }
            // unknown outcome (timeout, lost connection): the hold stays uncertain, and is settled at its due time
            Reply<List<OpResult>> r = calls.await(
                    "tryAcquire of '",
                    name,
                    ZooKeeperCalls.multi(
                            s, znodes.grant(name, leaseId, Znodes.data(leaseId, s.negotiatedMillis(), metadata))));
            Code code = r.code();
            if (code == Code.OK) {
                if (!sessions.proven(s, pending.sent(), pending.due(), calls, "tryAcquire of '", name)) {
                    holds.remove(pending); // the session expired at the leader, and the lock with it
                    throw calls.failure("tryAcquire of '", name, Code.SESSIONEXPIRED);
                }
                long czxid =
                        ((OpResult.CreateResult) r.value().get(0)).getStat().getCzxid();
                Hold held = new Hold(name, leaseId, s, pending.due(), true, 0, czxid, pending.sent());
                if (!holds.confirm(pending, held)) {
                    return AcquireResult.held(null); // given back meanwhile: its TTL ran out before the answer came
                }
                return AcquireResult.granted(held.token(), held.expiresAt());
            }
            if (ZooKeeperCalls.outcomeUnknown(code)) {
                // the create may have been applied: the hold stays, uncertain, settled at its due time or by a release
                throw calls.failure("tryAcquire of '", name, code);
            }
            holds.remove(pending);
            if (code == Code.NODEEXISTS) { // the lock znode (a marker of this lease id cannot exist: ids are per grant)
                watcher.refused(name); // a waiter's watch starts here, not before every acquire
                return AcquireResult.held(
                        null); // ZooKeeper does not tell a session's deadline; the watch wakes waiters
            }
            if (code == Code.SESSIONEXPIRED && attempt == 0) {
                s.abandon(); // found dead: the next attempt opens a new session
                continue;
            }
            if (code == Code.NONODE && attempt == 0) {
                znodes.recreateBase(s); // the base path was deleted under us
                continue;
            }
            throw calls.failure("tryAcquire of '", name, code);
        }
    }

    /** One round trip for all sessions; {@link Renewals} says what it sends and why a renewal is accepted. */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        return requests.isEmpty() ? List.of() : renewals.renew(requests);
    }

    /**
     * One {@code multi} that ends the holder's grant (its znode and lease marker) and creates the new lease's:
     * the name is never free in between, and the new czxid is above every earlier one ({@link HandOvers}).
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        sessions.requireOpen();
        return handOvers.handOver(name, fromLeaseId, leaseId, ttl, metadata);
    }

    @Override
    public boolean release(String name, String leaseId) {
        sessions.requireOpen();
        Hold known = holds.get(leaseId);
        if (known == null || !known.name().equals(name)) {
            return releaseForeign(name, leaseId);
        }
        Hold h = holds.take(leaseId, name, false);
        if (h == null) {
            return false; // given back or released concurrently
        }
        if (!h.session().live()) {
            return false; // its session ended or was abandoned: the server removes the znode with it
        }
        try {
            return calls.await("release of '", name, giveBack(h, "release of '"));
        } catch (LockBackendException e) {
            holds.unsure(h); // settled at its due time, or by the engine's next release
            throw e;
        }
    }

    /**
     * Ends the grant of {@code h}: one {@code multi} in its own session deleting the lock znode and its lease
     * marker, which fails as a whole once the marker is gone (a forced release, an expiry), so it never takes
     * another grant's znode at the path ({@link Znodes}). Completes with whether this call ended it.
     */
    private CompletableFuture<Boolean> giveBack(Hold h, String operation) {
        return ZooKeeperCalls.multi(h.session(), znodes.end(h.name(), h.leaseId()))
                .thenApply(r -> {
                    // SESSIONEXPIRED: the session's end removed the lock znode and its marker
                    if (r.code() != Code.OK && r.code() != Code.NONODE && r.code() != Code.SESSIONEXPIRED) {
                        throw calls.failure(operation, h.name(), r.code());
                    }
                    return r.code() == Code.OK;
                });
    }

    /**
     * A release of a lease this backend does not track ({@code LockClient.forceRelease}, or a lease whose
     * hold was forgotten: its session ended or was abandoned): the same {@code multi} on the control session.
     * The marker names the grant, so no read is needed and no third client's grant can be hit.
     */
    private boolean releaseForeign(String name, String leaseId) {
        Code code = calls.await(
                        "release of '", name, ZooKeeperCalls.multi(sessions.control(), znodes.end(name, leaseId)))
                .code();
        if (code != Code.OK && code != Code.NONODE) {
            throw calls.failure("release of '", name, code);
        }
        return code == Code.OK; // NONODE: that grant had ended already (its marker is gone)
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        sessions.requireOpen();
        return reads.inspect(name);
    }

    @Override
    public List<LockInfo> list(String namePrefix) {
        sessions.requireOpen();
        return reads.list(namePrefix);
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(watcher);
    }

    /** Whether the watch of {@code name} was registered, by a refused attempt (for tests). */
    boolean watchRegistered(String name) {
        return watcher.registered(name);
    }

    /** Whether the server has confirmed the watch of {@code name} (for tests). */
    boolean watchConfirmed(String name) {
        return watcher.confirmed(name);
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    /**
     * Closes every session. A session that still carries locks is abandoned rather than ended, so its
     * locks stay held until the server expires it (their TTL at most, rounded up to the session class);
     * the others, and the control session, are ended at once.
     */
    @Override
    public void close() {
        if (!sessions.markClosed()) {
            return;
        }
        watcher.close();
        holds.close();
        sessions.closeAll(holds.sessions()::contains);
    }

    /** The server's maxSessionTimeout, asked once with a session that requests the longest timeout there is. */
    @Override
    public Duration maxTtl() {
        return sessions.maxTtl();
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + znodes.basePath() + " on " + where + "]";
    }

    private void controlEvent(Session s, WatchedEvent event) {
        watcher.sessionEvent(s, event); // it follows only the control session it watches on
    }

    // ------------------------------------------------------------------ builder

    /** Validates everything before any I/O. */
    public static final class Builder {
        private final ZooKeeperSettings settings = new ZooKeeperSettings();

        private Builder() {}

        /** Servers as {@code host:port}, e.g. {@code zk-1:2181}. */
        public Builder servers(String... servers) {
            for (String s : servers) {
                settings.server(s);
            }
            return this;
        }

        public Builder servers(List<String> servers) {
            return servers(servers.toArray(String[]::new));
        }

        /** A chroot every path is relative to, e.g. {@code /apps/billing} (default none); it must exist. */
        public Builder chroot(String chroot) {
            settings.chroot(chroot);
            return this;
        }

        /**
         * The persistent znode under which the lock znodes live (created if missing): an absolute path of
         * 2 to 128 characters from A-Z a-z 0-9 . _ - : @ + = # and {@code /}, no trailing {@code /}; the
         * default is {@code /fencelock}.
         */
        public Builder basePath(String basePath) {
            settings.basePath(basePath);
            return this;
        }

        /** How long one call may take before it fails as retryable (default 5 s). */
        public Builder requestTimeout(Duration timeout) {
            settings.requestTimeout(timeout);
            return this;
        }

        /**
         * How late the ensemble's leader may hear of a request a member took in (default: half the server's
         * {@code minSessionTimeout}, asked once; one {@code tickTime} at ZooKeeper's defaults, where members
         * report every half tick). A grant or renewal not proven by what the leader heard is checked once
         * more after this lag; set it to the servers' {@code tickTime} when {@code minSessionTimeout} is not
         * twice that.
         */
        public Builder leaderLag(Duration lag) {
            settings.leaderLag(lag);
            return this;
        }

        /** The servers and chroot of {@code zookeeper://host:port[,host:port...][/chroot]}. */
        Builder uri(String uri) {
            settings.uri(uri);
            return this;
        }

        public ZooKeeperLockBackend build() {
            settings.connectString(); // refuses an empty server list
            return new ZooKeeperLockBackend(settings);
        }
    }

    /** For tests: the sessions that carry locks, by session class (ms). */
    Map<Long, Session> sessions() {
        return sessions.byClass();
    }

    /** For tests: the locks granted here and their expiry. */
    Holds holdBook() {
        return holds;
    }

    /** For tests: the sessions' bookkeeping (heartbeats, proofs). */
    Sessions sessionBook() {
        return sessions;
    }
}
