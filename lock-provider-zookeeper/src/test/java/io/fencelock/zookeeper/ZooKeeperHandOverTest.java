package io.fencelock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.testservers.zookeeper.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code handOver} on a real server: a delete and a create in one {@code multi}, after the holder's znode is read. */
class ZooKeeperHandOverTest {
    private static final Duration LONG = Duration.ofSeconds(10);

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private ZooKeeperLockBackend open() {
        ZooKeeperLockBackend b = (ZooKeeperLockBackend)
                new ZooKeeperLockBackendProvider().open(ZooKeeperServer.shared().url(), Map.of());
        opened.add(b);
        return b;
    }

    private static String name() {
        return "handover-" + UUID.randomUUID();
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    private static boolean renews(ZooKeeperLockBackend b, String name, String lease, Duration ttl) {
        return b.renew(List.of(new RenewRequest(name, lease, ttl, null))).get(0).renewed();
    }

    /**
     * The new lease gets a higher token, its TTL's session and its metadata; the old lease can neither renew
     * nor release; nobody else can take the name.
     */
    @Test
    void handOverGrantsANewerTokenOnTheNewTtlsSessionAndEndsTheHolder() throws Exception {
        ZooKeeperLockBackend a = open();
        ZooKeeperLockBackend other = open();
        assertThat(a.capabilities()).contains(Capability.HAND_OVER);
        String name = name();
        String from = id();
        LockMetadata before = LockMetadata.of("host/1/a-1", "job", Map.of("step", "1"));
        AcquireResult first = a.tryAcquire(name, from, LONG, before);
        assertThat(first.acquired()).isTrue();

        String to = id();
        Duration ttl = Duration.ofSeconds(2); // another TTL class, so another session than the holder's
        LockMetadata after = LockMetadata.of("host/1/a-2", "job", Map.of("step", "2"));
        AcquireResult handed = a.handOver(name, from, to, ttl, after);

        assertThat(handed.acquired()).isTrue();
        assertThat(handed.token()).isGreaterThan(first.token());
        LockInfo seen = other.inspect(name).orElseThrow();
        assertThat(seen.leaseId()).isEqualTo(to);
        assertThat(seen.token()).isEqualTo(handed.token());
        assertThat(seen.metadata()).isEqualTo(after);
        Session session = a.sessions().get(Sessions.sessionMillis(ttl));
        Stat stat = session.zk.exists("/fencelock/" + Znodes.encode(name), false);
        assertThat(stat.getEphemeralOwner())
                .as("the new znode rides on the session of the new TTL's class")
                .isEqualTo(session.id())
                .isNotEqualTo(a.sessions().get(Sessions.sessionMillis(LONG)).id());

        assertThat(renews(a, name, from, LONG)).as("the old lease renews").isFalse();
        assertThat(a.release(name, from)).as("the old lease releases").isFalse();
        assertThat(other.tryAcquire(name, id(), LONG).acquired()).isFalse();
        assertThat(renews(a, name, to, ttl)).isTrue();
        assertThat(other.inspect(name).orElseThrow().token()).isEqualTo(handed.token());
        assertThat(a.release(name, to)).isTrue();
        assertThat(other.inspect(name)).isEmpty();
    }

    /** A lease that does not hold the name hands nothing over, and the name's state is exactly as before. */
    @Test
    void aHandOverFromALeaseThatDoesNotHoldTheNameChangesNothing() throws Exception {
        ZooKeeperLockBackend a = open();
        ZooKeeperLockBackend b = open();
        ZooKeeperLockBackend operator = open();
        String name = name();

        String released = id();
        assertThat(a.tryAcquire(name, released, LONG).acquired()).isTrue();
        assertThat(a.release(name, released)).isTrue();
        assertThat(a.handOver(name, released, id(), LONG, LockMetadata.NONE).acquired())
                .as("from a released lease, the name free")
                .isFalse();
        assertThat(b.inspect(name)).isEmpty();

        String holder = id();
        AcquireResult held = b.tryAcquire(name, holder, LONG);
        assertThat(a.handOver(name, released, id(), LONG, LockMetadata.NONE).acquired())
                .as("from a released lease, the name taken again")
                .isFalse();
        assertThat(a.handOver(name, id(), id(), LONG, LockMetadata.NONE).acquired())
                .as("from a stranger's lease")
                .isFalse();
        assertUnchanged(b, name, holder, held.token());

        // forced out: the holder's backend still counts the lease as its own, but the znode is another grant's
        assertThat(operator.release(name, holder)).as("the forced release").isTrue();
        String next = id();
        AcquireResult nextGrant = a.tryAcquire(name, next, LONG);
        assertThat(b.handOver(name, holder, id(), LONG, LockMetadata.NONE).acquired())
                .as("from a forced-out lease")
                .isFalse();
        assertUnchanged(a, name, next, nextGrant.token());
    }

    /** Given back at its TTL by its own backend and taken by another client: a hand-over from it is refused. */
    @Test
    void aHandOverFromAnExpiredAndTakenOverLeaseChangesNothing() throws Exception {
        ZooKeeperLockBackend a = open();
        ZooKeeperLockBackend b = open();
        String name = name();
        String expired = id();
        assertThat(a.tryAcquire(name, expired, Duration.ofMillis(300)).acquired())
                .isTrue();
        ZooKeeperLockBackendTest.awaitTrue(
                () -> b.inspect(name).isEmpty()); // not renewed: its backend gave it back at its TTL
        String taker = id();
        AcquireResult taken = b.tryAcquire(name, taker, LONG);
        assertThat(taken.acquired()).isTrue();
        assertThat(a.handOver(name, expired, id(), LONG, LockMetadata.NONE).acquired())
                .isFalse();
        assertUnchanged(b, name, taker, taken.token());
    }

    /**
     * Another client's waiter hears the {@code multi}'s delete like a release: its attempt is then refused,
     * and its watch stays in place, so the new holder's release wakes it and it takes the name.
     */
    @Test
    void anotherClientsWaiterIsRefusedAfterAHandOverAndWokenByTheNewHoldersRelease() throws Exception {
        ZooKeeperLockBackend holder = open();
        ZooKeeperLockBackend waiter = open();
        String name = name();
        String from = id();
        assertThat(holder.tryAcquire(name, from, LONG).acquired()).isTrue();
        AtomicReference<CountDownLatch> woken = new AtomicReference<>(new CountDownLatch(1));
        try (WakeUpSubscription ignored =
                SpiChecks.subscribe(waiter, name, () -> woken.get().countDown())) {
            assertThat(waiter.tryAcquire(name, id(), LONG).acquired()).isFalse();
            ZooKeeperLockBackendTest.awaitTrue(() -> waiter.watchConfirmed(name));

            String to = id();
            AcquireResult handed = holder.handOver(name, from, to, LONG, LockMetadata.NONE);
            assertThat(handed.acquired()).isTrue();
            // a client sees a watch's event before the data after it: once this read shows the new holder, any
            // signal of the hand-over's delete has come
            assertThat(waiter.inspect(name).orElseThrow().leaseId()).isEqualTo(to);
            assertThat(waiter.tryAcquire(name, id(), LONG).acquired())
                    .as("the waiter's attempt after the hand-over")
                    .isFalse();
            assertThat(waiter.watchRegistered(name)).isTrue();

            woken.set(new CountDownLatch(1)); // only the new holder's release may wake it from here on
            assertThat(holder.release(name, to)).isTrue();
            assertThat(woken.get().await(5, TimeUnit.SECONDS))
                    .as("woken by the new holder's release")
                    .isTrue();
            AcquireResult next = waiter.tryAcquire(name, id(), LONG);
            assertThat(next.acquired()).isTrue();
            assertThat(next.token()).isGreaterThan(handed.token());
        }
    }

    /**
     * Through the engine: the holder's release hands the name to its own client's waiter in one hand-over (no
     * release, no acquire), while another client's waiter waits on and gets it after the new holder's release.
     */
    @Test
    void throughTheEngineAWaiterOfAnotherClientGetsTheNameAfterAHandOver() throws Exception {
        ZooKeeperLockBackendProvider provider = new ZooKeeperLockBackendProvider();
        String url = ZooKeeperServer.shared().url();
        // each client closes its own backend
        HandOverProviderChecks.assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
                provider.open(url, Map.of()), provider.open(url, Map.of()), name());
    }

    private static void assertUnchanged(ZooKeeperLockBackend holderBackend, String name, String lease, long token) {
        LockInfo now = holderBackend.inspect(name).orElseThrow();
        assertThat(now.leaseId()).isEqualTo(lease);
        assertThat(now.token()).isEqualTo(token);
        assertThat(renews(holderBackend, name, lease, LONG))
                .as("the holder still renews")
                .isTrue();
    }
}
