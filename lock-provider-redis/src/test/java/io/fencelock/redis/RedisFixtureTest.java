package io.fencelock.redis;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.fixture.FixtureSelfCheck;
import io.fencelock.tck.fixture.RedisServer;
import io.fencelock.tck.fixture.RedisServer.Persistence;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The contract tests' fixtures supply what the fault properties need. */
class RedisFixtureTest {

    @Test
    void singleServerFixtureOpensTheSameServerByConnectionAndThroughAProxy() {
        BackendFixture fixture = RedisContractTest.fixtureOn(RedisServer.shared());
        FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
        if (fixture.proxyTarget().isPresent()) { // a Sentinel URL from env has no single address
            Duration took = FixtureSelfCheck.openBackendViaGoesThroughVia(fixture, Duration.ofSeconds(8));
            System.out.println("[redis-fixture] a swallowed command failed after " + took.toMillis() + " ms");
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        }
    }

    @Test
    void clusterFixtureOpensTheSameClusterByConnectionButHasNoProxyTarget() {
        try (RedisServer cluster = RedisServer.startCluster(3, Persistence.NONE)) {
            BackendFixture fixture = RedisClusterContractTest.fixtureOn(cluster);
            FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
            assertThat(fixture.control()).isPresent();
            assertThat(fixture.proxyTarget()).as("the cluster redirects clients to its nodes").isEmpty();
            assertThatThrownBy(() -> fixture.openBackendVia(new InetSocketAddress("127.0.0.1", 1)))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
    }
}
