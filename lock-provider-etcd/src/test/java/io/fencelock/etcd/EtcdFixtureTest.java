package io.fencelock.etcd;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.fixture.EtcdServer;
import io.fencelock.tck.fixture.FixtureSelfCheck;
import io.fencelock.tck.fixture.ReplicaSetControl;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The contract tests' fixtures supply what the fault properties need. */
class EtcdFixtureTest {

    @Test
    void singleNodeFixtureOpensTheSameServerByConnectionAndThroughAProxy() {
        BackendFixture fixture = EtcdContractTest.fixtureOn(EtcdServer.shared());
        assertThat(fixture.replicaSet()).isEmpty();
        if (fixture.clientConnection().isPresent()) {
            FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
        }
        if (fixture.proxyTarget().isPresent()) {
            Duration took = FixtureSelfCheck.openBackendViaGoesThroughVia(fixture, Duration.ofSeconds(8));
            System.out.println("[etcd-fixture] a swallowed request failed after " + took.toMillis() + " ms");
        }
    }

    @Test
    void clusterFixtureHasMembersAndReachesTheClusterThroughOneMember() {
        try (EtcdServer cluster = EtcdServer.startCluster(3)) {
            BackendFixture fixture = EtcdContractTest.fixtureOn(cluster);
            ReplicaSetControl members = fixture.replicaSet().orElseThrow();
            assertThat(members.members()).hasSize(3);
            assertThat(members.leader()).isPresent();
            assertThat(fixture.control()).isPresent();
            assertThat(fixture.proxyTarget()).hasValueSatisfying(
                    a -> assertThat(cluster.endpoints().get(0)).endsWith(":" + a.getPort()));
            FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
            Duration took = FixtureSelfCheck.openBackendViaGoesThroughVia(fixture, Duration.ofSeconds(8));
            System.out.println("[etcd-fixture] cluster: a swallowed request failed after " + took.toMillis() + " ms");
        }
    }
}
