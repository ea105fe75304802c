package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.tck.SpiChecks;
import io.fencelock.testservers.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The provider through Sentinel, on a real master that one Sentinel monitors. */
class RedisSentinelTest {

    @Test
    void worksThroughSentinelAndClaimsNoMoreThanAReplicatedDeploymentCan() throws InterruptedException {
        try (RedisServer server = RedisServer.startWithSentinel(RedisServer.Persistence.AOF_ALWAYS);
                RedisLockBackend backend =
                        RedisLockBackend.builder().uri(server.uri()).build();
                RedisLockBackend waiterSide =
                        (RedisLockBackend) new RedisLockBackendProvider().open(server.uri(), Map.of())) {
            assertThat(backend.deployment()).isEqualTo(RedisLockBackend.Deployment.SENTINEL);
            // AOF always on the master, yet a failover promotes a replica that may lack the last grants
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
                            Capability.HAND_OVER,
                            Capability.GRANT_ON_RELEASE);

            String name = "sentinel/" + UUID.randomUUID();
            String holder = UUID.randomUUID().toString();
            AcquireResult first = backend.tryAcquire(name, holder, Duration.ofSeconds(30));
            assertThat(first.acquired()).isTrue();
            assertThat(backend.renew(List.of(new RenewRequest(name, holder, Duration.ofSeconds(30), null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            CountDownLatch told = new CountDownLatch(1);
            SpiChecks.subscribe(waiterSide, name, told::countDown);
            assertThat(waiterSide
                            .tryAcquire(name, "queued", Duration.ofSeconds(30))
                            .acquired())
                    .as("a waiter's refused attempt, which queues it under its lease")
                    .isFalse();
            assertThat(backend.release(name, holder)).isTrue();
            assertThat(told.await(30, TimeUnit.SECONDS))
                    .as("told of the grant through the Sentinel-resolved master")
                    .isTrue();
            LockInfo granted = backend.inspect(name).orElseThrow();
            assertThat(granted.leaseId())
                    .as("the release granted the queued waiter (GRANT_ON_RELEASE)")
                    .isEqualTo("queued");
            assertThat(granted.token()).isGreaterThan(first.token());
            assertThat(waiterSide.release(name, "queued")).isTrue();
        }
    }
}
