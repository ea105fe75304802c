package io.fencelock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.fault.FaultProxy;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The ZooKeeper primitive itself, on a real server (the shared single node unless a test needs its own). */
class ZooKeeperLockBackendTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private ZooKeeperLockBackend open(ZooKeeperServer server) {
        ZooKeeperLockBackend b = (ZooKeeperLockBackend) new ZooKeeperLockBackendProvider().open(server.url(), Map.of());
        opened.add(b);
        return b;
    }

    private static String name() {
        return "test-" + UUID.randomUUID();
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    /**
     * The metadata is the znode's third data line, written by the acquire's create; the grant time is
     * the znode's ctime, which the renewals' checks never change. A znode written before metadata
     * existed (two lines) reads as no metadata.
     */
    @Test
    void metadataIsInTheCreatedZnodeAndTheGrantTimeIsItsCtime() throws Exception {
        ZooKeeperLockBackend a = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        String name = name();
        String lease = id();
        LockMetadata meta = LockMetadata.of("host/1/fencelock-1", "job", Map.of("a.b", "line\\n not a newline"));
        assertThat(a.tryAcquire(name, lease, Duration.ofSeconds(5), meta).acquired())
                .isTrue();
        LockInfo seen = b.inspect(name).orElseThrow();
        assertThat(seen.metadata()).isEqualTo(meta);
        Thread.sleep(20); // a later clock for the renewal than for the create
        assertThat(a.renew(List.of(new RenewRequest(name, lease, Duration.ofSeconds(5), null)))
                        .get(0)
                        .renewed())
                .isTrue();
        LockInfo renewed = b.inspect(name).orElseThrow();
        assertThat(renewed.heldSince()).as("the create's ctime, kept").isEqualTo(seen.heldSince());
        assertThat(renewed.metadata()).isEqualTo(meta);
        assertThat(Znodes.metadataOf(Znodes.data(lease, 5000, meta))).isEqualTo(meta);
        byte[] before = (lease + "\n5000").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(Znodes.leaseIdOf(before)).isEqualTo(lease);
        assertThat(Znodes.sessionMillisOf(before)).isEqualTo(5000);
        assertThat(Znodes.metadataOf(before)).isEqualTo(LockMetadata.NONE);
        assertThat(a.release(name, lease)).isTrue();
        assertThat(b.inspect(name))
                .as("a free lock has no znode, so no metadata")
                .isEmpty();
    }

    /**
     * The leader may hear of a request a member took in up to a lag late, so a grant or renewal counts only
     * when what the leader surely heard covers it from its send to its TTL's end ({@link LeaderView}). After
     * a silence longer than the session timeout minus the lag (the heartbeats paused, as in a stalled
     * process), a grant and a renewal are proven by a write the leader checks, sent after the lag; while the
     * heartbeats run, none is needed.
     */
    @Test
    void afterASilenceAGrantOrRenewalIsProvenByACheckAfterTheLeadersLag() throws Exception {
        ZooKeeperLockBackend b = (ZooKeeperLockBackend)
                new ZooKeeperLockBackendProvider().open(ZooKeeperServer.shared().url(), Map.of("leaderLag", "PT0.5S"));
        opened.add(b);
        Sessions sessions = b.sessionBook();
        Duration ttl = Duration.ofSeconds(2); // a session of 2,048 ms: heartbeats every 516 ms
        String first = id();
        String name = name();
        assertThat(b.tryAcquire(name, first, ttl).acquired()).isTrue();
        assertThat(b.release(name, first)).isTrue();
        assertThat(sessions.proofsByCheck())
                .as("a grant right after the session opened")
                .isZero();

        sessions.pauseHeartbeats(true);
        LeaderView view = b.sessions().get(Sessions.sessionMillis(ttl)).view();
        long lag = view.lagNanos();
        // silent until an answer arriving now could no longer be chained on what the leader surely heard
        awaitTrue(() -> !view.covers(System.nanoTime(), System.nanoTime() + lag));
        long start = System.nanoTime();
        String second = id();
        assertThat(b.tryAcquire(name, second, ttl).acquired()).isTrue();
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(sessions.proofsByCheck()).as("the grant after the silence").isEqualTo(1);
        assertThat(tookMs).as("checked only after the lag").isGreaterThanOrEqualTo(500);
        String third = id();
        String other = name();
        assertThat(b.tryAcquire(other, third, ttl).acquired()).isTrue();
        assertThat(sessions.proofsByCheck())
                .as("the next grant: the check began a new run")
                .isEqualTo(1);
        assertThat(b.release(name, second)).isTrue(); // not left to be given back at its TTL (a request)

        // a renewal whose answer plus the lag lies past what the leader surely heard (about 1.55 s after the last
        // request)
        awaitTrue(() -> !view.covers(System.nanoTime(), System.nanoTime() + lag)); // well before the 2 s TTL ends
        start = System.nanoTime();
        assertThat(b.renew(List.of(new RenewRequest(other, third, ttl, null)))
                        .get(0)
                        .renewed())
                .isTrue();
        tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(sessions.proofsByCheck()).as("the renewal after the silence").isEqualTo(2);
        assertThat(tookMs).as("checked only after the lag").isGreaterThanOrEqualTo(500);

        sessions.pauseHeartbeats(false);
        assertThat(b.release(other, third)).isTrue();
        Thread.sleep(2_100); // the silence of the first grant's, but for the heartbeats
        assertThat(b.tryAcquire(name, id(), ttl).acquired()).isTrue();
        assertThat(sessions.proofsByCheck())
                .as("with the heartbeats running, nothing needed a check")
                .isEqualTo(2);
    }

    /**
     * A release of a lease this backend no longer tracks (here its session was abandoned, so the server
     * expires it later) ends that lease's grant while it stands, and nothing else afterwards: the lease
     * marker names the grant. Before the markers, a release had to read the znode and delete it by version
     * (0 for every lock znode), and handOversKeepExclusionUnderFaults caught such a release, racing the
     * backend's own give-back, deleting a waiter's new grant created between its read and its delete.
     */
    @Test
    void aReleaseOfALeaseNoLongerTrackedEndsOnlyThatLeasesGrant() {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend other = open(ZooKeeperServer.shared());
        String name = name();
        String lease = id();
        Duration ttl = Duration.ofSeconds(2);
        assertThat(b.tryAcquire(name, lease, ttl).acquired()).isTrue();
        b.sessions().get(Sessions.sessionMillis(ttl)).abandon(); // the server expires it after its timeout
        assertThat(b.renew(List.of(new RenewRequest(name, lease, ttl, null)))
                        .get(0)
                        .renewed())
                .as("a renewal on the abandoned session (which forgets the hold)")
                .isFalse();
        assertThat(b.release(name, lease))
                .as("the release of the forgotten lease, whose grant still stands")
                .isTrue();
        assertThat(other.inspect(name)).as("its znode").isEmpty();
        String next = id();
        assertThat(other.tryAcquire(name, next, ttl).acquired()).isTrue();
        assertThat(b.release(name, lease)).as("the same release again").isFalse();
        assertThat(b.handOver(name, lease, id(), ttl, LockMetadata.NONE).acquired())
                .as("a hand-over from the ended lease")
                .isFalse();
        assertThat(other.inspect(name).orElseThrow().leaseId())
                .as("the next grant is untouched")
                .isEqualTo(next);
        assertThat(other.release(name, next)).isTrue();
    }

    /**
     * A grant's lease marker is created with its znode and ends with it, by a release or by its session's
     * expiry; {@code list} does not show the markers' parent as a lock; and a lock znode without a marker (as
     * a client without markers would write it) is not released through it: the release names a grant, not a
     * path.
     */
    @Test
    void eachGrantsLeaseMarkerLivesAndEndsWithItsZnode() throws Exception {
        ZooKeeperServer server = ZooKeeperServer.shared();
        ZooKeeperLockBackend b = open(server);
        ZooKeeperLockBackend other = open(server);
        org.apache.zookeeper.ZooKeeper raw = rawClient(server);
        String name = name() + "/x";
        String lease = id();
        String lock = "/fencelock/" + Znodes.encode(name);
        String marker = "/fencelock/%leases/" + Znodes.encode(name) + "%:" + lease;
        Duration ttl = Duration.ofSeconds(2);

        assertThat(b.tryAcquire(name, lease, ttl).acquired()).isTrue();
        assertThat(raw.exists(lock, false)).as("the lock znode").isNotNull();
        assertThat(raw.exists(marker, false)).as("its lease marker").isNotNull();
        assertThat(b.list("").stream().map(LockInfo::name)).contains(name).doesNotContain(Znodes.LEASES);
        assertThat(b.release(name, lease)).isTrue();
        assertThat(raw.exists(lock, false)).as("the released lock znode").isNull();
        assertThat(raw.exists(marker, false)).as("its marker").isNull();

        String next = id();
        assertThat(b.tryAcquire(name, next, ttl).acquired()).isTrue();
        String nextMarker = "/fencelock/%leases/" + Znodes.encode(name) + "%:" + next;
        b.sessions().get(Sessions.sessionMillis(ttl)).abandon(); // the server expires it after its timeout
        awaitTrue(() -> other.inspect(name).isEmpty());
        assertThat(raw.exists(nextMarker, false))
                .as("the marker, ended by the session's expiry with its znode")
                .isNull();

        String stranger = id();
        raw.create(
                lock,
                Znodes.data(stranger, 2000, LockMetadata.NONE),
                org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.EPHEMERAL);
        assertThat(other.release(name, stranger))
                .as("a release of a grant without a marker")
                .isFalse();
        assertThat(other.inspect(name).orElseThrow().leaseId()).isEqualTo(stranger);
        raw.delete(lock, -1);
    }

    @Test
    void tokenIsTheCreationZxidAndRisesAcrossReleaseExpiryAndTakeover() throws Exception {
        ZooKeeperLockBackend a = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        org.apache.zookeeper.ZooKeeper raw = rawClient(ZooKeeperServer.shared());
        String name = name();
        String firstId = id();
        AcquireResult first = a.tryAcquire(name, firstId, Duration.ofSeconds(5));
        assertThat(first.acquired()).isTrue();
        assertThat(b.inspect(name).orElseThrow().token())
                .as("seen from another client")
                .isEqualTo(first.token());
        assertThat(b.tryAcquire(name, id(), Duration.ofSeconds(5)).acquired())
                .as("held")
                .isFalse();
        assertThat(a.release(name, firstId)).isTrue();
        Duration ttl = Duration.ofMillis(300);
        // the session of this TTL's class opened beforehand, so that the grant below is sent at once
        String warm = name();
        String warmId = id();
        assertThat(b.tryAcquire(warm, warmId, ttl).acquired()).isTrue();
        assertThat(b.release(warm, warmId)).isTrue();
        long sent = System.nanoTime();
        AcquireResult second = b.tryAcquire(name, id(), ttl);
        assertThat(second.token()).as("after release").isGreaterThan(first.token());
        // not renewed: its own backend gives it back at its TTL, though the session lives on
        long seenFree = firstSeenFree(a, name, sent + TimeUnit.MILLISECONDS.toNanos(ttl.toMillis() + SLACK_MILLIS));
        if (seenFree >= 0) {
            assertThat(millisBetween(sent, seenFree))
                    .as("given back at its TTL, not before")
                    .isGreaterThanOrEqualTo(ttl.toMillis());
        }
        assertThat(endedOnTheServer(raw, name))
                .as("given back at its TTL: its delete was on the server within " + SLACK_MILLIS + " ms of it")
                .isTrue();
        awaitTrue(() -> a.inspect(name).isEmpty());
        System.out.println("[zookeeper] a 300 ms lock nobody renewed was gone after "
                + millisBetween(sent, System.nanoTime()) + " ms");
        AcquireResult third = a.tryAcquire(name, id(), Duration.ofSeconds(5));
        assertThat(third.acquired()).as("taken over after expiry").isTrue();
        assertThat(third.token()).as("after expiry and takeover").isGreaterThan(second.token());
    }

    @Test
    void aCrashedHoldersLockIsFreedByTheServerWithinItsSessionTimeout() throws Exception {
        ZooKeeperServer server = ZooKeeperServer.shared();
        ZooKeeperLockBackend holder = open(server);
        ZooKeeperLockBackend observer = open(server);
        org.apache.zookeeper.ZooKeeper raw = rawClient(server);
        String name = name();
        Duration ttl = Duration.ofMillis(800);
        long session = Sessions.sessionMillis(ttl);
        long sent = System.nanoTime();
        assertThat(holder.tryAcquire(name, id(), ttl).acquired()).isTrue();
        // the process "crashes": its session stops without a word to the server, and nothing in it gives the lock back
        holder.sessions().values().forEach(Session::abandon);
        // the server heard from the session last before now, so it expires it by its timeout and a tick from now
        long abandoned = System.nanoTime();
        long seenFree = firstSeenFree(
                observer, name, abandoned + TimeUnit.MILLISECONDS.toNanos(session + TICK_MILLIS + SLACK_MILLIS));
        if (seenFree >= 0) {
            assertThat(millisBetween(sent, seenFree)).as("not before the TTL").isGreaterThanOrEqualTo(ttl.toMillis());
        }
        assertThat(endedOnTheServer(raw, name))
                .as("expired within the session timeout (" + session + " ms), a tick and " + SLACK_MILLIS + " ms")
                .isTrue();
        awaitTrue(() -> observer.inspect(name).isEmpty());
        System.out.println("[zookeeper] a crashed holder's 800 ms lock (session " + session + " ms, tick " + TICK_MILLIS
                + " ms) was freed by the server " + millisBetween(abandoned, System.nanoTime())
                + " ms after the crash (first seen free: "
                + (seenFree >= 0 ? millisBetween(abandoned, seenFree) + " ms" : "not by the deadline") + ")");
    }

    @Test
    void aLockNobodyRenewsIsNotCarriedByItsSiblingsSession() throws Exception {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        Duration ttl = Duration.ofMillis(600);
        String kept = name();
        String keptId = id();
        String dropped = name();
        String droppedId = id();
        assertThat(b.tryAcquire(kept, keptId, ttl).acquired()).isTrue();
        assertThat(b.tryAcquire(dropped, droppedId, ttl).acquired()).isTrue();
        assertThat(b.sessions()).as("one session for both").hasSize(1);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < end) {
            assertThat(b.renew(List.of(new RenewRequest(kept, keptId, ttl, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            Thread.sleep(150); // renewing at a quarter of the TTL
        }
        assertThat(b.inspect(kept)).isPresent();
        assertThat(b.inspect(dropped))
                .as("the lock its holder stopped renewing")
                .isEmpty();
        assertThat(b.renew(List.of(new RenewRequest(dropped, droppedId, ttl, null)))
                        .get(0)
                        .renewed())
                .isFalse();
    }

    /**
     * Also the release feed across the restart: the client reconnects by itself within the control
     * session's timeout, so the feed says it resumed (deletes meanwhile were not replayed), and its
     * watch still hears a release afterwards; once closed it cannot be opened again.
     */
    @Test
    void tokensLocksAndTheReleaseFeedSurviveAKillAndRestartOfTheServer() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start()) {
            ServerControl control = own.control().orElse(null);
            Assumptions.assumeTrue(control != null, "needs a server this fixture runs itself");
            ZooKeeperLockBackend b = open(own);
            String released = name();
            String lease = id();
            long before = b.tryAcquire(released, lease, Duration.ofSeconds(30)).token();
            assertThat(b.release(released, lease)).isTrue();
            String held = name();
            String heldId = id();
            assertThat(b.tryAcquire(held, heldId, Duration.ofSeconds(10)).acquired())
                    .isTrue();
            ReleaseFeed feed = b.releaseFeed().orElseThrow();
            BlockingQueue<String> heard = new LinkedBlockingQueue<>();
            feed.open(recordingSink(heard));
            feed.watch(held);
            assertThat(b.tryAcquire(held, id(), Duration.ofSeconds(10)).acquired())
                    .as("a refused attempt registers the watch")
                    .isFalse();
            awaitTrue(() -> b.watchConfirmed(held));
            control.kill();
            control.start();
            assertThat(heard.poll(20, TimeUnit.SECONDS))
                    .as("the feed after the client reconnected")
                    .isEqualTo("resumed");
            AcquireResult after = SpiChecks.retryWhileRetryable(
                    () -> b.tryAcquire(released, id(), Duration.ofSeconds(30)), Duration.ofSeconds(20));
            assertThat(after.acquired()).isTrue();
            assertThat(after.token()).as("token after SIGKILL and restart").isGreaterThan(before);
            assertThat(SpiChecks.retryWhileRetryable(
                                    () -> b.renew(
                                            List.of(new RenewRequest(held, heldId, Duration.ofSeconds(10), null))),
                                    Duration.ofSeconds(20))
                            .get(0)
                            .renewed())
                    .as("a lock held across the restart: its session was restored from the log")
                    .isTrue();
            assertThat(b.release(held, heldId)).isTrue();
            assertThat(heard.poll(10, TimeUnit.SECONDS))
                    .as("the watch, re-registered by the client")
                    .isEqualTo("released " + held);
            feed.close();
            assertThatThrownBy(() -> feed.open(recordingSink(heard))).isInstanceOf(IllegalStateException.class);
            assertThat(heard).as("nothing but the release, no break").isEmpty();
        }
    }

    /**
     * 1,200 locks renewed at once, two of them gone under the holder's feet (deleted through another
     * backend, as a forced release does), and one of those taken again by a third client: the new
     * znode at its path has version 0 like every lock znode, and only its czxid tells it apart.
     */
    @Test
    void renewingManyLocksAcceptsOnlyTheHoldersOwnZnodes() {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        Duration ttl = Duration.ofSeconds(10);
        List<RenewRequest> requests = new ArrayList<>();
        long t = System.nanoTime();
        for (int i = 0; i < 1200; i++) {
            String name = name();
            String lease = id();
            assertThat(b.tryAcquire(name, lease, ttl).acquired()).isTrue();
            requests.add(new RenewRequest(name, lease, ttl, null));
        }
        System.out.println("[zookeeper] 1200 acquires took " + (System.nanoTime() - t) / 1_000_000 + " ms");
        assertThat(b.list("test-").stream().map(LockInfo::leaseId))
                .containsAll(requests.stream().map(RenewRequest::leaseId).toList());
        ZooKeeperLockBackend other = open(ZooKeeperServer.shared());
        for (int gone : new int[] {300, 700}) {
            assertThat(other.release(
                            requests.get(gone).name(), requests.get(gone).leaseId()))
                    .as("a release through another backend")
                    .isTrue();
        }
        String retaken = requests.get(700).name();
        String newcomer = id();
        assertThat(other.tryAcquire(retaken, newcomer, ttl).acquired()).isTrue();
        t = System.nanoTime();
        List<RenewResult> results = b.renew(requests);
        System.out.println("[zookeeper] renewing 1200 locks (1 multi + 12 read multis, pipelined) took "
                + (System.nanoTime() - t) / 1000 + " us");
        assertThat(results).hasSize(1200);
        for (int i = 0; i < results.size(); i++) {
            assertThat(results.get(i).renewed()).as("renewal %d", i).isEqualTo(i != 300 && i != 700);
        }
        assertThat(b.inspect(retaken).orElseThrow().leaseId())
                .as("the new grant after the refused renewal")
                .isEqualTo(newcomer);
        requests.forEach(r -> b.release(r.name(), r.leaseId()));
        assertThat(other.release(retaken, newcomer)).isTrue();
    }

    /**
     * A renewal replaces a lock's hold twice (marked renewing, then renewed) while a release may run on
     * another thread: the release takes out whatever hold the lease has, not one it read a moment before,
     * which the renewal may have replaced by then, leaving a held lock reported as not freed.
     */
    @Test
    void aReleaseOrHandOverTakesTheHoldWhateverRenewalOfItIsInFlight() {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        Holds holds = b.holdBook();
        Duration ttl = Duration.ofSeconds(10);
        String name = name();
        String lease = id();
        assertThat(b.tryAcquire(name, lease, ttl).acquired()).isTrue();
        Holds.Hold readBefore = holds.get(lease);
        RenewRequest renewal = new RenewRequest(name, lease, ttl, null);
        long sent = System.nanoTime();
        assertThat(holds.takeForRenewal(renewal, sent))
                .as("a renewal in flight")
                .isNotNull();
        assertThat(holds.remove(readBefore))
                .as("taking out the hold as read before the renewal")
                .isFalse();
        String next = id();
        assertThat(b.handOver(name, lease, next, ttl, LockMetadata.NONE).acquired())
                .as("the hand-over during the renewal")
                .isTrue();
        assertThat(holds.renewed(renewal, true, sent))
                .as("the renewal ending after the hand-over")
                .isNull();
        assertThat(holds.takeForRenewal(new RenewRequest(name, next, ttl, null), System.nanoTime()))
                .isNotNull();
        assertThat(b.release(name, next)).as("the release during the renewal").isTrue();
        assertThat(b.inspect(name)).isEmpty();
    }

    /**
     * A forced-out holder that releases (or whose lock falls due: the same give-back) before any
     * renewal told it of the loss must not delete the new grant at the path: a delete with version 0
     * would hit it, so a release deletes the znode only together with its own lease marker. A late copy of
     * the forced release is refused the same way.
     */
    @Test
    void aForcedOutHoldersReleaseLeavesTheNextGrant() {
        ZooKeeperLockBackend holder = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend operator = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend next = open(ZooKeeperServer.shared());
        String name = name();
        String lease = id();
        assertThat(holder.tryAcquire(name, lease, Duration.ofSeconds(10)).acquired())
                .isTrue();
        assertThat(operator.release(name, lease)).as("the forced release").isTrue();
        String nextLease = id();
        assertThat(next.tryAcquire(name, nextLease, Duration.ofSeconds(10)).acquired())
                .isTrue();
        assertThat(holder.release(name, lease))
                .as("the forced-out holder's release")
                .isFalse();
        assertThat(operator.release(name, lease))
                .as("the same forced release again, sent late: it names the ended grant, not the path")
                .isFalse();
        assertThat(operator.inspect(name).orElseThrow().leaseId()).isEqualTo(nextLease);
        assertThat(next.renew(List.of(new RenewRequest(name, nextLease, Duration.ofSeconds(10), null)))
                        .get(0)
                        .renewed())
                .isTrue();
        assertThat(next.release(name, nextLease)).isTrue();
    }

    @Test
    void aWatchIsRegisteredByARefusedAttemptNotByAGrant() throws Exception {
        ZooKeeperLockBackend holder = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend waiter = open(ZooKeeperServer.shared());
        String name = name();
        String lease = id();
        try (WakeUpSubscription ignored = SpiChecks.subscribe(holder, name, () -> {})) {
            assertThat(holder.tryAcquire(name, lease, Duration.ofSeconds(10)).acquired())
                    .isTrue();
            assertThat(holder.watchRegistered(name))
                    .as("granted at once: no watch")
                    .isFalse();
        }
        try (WakeUpSubscription ignored = SpiChecks.subscribe(waiter, name, () -> {})) {
            assertThat(waiter.watchRegistered(name)).as("before any attempt").isFalse();
            assertThat(waiter.tryAcquire(name, id(), Duration.ofSeconds(10)).acquired())
                    .isFalse();
            assertThat(waiter.watchRegistered(name)).as("after a refusal").isTrue();
            awaitTrue(() -> waiter.watchConfirmed(name));
        }
        assertThat(holder.release(name, lease)).isTrue();
    }

    @Test
    void releaseWakesAWatcherAtOnce() throws Exception {
        ZooKeeperLockBackend holder = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend waiter = open(ZooKeeperServer.shared());
        String name = name();
        String lease = id();
        assertThat(holder.tryAcquire(name, lease, Duration.ofSeconds(10)).acquired())
                .isTrue();
        AtomicReference<CountDownLatch> woken = new AtomicReference<>(new CountDownLatch(1));
        try (WakeUpSubscription ignored =
                SpiChecks.subscribe(waiter, name, () -> woken.get().countDown())) {
            assertThat(waiter.tryAcquire(name, id(), Duration.ofSeconds(10)).acquired())
                    .isFalse();
            awaitTrue(() -> waiter.watchConfirmed(name));
            woken.set(new CountDownLatch(1)); // only the delete may wake it from here on
            long released = System.nanoTime();
            assertThat(holder.release(name, lease)).isTrue();
            assertThat(woken.get().await(5, TimeUnit.SECONDS))
                    .as("woken by the delete")
                    .isTrue();
            System.out.println(
                    "[zookeeper] release -> watch callback: " + (System.nanoTime() - released) / 1000 + " us");
        }
    }

    @Test
    void releaseIsOwnerCheckedAndNamesKeepTheirSlashes() {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        ZooKeeperLockBackend other = open(ZooKeeperServer.shared());
        String name = name() + "/a/../b/.";
        String lease = id();
        assertThat(b.tryAcquire(name, lease, Duration.ofSeconds(10)).acquired()).isTrue();
        assertThat(b.list(name.substring(0, 20)).stream().map(LockInfo::name)).containsExactly(name);
        assertThat(b.release(name, id())).as("a stranger's release").isFalse();
        assertThat(other.release(name, id()))
                .as("a stranger's release through another backend")
                .isFalse();
        assertThat(b.inspect(name).orElseThrow().leaseId()).isEqualTo(lease);
        assertThat(b.release(name, lease)).isTrue();
        assertThat(b.release(name, lease)).isFalse();
        assertThat(Znodes.encode("..")).isEqualTo("%2E%2E");
        assertThat(Znodes.decode(Znodes.encode("a/b"))).isEqualTo("a/b");
    }

    @Test
    void ttlsOutsideTheServersSessionBoundsAreRefusedOrRaised() {
        ZooKeeperLockBackend b = open(ZooKeeperServer.shared());
        // the fixture's maxSessionTimeout is 60 s: a longer TTL could outlive its session's guarantee
        assertThatThrownBy(() -> b.tryAcquire(name(), id(), Duration.ofMinutes(2)))
                .isInstanceOfSatisfying(
                        LockBackendException.class,
                        e -> assertThat(e.isRetryable()).isFalse())
                .hasMessageContaining("maxSessionTimeout")
                .hasMessageContaining("PT2M");
        // below the smallest session (two ticks, 200 ms) the lock is granted on a 200 ms session. Its client
        // drops the connection when the server answers nothing for two thirds of that, as it does while a slow
        // fsync holds every answer back: a retryable failure, after which the engine tries again; so does this
        // (an attempt whose outcome is unknown is given back at its 50 ms due time)
        String name = name();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean granted = false;
        while (!granted) {
            assertThat(System.nanoTime() - end).as("granted within 10 s").isNegative();
            try {
                granted = b.tryAcquire(name, id(), Duration.ofMillis(50)).acquired();
            } catch (LockBackendException e) {
                assertThat(e.isRetryable())
                        .as("only a retryable failure: " + e.getMessage())
                        .isTrue();
            }
        }
        assertThat(b.sessions()
                        .get(Sessions.sessionMillis(Duration.ofMillis(50)))
                        .negotiatedMillis())
                .isEqualTo(200);
    }

    /**
     * The session that learns the server's maxSessionTimeout asks for the longest timeout there is, so its
     * client's connect timeout (the asked timeout over the servers) is weeks: a handshake lost on the way was
     * never retried, and the first acquire failed with "no ZooKeeper server answered". It tries a new
     * connection after a share of the request timeout.
     */
    @Test
    void theMaxSessionTimeoutProbeRetriesAHandshakeThatWentUnanswered() throws Exception {
        ZooKeeperServer server = ZooKeeperServer.shared();
        try (FaultProxy proxy = FaultProxy.start(server.address().orElseThrow())) {
            proxy.blackhole();
            ZooKeeperLockBackend b = ZooKeeperLockBackend.builder()
                    .servers(proxy.address().getHostString() + ":"
                            + proxy.address().getPort())
                    .requestTimeout(Duration.ofSeconds(6))
                    .build();
            opened.add(b);
            CompletableFuture<Duration> max = CompletableFuture.supplyAsync(b::maxTtl);
            // its handshake is swallowed: accepted is not enough, the client may write it after heal()
            awaitTrue(() -> proxy.connectionsAccepted() >= 1 && proxy.bytesDiscarded() > 0);
            proxy.heal(); // bytes lost stay lost: only a new connection gets an answer
            assertThat(max.get(30, TimeUnit.SECONDS)).isEqualTo(Duration.ofMinutes(1));
            assertThat(proxy.connectionsAccepted()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void badSettingsAreRejectedBeforeAnyIo() {
        for (String bad : new String[] {
            "",
            "/",
            "no-slash",
            "/trailing/",
            "/has space",
            "/a//b",
            "/zookeeper",
            "/zookeeper/x",
            "/" + "x".repeat(130),
            "/é"
        }) {
            assertThatThrownBy(() -> ZooKeeperLockBackend.builder().basePath(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("basePath");
        }
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().basePath(null)).hasMessageContaining("null");
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().servers("127.0.0.1"))
                .hasMessageContaining("host:port");
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().servers("127.0.0.1:0"))
                .hasMessageContaining("port");
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().servers("user:secret@127.0.0.1:2181"))
                .isInstanceOf(IllegalArgumentException.class)
                .message()
                .doesNotContain("secret");
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().build()).hasMessageContaining("no ZooKeeper servers");
        assertThatThrownBy(() -> ZooKeeperLockBackend.builder().requestTimeout(Duration.ZERO))
                .hasMessageContaining("positive");
        assertThat(Sessions.sessionMillis(Duration.ofMillis(300))).isEqualTo(320);
        assertThat(Sessions.sessionMillis(Duration.ofMillis(1000))).isEqualTo(1024);
        assertThat(Sessions.sessionMillis(Duration.ofMillis(1024))).isEqualTo(1024);
        assertThat(Sessions.sessionMillis(Duration.ofSeconds(30))).isEqualTo(30720);
        assertThat(Sessions.sessionMillis(Duration.ofNanos(1))).isEqualTo(1);
        for (long ms = 17; ms < 100_000; ms += 7) {
            long s = Sessions.sessionMillis(Duration.ofMillis(ms));
            assertThat(s).as("session for %d ms", ms).isGreaterThanOrEqualTo(ms).isLessThanOrEqualTo(ms + ms / 8);
        }
    }

    @Test
    void theProviderIsFoundAndOpensFromAZooKeeperUri() {
        ZooKeeperServer server = ZooKeeperServer.shared();
        LockBackendProvider provider = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("zookeeper"))
                .findFirst()
                .orElseThrow();
        assertThat(provider.accepts("zookeeper://127.0.0.1:2181")).isTrue();
        assertThatThrownBy(() -> provider.open("zookeeper://127.0.0.1:1", Map.of("basePath", "bad")))
                .hasMessageContaining("basePath");
        assertThatThrownBy(() -> provider.open("zookeeper://127.0.0.1:1", Map.of("nope", "x")))
                .hasMessageContaining("unknown");
        assertThatThrownBy(() -> provider.open("zookeeper://127.0.0.1:1/bad chroot", Map.of()))
                .hasMessageContaining("chroot");
        assertThatThrownBy(() -> provider.open("zookeeper://admin:secret@127.0.0.1:2181", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .message()
                .doesNotContain("secret");
        assertThatThrownBy(() -> provider.open("zookeeper://127.0.0.1:2181/app?auth=secret", Map.of()))
                .hasMessageContaining("parameters")
                .message()
                .doesNotContain("secret");
        assertThatThrownBy(() -> provider.open("zookeeper://127.0.0.1:x", Map.of()))
                .hasMessageContaining("port 'x' of ZooKeeper server");
        assertThatThrownBy(() -> provider.open("zookeeper://", Map.of())).isInstanceOf(IllegalArgumentException.class);
        try (LockBackend b =
                provider.open(server.url(), Map.of("basePath", "/fencelock-test/locks", "requestTimeout", "PT3S"))) {
            assertThat(b.capabilities())
                    .contains(
                            Capability.FENCING,
                            Capability.DURABLE_TOKENS,
                            Capability.WAKE_ON_RELEASE,
                            Capability.LINEARIZABLE,
                            Capability.BATCH_RENEW)
                    .doesNotContain(Capability.TOKEN_PERIOD, Capability.PURGE_FREE);
            String name = name();
            assertThat(b.tryAcquire(name, id(), Duration.ofSeconds(5)).acquired())
                    .isTrue();
            assertThat(b.list("").stream().map(LockInfo::name)).contains(name);
        }
    }

    private static ReleaseFeed.Sink recordingSink(BlockingQueue<String> heard) {
        return new ReleaseFeed.Sink() {
            @Override
            public void released(String name) {
                heard.add("released " + name);
            }

            @Override
            public void broken(Throwable cause) {
                heard.add("broken " + cause);
            }

            @Override
            public void resumed() {
                heard.add("resumed");
            }
        };
    }

    /** The shared server's session expiry is checked once a tick ({@code tickTime}). */
    private static final long TICK_MILLIS = 100;
    /** What a server's or a client's timer may run late on a busy machine, on top of the time it promises. */
    private static final long SLACK_MILLIS = 500;

    /** A plain ZooKeeper client of {@code server}, connected, closed after the test. */
    private org.apache.zookeeper.ZooKeeper rawClient(ZooKeeperServer server) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        org.apache.zookeeper.ZooKeeper raw = new org.apache.zookeeper.ZooKeeper(server.connectString(), 10_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        opened.add(raw::close);
        assertThat(connected.await(10, TimeUnit.SECONDS)).isTrue();
        return raw;
    }

    /**
     * Whether the server had ended {@code name}'s lock (a delete or a session's expiry) before this call.
     * The server orders every change: a write made now comes after all it took in before it, however
     * long any of them takes to reach its disk (an fsync on a busy disk can take seconds), and a read
     * after that write in the same session sees them all. So this holds the server to the time it
     * promised, not to the disk's.
     */
    private static boolean endedOnTheServer(org.apache.zookeeper.ZooKeeper raw, String name) throws Exception {
        raw.create(
                "/fencelock-order-" + UUID.randomUUID(),
                new byte[0],
                org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.EPHEMERAL);
        return raw.exists("/fencelock/" + Znodes.encode(name), false) == null;
    }

    /** When {@code observer} first saw {@code name} free (nanoTime), polling until {@code deadline}; -1 if not by then. */
    private static long firstSeenFree(ZooKeeperLockBackend observer, String name, long deadline)
            throws InterruptedException {
        return firstTrueBy(() -> observer.inspect(name).isEmpty(), deadline);
    }

    /** When {@code condition} first held (nanoTime), polling it until {@code deadline}; -1 if not by then. */
    private static long firstTrueBy(BooleanSupplier condition, long deadline) throws InterruptedException {
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                return -1;
            }
            Thread.sleep(5); // polling the condition
        }
        return System.nanoTime();
    }

    private static long millisBetween(long fromNanos, long toNanos) {
        return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
    }

    static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        assertThat(firstTrueBy(condition, System.nanoTime() + TimeUnit.SECONDS.toNanos(10)))
                .as("condition met within 10 s")
                .isNotNegative();
    }
}
