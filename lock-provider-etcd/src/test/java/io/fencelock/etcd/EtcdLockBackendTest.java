package io.fencelock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.CredentialChecks;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.fault.FaultProxy;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.tck.spi.QueuedGrantProviderChecks;
import io.fencelock.testservers.etcd.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The etcd primitive itself, on a real etcd (the shared single node unless a test needs its own). */
class EtcdLockBackendTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private EtcdLockBackend open(EtcdServer server) {
        EtcdLockBackend b =
                EtcdLockBackend.builder().endpoints(server.endpoints()).build();
        opened.add(b);
        return b;
    }

    private static String name() {
        return "test-" + UUID.randomUUID();
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    @Test
    void tokenIsTheCreateRevisionAndRisesAcrossReleaseExpiryAndTakeover() throws Exception {
        EtcdLockBackend a = open(EtcdServer.shared());
        EtcdLockBackend b = open(EtcdServer.shared());
        String name = name();
        AcquireResult first = a.tryAcquire(name, id(), Duration.ofSeconds(5));
        assertThat(first.acquired()).isTrue();
        assertThat(a.inspect(name).orElseThrow().token()).isEqualTo(first.token());
        assertThat(b.tryAcquire(name, id(), Duration.ofSeconds(5)).acquired())
                .as("held")
                .isFalse();
        String firstId = a.inspect(name).orElseThrow().leaseId();
        assertThat(a.release(name, firstId)).isTrue();
        AcquireResult second = b.tryAcquire(name, id(), Duration.ofMillis(300));
        assertThat(second.token()).as("after release").isGreaterThan(first.token());
        // not renewed: the key dies with its etcd lease (1 s on the fixture's settings, checked every 500 ms)
        long start = System.nanoTime();
        AcquireResult third;
        do {
            Thread.sleep(20);
            third = a.tryAcquire(name, id(), Duration.ofSeconds(5));
        } while (!third.acquired() && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
        assertThat(third.acquired()).as("taken over after expiry").isTrue();
        assertThat(third.token()).as("after expiry and takeover").isGreaterThan(second.token());
        System.out.println(
                "[etcd] a 300 ms lock expired on the server after " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    @Test
    void tokensSurviveARestartOfTheServer() throws Exception {
        try (EtcdServer own = EtcdServer.start()) {
            ServerControl control = own.control().orElse(null);
            org.junit.jupiter.api.Assumptions.assumeTrue(control != null, "needs a server this fixture runs itself");
            String name = name();
            long before;
            try (EtcdLockBackend b =
                    EtcdLockBackend.builder().endpoints(own.endpoints()).build()) {
                String lease = id();
                before = b.tryAcquire(name, lease, Duration.ofSeconds(30)).token();
                assertThat(b.release(name, lease)).isTrue();
            }
            control.kill();
            control.start();
            try (EtcdLockBackend b =
                    EtcdLockBackend.builder().endpoints(own.endpoints()).build()) {
                AcquireResult after = b.tryAcquire(name, id(), Duration.ofSeconds(30));
                assertThat(after.acquired()).isTrue();
                assertThat(after.token()).as("token after SIGKILL and restart").isGreaterThan(before);
            }
        }
    }

    @Test
    void renewingManyLocksOnOneLeaseIsOneKeepAliveAndOneRead() {
        EtcdLockBackend b = open(EtcdServer.shared());
        Duration ttl = Duration.ofSeconds(10);
        List<RenewRequest> requests = new ArrayList<>();
        long t = System.nanoTime();
        for (int i = 0; i < 300; i++) {
            String name = name();
            String lease = id();
            assertThat(b.tryAcquire(name, lease, ttl).acquired()).isTrue();
            requests.add(new RenewRequest(name, lease, ttl, null));
        }
        System.out.println("[etcd] 300 acquires took " + (System.nanoTime() - t) / 1_000_000 + " ms");
        List<LockInfo> listed = b.list("test-");
        assertThat(listed.stream().map(LockInfo::leaseId))
                .containsAll(requests.stream().map(RenewRequest::leaseId).toList());
        long leases = listed.stream()
                .filter(i -> requests.stream().anyMatch(r -> r.name().equals(i.name())))
                .count();
        assertThat(leases).isEqualTo(300);
        t = System.nanoTime();
        List<RenewResult> results = b.renew(requests);
        System.out.println("[etcd] renewing 300 locks took " + (System.nanoTime() - t) / 1000 + " us");
        assertThat(results).hasSize(300).allMatch(RenewResult::renewed);
        assertThat(results.get(0).token()).isPositive();
        requests.forEach(r -> b.release(r.name(), r.leaseId()));
    }

    @Test
    void locksOfALeaseThatCannotBeKeptAliveAreRejected() throws Exception {
        EtcdServer server = EtcdServer.shared();
        EtcdLockBackend b = open(server);
        Duration ttl = Duration.ofSeconds(10);
        String x = name();
        String y = name();
        String xl = id();
        String yl = id();
        b.tryAcquire(x, xl, ttl);
        b.tryAcquire(y, yl, ttl);
        long etcdLease;
        try (io.etcd.jetcd.Client raw = io.etcd.jetcd.Client.builder()
                .endpoints(server.endpoints().toArray(String[]::new))
                .build()) {
            etcdLease = raw.getKVClient()
                    .get(io.etcd.jetcd.ByteSequence.from("fencelock/" + x, java.nio.charset.StandardCharsets.UTF_8))
                    .get(5, TimeUnit.SECONDS)
                    .getKvs()
                    .get(0)
                    .getLease();
            raw.getLeaseClient().revoke(etcdLease).get(5, TimeUnit.SECONDS); // the lease dies on the server
        }
        List<RenewResult> results =
                b.renew(List.of(new RenewRequest(x, xl, ttl, null), new RenewRequest(y, yl, ttl, null)));
        assertThat(results).noneMatch(RenewResult::renewed);
        assertThat(b.inspect(x)).isEmpty();
        // the backend grants a new lease for the next lock of that TTL
        AcquireResult again = b.tryAcquire(x, id(), ttl);
        assertThat(again.acquired()).isTrue();
    }

    @Test
    void theKeysValueIsTheLeaseIdTheGrantTimeAndTheMetadata() throws Exception {
        EtcdServer server = EtcdServer.shared();
        EtcdLockBackend b = open(server);
        String name = name();
        String lease = id();
        LockMetadata metadata = LockMetadata.of("ops", "job", Map.of("run", "7"));
        long before = System.currentTimeMillis();
        assertThat(b.tryAcquire(name, lease, Duration.ofSeconds(10), metadata).acquired())
                .isTrue();
        long after = System.currentTimeMillis();
        String[] value;
        try (io.etcd.jetcd.Client raw = io.etcd.jetcd.Client.builder()
                .endpoints(server.endpoints().toArray(String[]::new))
                .build()) {
            value = raw.getKVClient()
                    .get(io.etcd.jetcd.ByteSequence.from("fencelock/" + name, StandardCharsets.UTF_8))
                    .get(5, TimeUnit.SECONDS)
                    .getKvs()
                    .get(0)
                    .getValue()
                    .toString(StandardCharsets.UTF_8)
                    .split("\n", 3);
        }
        assertThat(value[0]).isEqualTo(lease);
        assertThat(Long.parseLong(value[1]))
                .as("the grant's time: this client's clock when the transaction went out")
                .isBetween(before, after);
        assertThat(value[2]).isEqualTo(MetadataCodec.encode(metadata));
        // a lease id with a line feed could fall in another's owner-check range: refused before any I/O
        assertThatThrownBy(() -> b.release(name, lease + "\n" + value[1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("line feed");
        // renewed to another TTL, the key moves to another etcd lease with its value as it was
        assertThat(b.renew(List.of(new RenewRequest(name, lease, Duration.ofSeconds(3), null)))
                        .get(0)
                        .renewed())
                .isTrue();
        LockInfo seen = b.inspect(name).orElseThrow();
        assertThat(seen.metadata()).isEqualTo(metadata);
        assertThat(seen.heldSince().toEpochMilli()).isEqualTo(Long.parseLong(value[1]));
        assertThat(b.release(name, lease)).isTrue();
    }

    /**
     * The engine frees a shortened lease itself when its deadline passes; this is the backend alone:
     * a holder that shortens its lock and then stops must not keep it for the old TTL.
     */
    @Test
    void aLockRenewedToAShorterTtlIsFreedWhenThatEndsThoughItsOldLeaseLivesOn() throws Exception {
        EtcdLockBackend a = open(EtcdServer.shared());
        EtcdLockBackend b = open(EtcdServer.shared());
        Duration longTtl = Duration.ofSeconds(60);
        Duration shorter = Duration.ofMillis(1500);
        String name = name();
        String lease = id();
        String sibling = name();
        assertThat(a.tryAcquire(sibling, id(), longTtl).acquired()).isTrue(); // keeps the 61 s etcd lease in use
        assertThat(a.tryAcquire(name, lease, longTtl).acquired()).isTrue();
        long sent = System.nanoTime();
        assertThat(a.renew(List.of(new RenewRequest(name, lease, shorter, null)))
                        .get(0)
                        .renewed())
                .isTrue();
        AcquireResult next;
        do {
            next = b.tryAcquire(name, id(), shorter);
            Thread.sleep(50);
        } while (!next.acquired() && System.nanoTime() - sent < TimeUnit.SECONDS.toNanos(10));
        long tookMs = (System.nanoTime() - sent) / 1_000_000;
        System.out.println("[etcd] a lock shortened to 1.5 s was free on the server after " + tookMs + " ms");
        assertThat(next.acquired())
                .as("free once the shorter TTL (and its etcd lease) ended")
                .isTrue();
        assertThat(tookMs)
                .as("ms from the shortening (an etcd lease of ceil(1.5) = 2 s, revoked within 500 ms)")
                .isBetween(shorter.toMillis(), 6_000L);
    }

    /**
     * A 2 s lock rides an etcd lease of exactly 2 s (no headroom: a crashed holder's lock is free within
     * the TTL and etcd's 500 ms revocation), so a grant on a lease kept alive earlier must keep it alive
     * again: right after it, the lease has at least a second left, however little it had before.
     */
    @Test
    void aLockRidesALeaseOfItsTtlKeptAliveByTheGrantsThatNeedIt() throws Exception {
        EtcdServer server = EtcdServer.shared();
        EtcdLockBackend b = open(server);
        Duration ttl = Duration.ofSeconds(2);
        String first = name();
        assertThat(b.tryAcquire(first, id(), ttl).acquired()).isTrue();
        try (io.etcd.jetcd.Client raw = io.etcd.jetcd.Client.builder()
                .endpoints(server.endpoints().toArray(String[]::new))
                .build()) {
            long lease = leaseOf(raw, first);
            io.etcd.jetcd.lease.LeaseTimeToLiveResponse life = raw.getLeaseClient()
                    .timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                    .get(5, TimeUnit.SECONDS);
            assertThat(life.getGrantedTTL()).as("the etcd lease's TTL, s").isEqualTo(2);
            // polls until less than a second is left (etcd truncates to whole seconds); the lease's
            // own 2 s bound this, the deadline only guards against a server that never counts down
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (life.getTTL() >= 1) {
                assertThat(System.nanoTime() - deadline)
                        .as("the lease counting down")
                        .isNegative();
                Thread.sleep(20);
                life = raw.getLeaseClient()
                        .timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                        .get(5, TimeUnit.SECONDS);
            }
            String second = name();
            assertThat(b.tryAcquire(second, id(), ttl).acquired()).isTrue();
            long secondLease = leaseOf(raw, second);
            assertThat(raw.getLeaseClient()
                            .timeToLive(secondLease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                            .get(5, TimeUnit.SECONDS)
                            .getTTL())
                    .as("whole seconds left on the new lock's etcd lease right after its grant")
                    .isGreaterThanOrEqualTo(1);
        }
    }

    private static long leaseOf(io.etcd.jetcd.Client raw, String name) throws Exception {
        return raw.getKVClient()
                .get(io.etcd.jetcd.ByteSequence.from("fencelock/" + name, StandardCharsets.UTF_8))
                .get(5, TimeUnit.SECONDS)
                .getKvs()
                .get(0)
                .getLease();
    }

    @Test
    void aLockNobodyRenewsIsNotCarriedByItsSiblingsRenewals() throws Exception {
        EtcdLockBackend b = open(EtcdServer.shared());
        Duration ttl = Duration.ofMillis(600);
        String kept = name();
        String keptId = id();
        String dropped = name();
        String droppedId = id();
        assertThat(b.tryAcquire(kept, keptId, ttl).acquired()).isTrue();
        assertThat(b.tryAcquire(dropped, droppedId, ttl).acquired()).isTrue();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < end) {
            assertThat(b.renew(List.of(new RenewRequest(kept, keptId, ttl, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            Thread.sleep(150);
        }
        assertThat(b.inspect(kept)).isPresent();
        assertThat(b.inspect(dropped))
                .as("the lock its holder stopped renewing")
                .isEmpty();
    }

    @Test
    void aGrantWhoseAnswerWasLostIsNotCarriedByItsSiblingsRenewals() throws Exception {
        EtcdServer server = EtcdServer.shared();
        EtcdLockBackend direct = open(server);
        try (FaultProxy proxy = FaultProxy.start(server.address().orElseThrow())) {
            EtcdLockBackend b = EtcdLockBackend.builder()
                    .endpoints(server.endpointVia(proxy.address()))
                    .requestTimeout(Duration.ofMillis(1500))
                    .build();
            opened.add(b);
            Duration ttl = Duration.ofSeconds(2);
            String kept = name();
            String keptId = id();
            String ghost = name();
            assertThat(b.tryAcquire(kept, keptId, ttl).acquired()).isTrue();
            proxy.dropResponses(); // etcd applies the transaction, the backend never hears of it
            assertThatThrownBy(() -> b.tryAcquire(ghost, id(), ttl)).isInstanceOf(LockBackendException.class);
            assertThat(direct.inspect(ghost))
                    .as("the grant whose answer was lost")
                    .isPresent();
            proxy.heal();
            proxy.reset(); // the HTTP/2 connection lost frames: start a fresh one
            // the holder of its sibling renews on: the shared etcd lease stays alive past the ghost's TTL
            long end = System.nanoTime() + ttl.plusSeconds(2).toNanos();
            while (System.nanoTime() - end < 0) {
                try {
                    b.renew(List.of(new RenewRequest(kept, keptId, ttl, null)));
                } catch (LockBackendException reconnecting) {
                    // the backend reconnects through the healed proxy; the next renewal goes through
                }
                Thread.sleep(200); // renewing at a tenth of the TTL
            }
            assertThat(direct.inspect(kept))
                    .as("the sibling, renewed throughout")
                    .isPresent();
            assertThat(direct.inspect(ghost))
                    .as("the grant nobody knew of, past its TTL")
                    .isEmpty();
        }
    }

    @Test
    void releaseWakesAWatcherAtOnce() throws Exception {
        EtcdLockBackend holder = open(EtcdServer.shared());
        EtcdLockBackend waiter = open(EtcdServer.shared());
        String name = name();
        String lease = id();
        assertThat(holder.tryAcquire(name, lease, Duration.ofSeconds(10)).acquired())
                .isTrue();
        AtomicReference<CountDownLatch> woken = new AtomicReference<>(new CountDownLatch(1));
        try (WakeUpSubscription ignored =
                SpiChecks.subscribe(waiter, name, () -> woken.get().countDown())) {
            assertThat(waiter.tryAcquire(name, id(), Duration.ofSeconds(10)).acquired())
                    .isFalse();
            long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!waiter.watchConfirmed(name)) {
                assertThat(System.nanoTime() - bound)
                        .as("watch confirmed within 5 s")
                        .isNegative();
                Thread.onSpinWait();
            }
            woken.set(new CountDownLatch(1)); // only the delete may wake it from here on
            long released = System.nanoTime();
            assertThat(holder.release(name, lease)).isTrue();
            assertThat(woken.get().await(5, TimeUnit.SECONDS))
                    .as("woken by the delete")
                    .isTrue();
            System.out.println("[etcd] release -> watch callback: " + (System.nanoTime() - released) / 1000 + " us");
        }
    }

    /**
     * A waiter's etcd watch is opened by its first refusal, not before its first attempt: an acquire
     * granted at once costs no watch. A release that races the watch's creation still wakes it: the
     * refusal's holder is read back once the watch stands, and its key is gone.
     */
    @Test
    void aWaitersWatchOpensAtItsFirstRefusalAndHearsAReleaseThatRacesItsCreation() throws Exception {
        EtcdLockBackend holder = open(EtcdServer.shared());
        EtcdLockBackend waiter = open(EtcdServer.shared());
        Duration ttl = Duration.ofSeconds(10);
        for (int i = 0; i < 20; i++) {
            String name = name();
            CountDownLatch woken = new CountDownLatch(1);
            try (WakeUpSubscription ignored = SpiChecks.subscribe(waiter, name, woken::countDown)) {
                String mine = id();
                assertThat(waiter.tryAcquire(name, mine, ttl).acquired()).isTrue();
                assertThat(waiter.watchOpened(name))
                        .as("a watch for an acquire granted at once")
                        .isFalse();
                assertThat(waiter.release(name, mine)).isTrue();
                String lease = id();
                assertThat(holder.tryAcquire(name, lease, ttl).acquired()).isTrue();
                assertThat(waiter.tryAcquire(name, id(), ttl).acquired()).isFalse();
                assertThat(waiter.watchOpened(name))
                        .as("a watch after the refusal")
                        .isTrue();
                assertThat(holder.release(name, lease)).isTrue(); // before, during or after the watch's creation
                assertThat(woken.await(5, TimeUnit.SECONDS))
                        .as("woken by the release (round " + i + ")")
                        .isTrue();
            }
        }
    }

    @Test
    void releaseIsOwnerChecked() {
        EtcdLockBackend b = open(EtcdServer.shared());
        String name = name();
        String lease = id();
        b.tryAcquire(name, lease, Duration.ofSeconds(10));
        assertThat(b.release(name, id())).isFalse();
        assertThat(b.inspect(name).orElseThrow().leaseId()).isEqualTo(lease);
        assertThat(b.release(name, lease)).isTrue();
        assertThat(b.release(name, lease)).isFalse();
    }

    @Test
    void badSettingsAreRejectedBeforeAnyIo() {
        for (String bad : new String[] {"", "no-slash", "has space/", "{tag}/", "x".repeat(70) + "/", "é/"}) {
            assertThatThrownBy(() -> EtcdLockBackend.builder().keyPrefix(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("keyPrefix");
        }
        assertThatThrownBy(() -> EtcdLockBackend.builder().keyPrefix(null)).hasMessageContaining("null");
        assertThatThrownBy(() -> EtcdLockBackend.builder().endpoints("https://127.0.0.1:1"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EtcdLockBackend.builder().endpoints("http://user:secret@127.0.0.1:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .message()
                .doesNotContain("secret");
        // credentials of every shape (raw special characters, percent-encoded, in parameters) are refused without them
        String special = CredentialChecks.special("etcd");
        LockBackendProvider provider = new EtcdLockBackendProvider();
        for (String uri : List.of(
                "etcd://user:" + special + "@127.0.0.1:2379",
                "etcd://user:" + CredentialChecks.encoded(special) + "@127.0.0.1:2379,127.0.0.1:2380",
                "etcd://:" + special + "@127.0.0.1:2379/x?password1=" + special)) {
            Throwable refused = catchThrowable(() -> provider.open(uri, Map.of()));
            assertThat(refused)
                    .as("refused")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("127.0.0.1:2379");
            CredentialChecks.assertNoSecret(refused, special);
        }
        for (String endpoint : List.of(
                "http://user:" + special + "@127.0.0.1:2379",
                "http://user:" + CredentialChecks.encoded(special) + "@127.0.0.1:2379",
                "http://:" + special + "@127.0.0.1:2379")) {
            Throwable refused = catchThrowable(() -> EtcdLockBackend.builder().endpoints(endpoint));
            assertThat(refused).as("refused").isInstanceOf(IllegalArgumentException.class);
            CredentialChecks.assertNoSecret(refused, special);
        }
        // a port that is no port: refused naming it, before any I/O
        for (String bad : List.of("etcd://127.0.0.1:notaport", "etcd://127.0.0.1:2379,127.0.0.1:0")) {
            assertThatThrownBy(() -> provider.open(bad, Map.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("port '")
                    .hasMessageContaining("1 to 65535");
        }
        assertThatThrownBy(() -> EtcdLockBackend.builder().endpoints("http://127.0.0.1:notaport"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port 'notaport'");
        assertThatThrownBy(() -> EtcdLockBackend.builder().build()).hasMessageContaining("no etcd endpoints");
        assertThatThrownBy(() -> EtcdLockBackend.builder().requestTimeout(Duration.ZERO))
                .hasMessageContaining("positive");
        // etcd leases: ceil(ttl), longer only within 1.25 x ttl less etcd's revocation
        assertThat(EtcdLeases.seconds(Duration.ofMillis(200))).isEqualTo(1);
        assertThat(EtcdLeases.seconds(Duration.ofMillis(900))).isEqualTo(1);
        assertThat(EtcdLeases.seconds(Duration.ofMillis(1500))).isEqualTo(2);
        assertThat(EtcdLeases.seconds(Duration.ofSeconds(2))).isEqualTo(2);
        assertThat(EtcdLeases.seconds(Duration.ofSeconds(5))).isEqualTo(5);
        assertThat(EtcdLeases.seconds(Duration.ofSeconds(6))).isEqualTo(6);
        assertThat(EtcdLeases.seconds(Duration.ofSeconds(7))).isEqualTo(8);
        assertThat(EtcdLeases.seconds(Duration.ofSeconds(30))).isEqualTo(36);
    }

    @Test
    void theProviderIsFoundAndOpensFromAnEtcdUri() {
        EtcdServer server = EtcdServer.shared();
        LockBackendProvider provider = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("etcd"))
                .findFirst()
                .orElseThrow();
        assertThat(provider.accepts("etcd://127.0.0.1:2379")).isTrue();
        assertThatThrownBy(() -> provider.open("etcd://127.0.0.1:1", Map.of("keyPrefix", "bad")))
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> provider.open("etcd://127.0.0.1:1", Map.of("nope", "x")))
                .hasMessageContaining("unknown");
        String hosts = String.join(
                ",",
                server.endpoints().stream()
                        .map(e -> e.substring("http://".length()))
                        .toList());
        try (LockBackend b =
                provider.open("etcd://" + hosts, Map.of("keyPrefix", "fencelock-test/", "requestTimeout", "PT3S"))) {
            assertThat(b.capabilities())
                    .contains(
                            Capability.FENCING,
                            Capability.DURABLE_TOKENS,
                            Capability.WAKE_ON_RELEASE,
                            Capability.METADATA,
                            Capability.EXTENDABLE_TTL)
                    .doesNotContain(Capability.TOKEN_PERIOD, Capability.PURGE_FREE);
            String name = name();
            assertThat(b.tryAcquire(name, id(), Duration.ofSeconds(5)).acquired())
                    .isTrue();
            assertThat(b.list("").stream().map(LockInfo::name)).contains(name);
        }
    }

    private static final Duration HAND_OVER_TTL = Duration.ofSeconds(30);

    private static RenewResult renew(EtcdLockBackend b, String name, String lease, Duration ttl) {
        return b.renew(List.of(new RenewRequest(name, lease, ttl, null))).get(0);
    }

    /**
     * The hand-over: one put on the held key, whose revision is the new token (the key's create revision
     * stays), so the token is read from the value's mark and the mod revision, and must survive the put
     * that moves the key to another etcd lease.
     */
    @Test
    void aHandedOverGrantKeepsItsTokenThroughRenewalsAndAMoveToAnotherTtl() {
        EtcdLockBackend b = open(EtcdServer.shared());
        String name = name();
        String holder = id();
        AcquireResult first = b.tryAcquire(name, holder, HAND_OVER_TTL, LockMetadata.of("first", "job", Map.of()));
        LockInfo before = b.inspect(name).orElseThrow();

        String next = id();
        LockMetadata metadata = LockMetadata.of("second", "handed", Map.of("n", "2"));
        AcquireResult handed = b.handOver(name, holder, next, HAND_OVER_TTL, metadata);
        assertThat(handed.acquired()).isTrue();
        assertThat(handed.token()).as("above the holder's").isGreaterThan(first.token());
        LockInfo info = b.inspect(name).orElseThrow();
        assertThat(info.leaseId()).isEqualTo(next);
        assertThat(info.token()).as("inspect reads the hand-over's token").isEqualTo(handed.token());
        assertThat(info.metadata()).isEqualTo(metadata);
        assertThat(info.heldSince()).as("the grant time, read past its mark").isAfterOrEqualTo(before.heldSince());

        assertThat(b.handOver(name, holder, id(), HAND_OVER_TTL, LockMetadata.NONE)
                        .acquired())
                .as("the old lease hands over nothing")
                .isFalse();
        assertThat(renew(b, name, holder, HAND_OVER_TTL).renewed())
                .as("nor renews")
                .isFalse();
        assertThat(renew(b, name, next, HAND_OVER_TTL).token()).isEqualTo(handed.token());

        // another HAND_OVER_TTL moves the key onto another etcd lease: a put, which raises the mod revision
        RenewResult moved = renew(b, name, next, Duration.ofSeconds(7));
        assertThat(moved.renewed()).isTrue();
        assertThat(moved.token()).as("the move keeps the token").isEqualTo(handed.token());
        LockInfo afterMove = b.inspect(name).orElseThrow();
        assertThat(afterMove.token()).isEqualTo(handed.token());
        assertThat(afterMove.metadata()).isEqualTo(metadata);
        assertThat(afterMove.heldSince()).isEqualTo(info.heldSince());
        assertThat(renew(b, name, next, HAND_OVER_TTL).token())
                .as("and moving back")
                .isEqualTo(handed.token());
        assertThat(b.inspect(name).orElseThrow().token()).isEqualTo(handed.token());

        String third = id();
        AcquireResult again = b.handOver(name, next, third, HAND_OVER_TTL, LockMetadata.NONE);
        assertThat(again.token()).as("a moved key handed over again").isGreaterThan(handed.token());
        assertThat(b.inspect(name).orElseThrow().token()).isEqualTo(again.token());
        assertThat(b.inspect(name).orElseThrow().metadata()).isEqualTo(LockMetadata.NONE);
        assertThat(b.release(name, third)).isTrue();
        AcquireResult fresh = b.tryAcquire(name, id(), HAND_OVER_TTL);
        assertThat(fresh.token()).as("a grant after the release").isGreaterThan(again.token());
    }

    /**
     * Through the engine: the holder's release hands the name to its own client's waiter in one hand-over,
     * while another client's waiter (watching the key for a delete) waits on and gets it after the new
     * holder's release.
     */
    @Test
    void throughTheEngineAWaiterOfAnotherClientGetsTheNameAfterAHandOver() throws Exception {
        // each client closes its own backend
        HandOverProviderChecks.assertAWaiterOfAnotherClientGetsTheNameAfterAHandOver(
                EtcdLockBackend.builder()
                        .endpoints(EtcdServer.shared().endpoints())
                        .build(),
                EtcdLockBackend.builder()
                        .endpoints(EtcdServer.shared().endpoints())
                        .build(),
                name());
    }

    // ------------------------------------------------------------------ the queue (GRANT_ON_RELEASE)

    /**
     * A release grants the first queued client alone, putting its grant on the mutex key in the release's
     * transaction, and the client's watch hears it: {@link QueuedGrantProviderChecks}.
     */
    @Test
    void aReleaseGrantsTheFirstQueuedClientAlone() throws Exception {
        QueuedGrantProviderChecks.assertAReleaseGrantsTheFirstQueuedWaiterAlone(
                open(EtcdServer.shared()),
                open(EtcdServer.shared()),
                open(EtcdServer.shared()),
                name(),
                EtcdLockBackendTest::places);
    }

    /**
     * A release trusts its view of the queue only as far as the queue's mark vouches for it: releases whose views
     * missed every place (as a view does for a moment after a place is written) read the queue in the same
     * transaction and still grant its first client alone, then the next.
     */
    @Test
    void aReleaseWhoseViewMissedThePlacesStillGrantsTheFirstQueuedClient() throws Exception {
        EtcdLockBackend holderSide = open(EtcdServer.shared());
        EtcdLockBackend firstSide = open(EtcdServer.shared());
        holderSide.forgetQueues();
        firstSide.forgetQueues();
        QueuedGrantProviderChecks.assertAReleaseGrantsTheFirstQueuedWaiterAlone(
                holderSide, firstSide, open(EtcdServer.shared()), name(), EtcdLockBackendTest::places);
    }

    /**
     * With its view caught up, the release that grants the last queued client deletes the queue's mark with its
     * place: a queue nobody waits in keeps no key.
     */
    @Test
    void theGrantToTheLastQueuedClientLeavesNoQueueKeyBehind() throws Exception {
        EtcdLockBackend holderSide = open(EtcdServer.shared());
        EtcdLockBackend waiterSide = open(EtcdServer.shared());
        String name = name();
        String holder = id();
        assertThat(holderSide.tryAcquire(name, holder, Duration.ofSeconds(30)).acquired())
                .isTrue();
        Semaphore told = new Semaphore(0);
        String queued = QueuedGrantProviderChecks.queue(waiterSide, name, told);
        assertThat(queueKeys(name)).as("the place and the mark").isEqualTo(2);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (holderSide.queueSeen(name) != 1) { // the view hears the place on its watch
            assertThat(System.nanoTime()).as("the holder's view sees the place").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(holderSide.release(name, holder)).isTrue();
        assertThat(told.tryAcquire(10, TimeUnit.SECONDS))
                .as("the waiter's client is told")
                .isTrue();
        assertThat(holderSide.inspect(name).map(io.fencelock.LockInfo::leaseId)).contains(queued);
        assertThat(queueKeys(name)).as("neither place nor mark").isZero();
        assertThat(waiterSide.release(name, queued)).isTrue();
    }

    /** A release of a queued lease holding nothing withdraws the place: {@link QueuedGrantProviderChecks}. */
    @Test
    void aReleaseOfAQueuedLeaseWithdrawsItsPlace() {
        QueuedGrantProviderChecks.assertAReleaseOfAQueuedLeaseWithdrawsItsPlace(
                open(EtcdServer.shared()), open(EtcdServer.shared()), name(), EtcdLockBackendTest::places);
    }

    /** A place is rewritten only when a quarter of its TTL old: {@link QueuedGrantProviderChecks}. */
    @Test
    void aPlaceGrownOldTakesTheLatestRefusedLease() {
        QueuedGrantProviderChecks.assertAPlaceGrownOldTakesTheLatestRefusedLease(
                open(EtcdServer.shared()), open(EtcdServer.shared()), name(), EtcdLockBackendTest::places);
    }

    /**
     * A queued client that crashed (its etcd lease revoked, as when it expires) leaves no place a release could
     * grant: the release frees the name, and the next caller takes it.
     */
    @Test
    void aReleaseSkipsThePlaceOfAClientWhoseEtcdLeaseIsGone() throws Exception {
        EtcdLockBackend holderSide = open(EtcdServer.shared());
        EtcdLockBackend waiterSide = open(EtcdServer.shared());
        String name = name();
        String holder = id();
        assertThat(holderSide.tryAcquire(name, holder, Duration.ofSeconds(30)).acquired())
                .isTrue();
        String queued = QueuedGrantProviderChecks.queue(waiterSide, name, new Semaphore(0));
        try (io.etcd.jetcd.Client raw = io.etcd.jetcd.Client.builder()
                .endpoints(EtcdServer.shared().endpoints().toArray(String[]::new))
                .build()) {
            long place = raw.getKVClient()
                    .get(
                            io.etcd.jetcd.ByteSequence.from(
                                    "fencelock/" + EtcdRecords.PLACE + name + EtcdRecords.PLACE,
                                    StandardCharsets.UTF_8),
                            io.etcd.jetcd.options.GetOption.builder()
                                    .isPrefix(true)
                                    .build())
                    .get(5, TimeUnit.SECONDS)
                    .getKvs()
                    .get(0)
                    .getLease();
            raw.getLeaseClient().revoke(place).get(5, TimeUnit.SECONDS);
        }
        assertThat(places(name)).as("the place went with its etcd lease").isZero();
        assertThat(holderSide.release(name, holder)).isTrue();
        assertThat(holderSide.inspect(name)).as("free: nobody left to grant").isEmpty();
        assertThat(holderSide.tryAcquire(name, id(), Duration.ofSeconds(30)).acquired())
                .isTrue();
        assertThat(queued).isNotNull();
    }

    /** How many keys {@code name}'s queue has on the shared server: its places and its mark. */
    private static int queueKeys(String name) {
        return keysUnder("fencelock/" + EtcdRecords.PLACE + name);
    }

    /** How many queue places {@code name} has on the shared server. */
    private static int places(String name) {
        return keysUnder("fencelock/" + EtcdRecords.PLACE + name + EtcdRecords.PLACE);
    }

    private static int keysUnder(String prefix) {
        try (io.etcd.jetcd.Client raw = io.etcd.jetcd.Client.builder()
                .endpoints(EtcdServer.shared().endpoints().toArray(String[]::new))
                .build()) {
            return (int) raw.getKVClient()
                    .get(
                            io.etcd.jetcd.ByteSequence.from(prefix, StandardCharsets.UTF_8),
                            io.etcd.jetcd.options.GetOption.builder()
                                    .isPrefix(true)
                                    .withCountOnly(true)
                                    .build())
                    .get(5, TimeUnit.SECONDS)
                    .getCount();
        } catch (Exception e) {
            throw new AssertionError("counting the keys under " + prefix, e);
        }
    }
}
