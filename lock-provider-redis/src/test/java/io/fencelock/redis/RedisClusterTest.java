package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The provider on a real Redis Cluster of three masters: slots, routing, cross-master listing, pub/sub. */
class RedisClusterTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private static RedisServer cluster;
    private static RedisLockBackend backend;

    @BeforeAll
    static void startCluster() {
        cluster = RedisServer.startCluster(3, RedisServer.Persistence.NONE);
        backend = RedisLockBackend.builder().uri(clusterUri(cluster)).build();
    }

    @AfterAll
    static void stopCluster() {
        if (backend != null) {
            backend.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...}: every master as a seed node. */
    static String clusterUri(RedisServer cluster) {
        return "redis-cluster://"
                + cluster.nodeUris().stream()
                        .map(u -> u.substring("redis://".length()))
                        .collect(Collectors.joining(","));
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }

    @Test
    void declaresWhatAReplicatedDeploymentCanPromise() {
        assertThat(backend.deployment()).isEqualTo(RedisLockBackend.Deployment.CLUSTER);
        assertThat(backend.capabilities())
                .containsExactlyInAnyOrder(
                        Capability.FENCING,
                        Capability.SERVER_TIME,
                        Capability.WAKE_ON_RELEASE,
                        Capability.BATCH_RENEW,
                        Capability.TOKEN_PERIOD,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL,
                        Capability.SHARED_LOCKS,
                        Capability.FAIR_ORDER,
                        Capability.HAND_OVER);
    }

    @Test
    void renewsLeasesOnEverySlotInOneCallAndListsThemFromEveryMaster() {
        String prefix = "cluster-" + UUID.randomUUID() + "/";
        List<RenewRequest> requests = new ArrayList<>();
        List<AcquireResult> grants = new ArrayList<>();
        Set<Integer> slots = new TreeSet<>();
        for (int i = 0; i < 300; i++) {
            String name = prefix + i;
            String holder = lease();
            grants.add(backend.tryAcquire(name, holder, TTL));
            requests.add(new RenewRequest(name, holder, Duration.ofSeconds(60), null));
            slots.add(SlotHash.getSlot("fencelock:{" + name + "}"));
        }
        assertThat(slots.stream().anyMatch(s -> s < 5461)).isTrue();
        assertThat(slots.stream().anyMatch(s -> s > 10923))
                .as("names on all three masters")
                .isTrue();
        requests.add(150, new RenewRequest(prefix + 3, "not-the-holder", TTL, null));

        List<RenewResult> results = backend.renew(requests);

        assertThat(results).hasSize(301);
        assertThat(results.get(150)).isEqualTo(RenewResult.rejected());
        List<RenewResult> real = new ArrayList<>(results);
        real.remove(150);
        for (int i = 0; i < 300; i++) {
            assertThat(real.get(i).renewed()).as("lease %d", i).isTrue();
            assertThat(real.get(i).token()).isEqualTo(grants.get(i).token());
            assertThat(real.get(i).expiresAt()).isAfter(grants.get(i).expiresAt());
        }
        List<LockInfo> listed = backend.list(prefix);
        assertThat(listed).hasSize(300).allMatch(LockInfo::held);
        assertThat(listed).extracting(LockInfo::name).isSorted();
    }

    /** Every other name is handed over before its release: the new holder's release wakes the waiter. */
    @Test
    void tokensRiseAndReleasesWakeWaitersWhereverTheNameLives() throws InterruptedException {
        try (RedisLockBackend waiterSide =
                RedisLockBackend.builder().uri(clusterUri(cluster)).build()) {
            for (int i = 0; i < 8; i++) {
                String name = "wake-" + UUID.randomUUID();
                String holder = lease();
                long first = backend.tryAcquire(name, holder, TTL).token();
                CountDownLatch released = new CountDownLatch(1);
                SpiChecks.subscribe(waiterSide, name, released::countDown);
                assertThat(waiterSide.tryAcquire(name, lease(), TTL).acquired())
                        .as("a waiter's refused attempt")
                        .isFalse();
                if (i % 2 == 1) {
                    String old = holder;
                    holder = lease();
                    AcquireResult handed = backend.handOver(name, old, holder, TTL, LockMetadata.NONE);
                    assertThat(handed.token()).as("%s handed over", name).isGreaterThan(first);
                    first = handed.token();
                    assertThat(backend.release(name, old)).isFalse();
                }
                assertThat(backend.release(name, holder)).isTrue();
                assertThat(released.await(30, TimeUnit.SECONDS))
                        .as("woken for %s", name)
                        .isTrue();
                AcquireResult next = waiterSide.tryAcquire(name, lease(), TTL);
                assertThat(next.token()).isGreaterThan(first);
                assertThat(backend.inspect(name).orElseThrow().holder()).isPresent();
            }
        }
    }
}
