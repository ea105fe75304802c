package io.fencelock.zookeeper;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.ReleaseFeed;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * The ZooKeeper primitive on the official client. A held lock is the ephemeral znode
 * {@code <basePath>/<name>} (a {@code /} in the name is written {@code %2F}), whose data is the lease
 * id and the session timeout; the fencing token is the znode's creation zxid ({@code czxid}), which is
 * ensemble-wide, strictly increasing and in the transaction log, so tokens rise across release,
 * expiry, takeover, leader changes and restarts.
 * <ul>
 *   <li><b>Sessions per TTL class.</b> A lock rides on a session of this backend whose timeout is its
 *       TTL rounded up to three significant bits (at most 12.5% more), one session per such class,
 *       opened on first use. The server keeps a session at least its timeout after the last request
 *       it received from it, so a lock granted or renewed by a request sent at {@code t0} lives at
 *       least until {@code t0 + ttl}; a crashed, frozen or cut-off holder's session expires at most
 *       one timeout and one tick after the last request that reached the server.</li>
 *   <li><b>Acquire</b>: one {@code create} of the ephemeral znode in the class's session.</li>
 *   <li><b>Renew</b>: one {@code multi} of {@code check(znode, version 0)} per session for all its due
 *       locks (chunks of {@value #MAX_MULTI_OPS}, sent at once): a write, so it is ordered through the
 *       leader, fails if the session has expired, proves each znode is still there, and touches the
 *       session.</li>
 *   <li><b>Release</b>: {@code delete(znode, version 0)} in the lock's own session; while that session
 *       lives the znode at that path is the one it created (an ephemeral znode ends only with its
 *       session or by a delete), so no other holder's lock can be hit.</li>
 *   <li><b>Locks the engine let go.</b> The ZooKeeper client keeps its sessions alive by itself, so a
 *       lock whose holder stopped renewing would ride on its session as long as the process runs. The
 *       backend therefore deletes every lock of its own whose TTL ran out without a renewal, at that
 *       moment (one scheduler thread); an acquire or release whose outcome is unknown is settled the
 *       same way (read, and delete only a znode of its own session with its lease id). When such a
 *       delete cannot be sent (no connection), the session is abandoned: the client stops without
 *       ending it, so the server expires it after its timeout, which is never before the deadline of
 *       any other lock on it.</li>
 *   <li><b>Wake-ups</b>: persistent watches on a control session that holds no locks ({@link ReleaseWatcher}).</li>
 * </ul>
 * ZooKeeper has no clock API: {@code serverTime} in {@link LockInfo} is this client's clock when the
 * answer arrived, and {@code expiresAt} of another client's lock adds its session timeout (the latest
 * it ends if its holder stopped now).
 */
public final class ZooKeeperLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    static final String DEFAULT_BASE_PATH = "/fencelock";
    static final int MAX_BASE_PATH = 128;
    private static final Pattern BASE_PATH = Pattern.compile("(/[A-Za-z0-9_\\-:@+=#][A-Za-z0-9._\\-:@+=#]*)+");
    /** Checks per {@code multi}: far below the server's 1 MB request limit ({@code jute.maxbuffer}) for any name. */
    static final int MAX_MULTI_OPS = 500;
    /** The control session (watches, reads) holds no locks: its timeout only bounds how fast it notices a dead server. */
    private static final long CONTROL_SESSION_MILLIS = 10_000;
    private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.FENCING, Capability.DURABLE_TOKENS,
            Capability.SERVER_TIME, Capability.WAKE_ON_RELEASE, Capability.BATCH_RENEW, Capability.LINEARIZABLE));

    private final String connectString;
    private final String basePath;
    private final String where;
    private final Duration timeout;
    private final ZKClientConfig config;
    private final ConcurrentHashMap<Long, Session> sessions = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Hold> holds = new ConcurrentHashMap<>(); // by lease id
    private final ReentrantLock opening = new ReentrantLock();
    private final ScheduledThreadPoolExecutor scheduler;
    private final ReleaseWatcher watcher;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean baseReady = new AtomicBoolean();
    /** The longest session timeout the server granted when asked for more (0 until one was clamped). */
    private final AtomicLong serverMaxMillis = new AtomicLong();
    private volatile Session control;

    /**
     * A lock this backend granted or tried to grant. {@code certain}: the create succeeded, so while
     * {@code session} lives the znode is this one. {@code due}: when its TTL runs out without a renewal
     * (nanoTime). {@code renewing}: renewals in flight, during which it is not given back.
     */
    record Hold(String name, String leaseId, Session session, long due, boolean certain, int renewing, long token) {
        Hold renewing(int delta) {
            return new Hold(name, leaseId, session, due, certain, renewing + delta, token);
        }
    }

    private ZooKeeperLockBackend(String connectString, String basePath, String where, Duration timeout) {
        this.connectString = connectString;
        this.basePath = basePath;
        this.where = where;
        this.timeout = timeout;
        this.config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        // bounds the one blocking call this backend makes, close()
        config.setProperty(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, Long.toString(timeout.toMillis()));
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "fencelock-zookeeper-expiry");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.watcher = new ReleaseWatcher(this::control, this::path, where);
    }

    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------ the primitive

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        requireOpen();
        for (int attempt = 0; ; attempt++) {
            Session s = sessionFor(ttl);
            long t0 = System.nanoTime();
            Hold pending = new Hold(name, leaseId, s, t0 + ttl.toNanos(), false, 0, 0);
            if (holds.putIfAbsent(leaseId, pending) != null) {
                return AcquireResult.held(null); // a retry of a lease id this backend knows: refused, as the SPI allows
            }
            expireAt(pending);
            // unknown outcome (timeout, lost connection): the hold stays uncertain, and is settled at its due time
            Reply<Stat> r = await("tryAcquire of '", name, create(s, path(name), data(leaseId, s)));
            Code code = r.code();
            if (code == Code.OK) {
                Hold held = new Hold(name, leaseId, s, pending.due(), true, 0, r.value().getCzxid());
                if (!holds.replace(leaseId, pending, held)) {
                    return AcquireResult.held(null); // given back meanwhile: its TTL ran out before the answer came
                }
                return AcquireResult.granted(held.token(), expiry(held.due()));
            }
            if (outcomeUnknown(code)) {
                // the create may have been applied: the hold stays, uncertain, settled at its due time or by a release
                throw failure("tryAcquire of '" + name + "' on " + where, code);
            }
            holds.remove(leaseId, pending);
            if (code == Code.NODEEXISTS) {
                return AcquireResult.held(null); // ZooKeeper does not tell a session's deadline; the watch wakes waiters
            }
            if (code == Code.SESSIONEXPIRED && attempt == 0) {
                s.abandon(); // found dead: the next attempt opens a new session
                continue;
            }
            if (code == Code.NONODE && attempt == 0) {
                baseReady.set(false); // the base path was deleted under us
                ensureBase(s);
                continue;
            }
            throw failure("tryAcquire of '" + name + "' on " + where, code);
        }
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        requireOpen();
        long t0 = System.nanoTime();
        RenewResult[] results = new RenewResult[requests.size()];
        Map<Session, List<Integer>> bySession = new LinkedHashMap<>();
        for (int i = 0; i < results.length; i++) {
            RenewRequest q = requests.get(i);
            Hold[] taken = new Hold[1];
            holds.computeIfPresent(q.leaseId(), (k, h) -> {
                if (!h.name().equals(q.name()) || !h.certain() || !h.session().live() || t0 - h.due() >= 0
                        || q.ttl().toMillis() > h.session().negotiatedMillis()) {
                    return h;
                }
                taken[0] = h.renewing(1);
                return taken[0];
            });
            if (taken[0] == null) {
                results[i] = RenewResult.rejected(); // not granted here, past its TTL, or its session ended
                Hold h = holds.get(q.leaseId());
                if (h != null && !h.session().live()) {
                    holds.remove(q.leaseId(), h);
                }
                continue;
            }
            bySession.computeIfAbsent(taken[0].session(), s -> new ArrayList<>()).add(i);
        }
        Boolean[] alive = new Boolean[results.length];
        LockBackendException failed = null;
        try {
            for (Map.Entry<Session, List<Integer>> e : bySession.entrySet()) {
                check(e.getKey(), e.getValue(), requests, alive, t0);
            }
        } catch (LockBackendException e) {
            failed = e;
        }
        for (Map.Entry<Session, List<Integer>> e : bySession.entrySet()) {
            for (int i : e.getValue()) {
                RenewRequest q = requests.get(i);
                Boolean ok = failed == null ? alive[i] : null;
                Hold[] after = new Hold[1];
                holds.computeIfPresent(q.leaseId(), (k, h) -> {
                    if (Boolean.FALSE.equals(ok)) {
                        return null; // its znode is gone (or changed by someone else): nothing of ours to give back
                    }
                    Hold next = Boolean.TRUE.equals(ok)
                            ? new Hold(h.name(), h.leaseId(), h.session(), Math.max(h.due(), t0 + q.ttl().toNanos()), true,
                                    h.renewing() - 1, h.token())
                            : h.renewing(-1);
                    after[0] = next;
                    return next;
                });
                if (after[0] != null) {
                    expireAt(after[0]);
                }
                results[i] = Boolean.TRUE.equals(ok) && after[0] != null
                        ? RenewResult.renewed(after[0].token(), expiry(after[0].due())) : RenewResult.rejected();
            }
        }
        if (failed != null) {
            throw failed;
        }
        return List.of(results);
    }

    /** Checks the znodes of {@code indexes} in their session: one multi per chunk, all sent at once; again for ops a failed multi left undecided. */
    private void check(Session s, List<Integer> indexes, List<RenewRequest> requests, Boolean[] alive, long t0) {
        List<Integer> open = indexes;
        while (!open.isEmpty()) {
            List<List<Integer>> chunks = new ArrayList<>();
            List<CompletableFuture<Reply<List<OpResult>>>> sent = new ArrayList<>();
            for (int from = 0; from < open.size(); from += MAX_MULTI_OPS) {
                List<Integer> chunk = open.subList(from, Math.min(open.size(), from + MAX_MULTI_OPS));
                chunks.add(chunk);
                sent.add(multi(s, chunk.stream().map(i -> Op.check(path(requests.get(i).name()), 0)).toList()));
            }
            List<Integer> undecided = new ArrayList<>();
            for (int c = 0; c < chunks.size(); c++) {
                Reply<List<OpResult>> r = await("renew of ", requests.size() + " lease(s)", sent.get(c), t0);
                List<Integer> chunk = chunks.get(c);
                if (r.code() == Code.OK) {
                    chunk.forEach(i -> alive[i] = true);
                } else if (r.code() == Code.SESSIONEXPIRED) {
                    s.abandon();
                    chunk.forEach(i -> alive[i] = false);
                } else if (r.value() != null && (r.code() == Code.NONODE || r.code() == Code.BADVERSION)) {
                    for (int j = 0; j < chunk.size(); j++) {
                        int err = r.value().get(j) instanceof OpResult.ErrorResult er ? er.getErr() : 0;
                        if (err == Code.OK.intValue()) {
                            alive[chunk.get(j)] = true;
                        } else if (err == Code.RUNTIMEINCONSISTENCY.intValue()) {
                            undecided.add(chunk.get(j)); // not checked: the multi stopped at an earlier failure
                        } else {
                            alive[chunk.get(j)] = false;
                        }
                    }
                } else {
                    throw failure("renew of " + requests.size() + " lease(s) on " + where, r.code());
                }
            }
            open = undecided;
        }
    }

    @Override
    public boolean release(String name, String leaseId) {
        requireOpen();
        Hold h = holds.get(leaseId);
        if (h == null || !h.name().equals(name)) {
            return releaseForeign(name, leaseId);
        }
        if (!holds.remove(leaseId, h)) {
            return false; // given back or released concurrently
        }
        if (!h.session().live()) {
            return false; // its session ended or was abandoned: the server removes the znode with it
        }
        try {
            return await("release of '", name, giveBack(h, "release of '" + name + "'"));
        } catch (LockBackendException e) {
            Hold unsure = new Hold(h.name(), h.leaseId(), h.session(), h.due(), false, 0, h.token());
            if (holds.putIfAbsent(leaseId, unsure) == null) {
                expireAt(unsure); // settled at its due time, or by the engine's next release
            }
            throw e;
        }
    }

    /**
     * Deletes the znode of {@code h} in its own session: directly when the create is known to have
     * succeeded; otherwise only after reading that the znode is of this session and lease (no other
     * session can create a znode this session owns, so nothing changes between the read and the delete).
     * Completes with whether this call deleted it.
     */
    private CompletableFuture<Boolean> giveBack(Hold h, String what) {
        Session s = h.session();
        String path = path(h.name());
        CompletableFuture<Integer> version = h.certain() ? CompletableFuture.completedFuture(0)
                : getData(s, path).thenApply(read -> {
                    if (read.code() == Code.NONODE || read.code() == Code.SESSIONEXPIRED) {
                        return -1;
                    }
                    if (read.code() != Code.OK) {
                        throw new CompletionException(failure(what + " on " + where, read.code()));
                    }
                    boolean ours = read.stat().getEphemeralOwner() == s.id() && h.leaseId().equals(leaseIdOf(read.value()));
                    return ours ? read.stat().getVersion() : -1; // another session's lock: the create failed after all
                });
        return version.thenCompose(v -> v < 0 ? CompletableFuture.completedFuture(false) : delete(s, path, v).thenApply(r -> {
            if (r.code() == Code.OK) {
                return true;
            }
            if (r.code() == Code.NONODE || r.code() == Code.SESSIONEXPIRED || r.code() == Code.BADVERSION) {
                return false;
            }
            throw new CompletionException(failure(what + " on " + where, r.code()));
        }));
    }

    /**
     * A release of a lease this backend did not grant (the engine never sends one): the znode is read
     * (after a sync) and deleted with the version read when it holds that lease id. Only between the
     * read and the delete could another client's new znode at the same path be hit, which needs the
     * holder to release and a third client to acquire within that one round trip.
     */
    private boolean releaseForeign(String name, String leaseId) {
        Session c = control();
        String path = path(name);
        sync(c, path);
        Reply<byte[]> read = await("release of '", name, getData(c, path));
        if (read.code() == Code.NONODE) {
            return false;
        }
        if (read.code() != Code.OK) {
            throw failure("release of '" + name + "' on " + where, read.code());
        }
        if (!leaseId.equals(leaseIdOf(read.value()))) {
            return false;
        }
        return await("release of '", name, delete(c, path, read.stat().getVersion())).code() == Code.OK;
    }

    /** The znode, read after a {@code sync} so that it is at least as new as every write completed before the call. */
    @Override
    public Optional<LockInfo> inspect(String name) {
        requireOpen();
        Session c = control();
        String path = path(name);
        sync(c, path);
        Reply<byte[]> read = await("inspect of '", name, getData(c, path));
        if (read.code() == Code.NONODE) {
            return Optional.empty();
        }
        if (read.code() != Code.OK) {
            throw failure("inspect of '" + name + "' on " + where, read.code());
        }
        return Optional.of(info(name, read.value(), read.stat()));
    }

    /** A {@code sync}, the children of the base path, then every matching znode's data, all at once. */
    @Override
    public List<LockInfo> list(String namePrefix) {
        requireOpen();
        Session c = control();
        sync(c, basePath);
        CompletableFuture<Reply<List<String>>> children = new CompletableFuture<>();
        c.zk.getChildren(basePath, false, (rc, p, ctx, names) -> children.complete(new Reply<>(Code.get(rc), names, null)), null);
        Reply<List<String>> listed = await("list of '", namePrefix, children);
        if (listed.code() == Code.NONODE) {
            return List.of();
        }
        if (listed.code() != Code.OK) {
            throw failure("list of '" + namePrefix + "' on " + where, listed.code());
        }
        Map<String, CompletableFuture<Reply<byte[]>>> reads = new LinkedHashMap<>();
        for (String child : listed.value()) {
            String name = decode(child);
            if (name.startsWith(namePrefix)) {
                reads.put(name, getData(c, basePath + "/" + child));
            }
        }
        List<LockInfo> infos = new ArrayList<>();
        for (Map.Entry<String, CompletableFuture<Reply<byte[]>>> e : reads.entrySet()) {
            Reply<byte[]> read = await("list of '", namePrefix, e.getValue());
            if (read.code() == Code.OK) {
                infos.add(info(e.getKey(), read.value(), read.stat()));
            } else if (read.code() != Code.NONODE) {
                throw failure("list of '" + namePrefix + "' on " + where, read.code());
            }
        }
        infos.sort(Comparator.comparing(LockInfo::name));
        return infos;
    }

    private LockInfo info(String name, byte[] data, Stat stat) {
        Instant now = Instant.now();
        String leaseId = leaseIdOf(data);
        Hold own = holds.get(leaseId);
        Instant expires = own != null && own.certain() ? expiry(own.due()) : now.plusMillis(sessionMillisOf(data));
        return new LockInfo(name, true, leaseId, stat.getCzxid(), expires, now);
    }

    @Override
    public Optional<ReleaseFeed> releaseFeed() {
        return Optional.of(watcher);
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
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        watcher.close();
        scheduler.shutdownNow();
        Set<Session> carrying = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        holds.values().forEach(h -> carrying.add(h.session()));
        for (Session s : List.copyOf(sessions.values())) {
            if (carrying.contains(s)) {
                s.abandon();
            } else {
                s.close();
            }
        }
        Session c = control;
        if (c != null) {
            c.close();
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + basePath + " on " + where + "]";
    }

    // ------------------------------------------------------------------ sessions and expiry

    /**
     * The session timeout for locks of {@code ttl}: the TTL in milliseconds rounded up to three
     * significant bits ({@code m x 2^e}, {@code m} in 8..15), so at most 12.5% longer, and a handful
     * of classes per factor of two however many TTLs are used.
     */
    static long sessionMillis(Duration ttl) {
        long ms = Math.max(1, ttl.toMillis() + (ttl.toNanos() % 1_000_000 == 0 ? 0 : 1));
        if (ms <= 16) {
            return ms;
        }
        long unit = Long.highestOneBit(ms) >> 3; // an eighth of the leading power of two
        return (ms + unit - 1) / unit * unit;
    }

    /** This backend's live session for locks of {@code ttl}, opened now (one round trip) if there is none. */
    private Session sessionFor(Duration ttl) {
        long millis = sessionMillis(ttl);
        long max = serverMaxMillis.get();
        if (max > 0 && ttl.toMillis() > max) {
            throw tooLong(ttl, max);
        }
        Session s = sessions.get(millis);
        if (s != null && s.live()) {
            return s;
        }
        opening.lock();
        try {
            s = sessions.get(millis);
            if (s != null && s.live()) {
                return s;
            }
            Session fresh = open(millis);
            long granted = fresh.negotiatedMillis();
            if (granted < millis) {
                serverMaxMillis.set(granted);
                if (granted < ttl.toMillis()) {
                    fresh.close();
                    throw tooLong(ttl, granted);
                }
            }
            sessions.put(millis, fresh);
            ensureBase(fresh);
            return fresh;
        } finally {
            opening.unlock();
        }
    }

    /** The server's maxSessionTimeout, asked once with a session that requests the longest timeout there is. */
    @Override
    public Duration maxTtl() {
        long max = serverMaxMillis.get();
        if (max == 0) {
            Session probe = open(Integer.MAX_VALUE);
            try {
                max = probe.negotiatedMillis();
                serverMaxMillis.set(max);
            } finally {
                probe.close();
            }
        }
        return Duration.ofMillis(max);
    }

    private LockBackendException tooLong(Duration ttl, long max) {
        return new LockBackendException("ttl " + ttl + " is longer than the longest session " + where + " grants ("
                + max + " ms, its maxSessionTimeout): a lock could outlive its session's guarantee; use a shorter ttl"
                + " or raise maxSessionTimeout", false);
    }

    /** The control session, for watches and reads; it carries no locks. */
    private Session control() {
        Session c = control;
        if (c != null && c.live()) {
            return c;
        }
        requireOpen();
        opening.lock();
        try {
            c = control;
            if (c != null && c.live()) {
                return c;
            }
            control = open(CONTROL_SESSION_MILLIS);
            return control;
        } finally {
            opening.unlock();
        }
    }

    /** A new session, connected; a retryable failure when no server answers within the request timeout. */
    private Session open(long millis) {
        Session s;
        try {
            s = new Session(connectString, millis, config, this::ended, this::stateChanged);
        } catch (IOException | RuntimeException e) {
            throw new LockBackendException("cannot open a ZooKeeper session on " + where + ": " + e.getMessage(), e, true);
        }
        try {
            return s.connected.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            s.close();
            Thread.currentThread().interrupt();
            throw new LockBackendException("opening a ZooKeeper session on " + where + " interrupted", e, true);
        } catch (TimeoutException | ExecutionException e) {
            s.abandon(); // never carried a lock
            throw new LockBackendException("no ZooKeeper server of " + where + " answered within " + timeout, e, true);
        }
    }

    private void ended(Session s) {
        sessions.remove(s.requestedMillis, s);
    }

    private void stateChanged(Session s, WatchedEvent event) {
        if (!closed.get()) {
            watcher.sessionEvent(s, event); // it follows only the control session it watches on
        }
    }

    /** Creates the base path (and its parents) once; concurrent creators are fine. */
    private void ensureBase(Session s) {
        if (baseReady.get()) {
            return;
        }
        StringBuilder p = new StringBuilder();
        for (String part : basePath.substring(1).split("/")) {
            p.append('/').append(part);
            CompletableFuture<Reply<Stat>> made = new CompletableFuture<>();
            s.zk.create(p.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT,
                    (rc, path, ctx, name, stat) -> made.complete(new Reply<>(Code.get(rc), stat, null)), null);
            Code code = await("creating the base path ", basePath, made).code();
            if (code != Code.OK && code != Code.NODEEXISTS) {
                throw failure("creating the base path " + basePath + " on " + where, code);
            }
        }
        baseReady.set(true);
    }

    /** Gives back {@code h} at its due time unless it was renewed or released by then. */
    private void expireAt(Hold h) {
        if (closed.get()) {
            return;
        }
        long delay = h.due() - System.nanoTime();
        try {
            scheduler.schedule(() -> expire(h.leaseId(), h.due()), Math.max(0, delay), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    private void expire(String leaseId, long due) {
        Hold[] taken = new Hold[1];
        holds.computeIfPresent(leaseId, (k, h) -> {
            if (h.due() != due || h.renewing() > 0 || System.nanoTime() - due < 0) {
                return h; // renewed, or a renewal is in flight (which reschedules it when done)
            }
            taken[0] = h;
            return null;
        });
        Hold h = taken[0];
        if (h == null || !h.session().live()) {
            return;
        }
        if (!h.session().isConnected()) {
            abandonFor(h);
            return;
        }
        giveBack(h, "giving back the expired lock '" + h.name() + "'").orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete((deleted, e) -> {
                    if (e != null) {
                        abandonFor(h);
                    }
                });
    }

    /**
     * A lock past its TTL that cannot be deleted now: its session must not carry it on, so the session
     * is abandoned (the server expires it after its timeout; every other lock on it was granted or
     * renewed before its last request, so none ends before its holder's deadline).
     */
    private void abandonFor(Hold h) {
        log.debug("fencelock: cannot give back '{}' on {}; abandoning {} so that the server expires it",
                h.name(), where, h.session());
        h.session().abandon();
    }

    // ------------------------------------------------------------------ requests

    /** A reply: the result code, the value, and the znode's stat where the call returns one. */
    record Reply<T>(Code code, T value, Stat stat) {
    }

    private static CompletableFuture<Reply<Stat>> create(Session s, String path, byte[] data) {
        CompletableFuture<Reply<Stat>> f = new CompletableFuture<>();
        s.zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL,
                (rc, p, ctx, name, stat) -> f.complete(new Reply<>(Code.get(rc), stat, stat)), null);
        return f;
    }

    private static CompletableFuture<Reply<byte[]>> getData(Session s, String path) {
        CompletableFuture<Reply<byte[]>> f = new CompletableFuture<>();
        s.zk.getData(path, false, (rc, p, ctx, data, stat) -> f.complete(new Reply<>(Code.get(rc), data, stat)), null);
        return f;
    }

    private static CompletableFuture<Reply<Void>> delete(Session s, String path, int version) {
        CompletableFuture<Reply<Void>> f = new CompletableFuture<>();
        s.zk.delete(path, version, (rc, p, ctx) -> f.complete(new Reply<>(Code.get(rc), null, null)), null);
        return f;
    }

    private static CompletableFuture<Reply<List<OpResult>>> multi(Session s, List<Op> ops) {
        CompletableFuture<Reply<List<OpResult>>> f = new CompletableFuture<>();
        s.zk.multi(ops, (rc, p, ctx, results) -> f.complete(new Reply<>(Code.get(rc), results, null)), null);
        return f;
    }

    /** Sends a {@code sync}; the reads sent after it on the same session are served only once it is done. */
    private static void sync(Session s, String path) {
        s.zk.sync(path, (rc, p, ctx) -> { }, null);
    }

    private <T> T await(String operation, String subject, CompletableFuture<T> call) {
        return await(operation, subject, call, System.nanoTime());
    }

    /** Waits for one call until the request timeout after {@code since}; a timeout is a retryable failure with an unknown outcome. */
    private <T> T await(String operation, String subject, CompletableFuture<T> call, long since) {
        String what = operation + subject + (operation.endsWith("'") ? "'" : "") + " on " + where;
        try {
            return call.get(Math.max(1, since + timeout.toNanos() - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException(what + " interrupted", e, true);
        } catch (TimeoutException e) {
            throw new LockBackendException(what + " timed out after " + timeout, e, true);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockBackendException l) {
                throw l;
            }
            throw new LockBackendException(what + " failed: " + e.getCause(), e.getCause(), true);
        } catch (CancellationException e) {
            throw new LockBackendException(what + " cancelled", e, true);
        }
    }

    /** Codes after which a write may or may not have been applied. */
    private static boolean outcomeUnknown(Code code) {
        return code == Code.CONNECTIONLOSS || code == Code.OPERATIONTIMEOUT || code == Code.REQUESTTIMEOUT;
    }

    static LockBackendException failure(String what, Code code) {
        boolean retryable = switch (code) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, NOTREADONLY, RECONFIGINPROGRESS,
                 REQUESTTIMEOUT, THROTTLEDOP, NEWCONFIGNOQUORUM, QUOTAEXCEEDED -> true;
            default -> false;
        };
        return new LockBackendException(what + " failed (" + code + ")", retryable);
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this ZooKeeper lock backend is closed");
        }
    }

    // ------------------------------------------------------------------ znodes

    private String path(String name) {
        return basePath + "/" + encode(name);
    }

    /** A lock name as one path component: {@code /} becomes {@code %2F}, and the names {@code .} and {@code ..} are escaped ({@code %} never occurs in names). */
    static String encode(String name) {
        String s = name.replace("/", "%2F");
        return s.equals(".") || s.equals("..") ? s.replace(".", "%2E") : s;
    }

    static String decode(String child) {
        return child.replace("%2F", "/").replace("%2E", ".");
    }

    private static byte[] data(String leaseId, Session s) {
        return (leaseId + "\n" + s.negotiatedMillis()).getBytes(StandardCharsets.UTF_8);
    }

    static String leaseIdOf(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        int nl = s.lastIndexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static long sessionMillisOf(byte[] data) {
        String s = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        try {
            return Long.parseLong(s.substring(s.lastIndexOf('\n') + 1).trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Instant expiry(long dueNanos) {
        return Instant.now().plusNanos(Math.max(0, dueNanos - System.nanoTime()));
    }

    // ------------------------------------------------------------------ builder

    /** Validates everything before any I/O. */
    public static final class Builder {
        private final List<String> servers = new ArrayList<>();
        private String chroot = "";
        private String basePath = DEFAULT_BASE_PATH;
        private Duration requestTimeout = Duration.ofSeconds(5);

        private Builder() {
        }

        /** Servers as {@code host:port}, e.g. {@code zk-1:2181}. */
        public Builder servers(String... servers) {
            for (String s : servers) {
                this.servers.add(server(s));
            }
            return this;
        }

        public Builder servers(List<String> servers) {
            return servers(servers.toArray(String[]::new));
        }

        /** A chroot every path is relative to, e.g. {@code /apps/billing} (default none); it must exist. */
        public Builder chroot(String chroot) {
            this.chroot = chroot == null || chroot.isEmpty() ? "" : requireValidPath("chroot", chroot);
            return this;
        }

        /**
         * The persistent znode under which the lock znodes live (created if missing): an absolute path of
         * 2 to {@value #MAX_BASE_PATH} characters from A-Z a-z 0-9 . _ - : @ + = # and {@code /}, no
         * trailing {@code /}; the default is {@code /fencelock}.
         */
        public Builder basePath(String basePath) {
            this.basePath = requireValidPath("basePath", basePath);
            return this;
        }

        /** How long one call may take before it fails as retryable (default 5 s). */
        public Builder requestTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("requestTimeout must be positive, got " + timeout);
            }
            this.requestTimeout = timeout;
            return this;
        }

        public ZooKeeperLockBackend build() {
            if (servers.isEmpty()) {
                throw new IllegalArgumentException("no ZooKeeper servers given");
            }
            String hosts = String.join(",", servers);
            return new ZooKeeperLockBackend(hosts + chroot, basePath, hosts + chroot, requestTimeout);
        }

        private static String server(String s) {
            if (s == null || s.isBlank()) {
                throw new IllegalArgumentException("a ZooKeeper server is empty");
            }
            String t = s.trim();
            int colon = t.lastIndexOf(':');
            boolean ok = colon > 0 && !t.contains("@") && !t.contains("/") && t.substring(0, colon).matches("[A-Za-z0-9.\\-\\[\\]:]+");
            int port = -1;
            if (ok) {
                try {
                    port = Integer.parseInt(t.substring(colon + 1));
                } catch (NumberFormatException e) {
                    ok = false;
                }
            }
            if (!ok || port < 1 || port > 65535) {
                String shown = t.contains("@") ? "***" : t;
                String portPart = colon > 0 && !t.contains("@") ? "port '" + t.substring(colon + 1) + "' of " : "";
                throw new IllegalArgumentException(portPart + "ZooKeeper server '" + shown
                        + "' is invalid: host:port with a port from 1 to 65535 (no credentials)");
            }
            return t;
        }
    }

    static String requireValidPath(String what, String path) {
        if (path == null || path.length() > MAX_BASE_PATH || !BASE_PATH.matcher(path).matches()
                || path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException(what + " " + (path == null ? "null" : "'" + path + "'")
                    + " is invalid: it must be an absolute ZooKeeper path of 2 to " + MAX_BASE_PATH
                    + " characters from A-Z a-z 0-9 . _ - : @ + = # and '/', no trailing '/', not under /zookeeper");
        }
        return path;
    }

    /** For tests: the sessions that carry locks, by session class (ms). */
    Map<Long, Session> sessions() {
        return new HashMap<>(sessions);
    }
}
