package io.fencelock.testservers.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.FixtureChecks;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EtcdServerTest {
    private static final ByteSequence KEY = ByteSequence.from("fixture-test", StandardCharsets.UTF_8);

    @Test
    void aThrowawayNodeKeepsItsRevisionsAcrossAKill() throws Exception {
        try (EtcdServer server = EtcdServer.start(EtcdServer.Source.BINARIES)) {
            assertThat(server.description()).contains("etcd 3.", "binaries");
            FixtureChecks.assertControlKeepsTheData(server.control().orElseThrow(), () -> put(server));
        }
    }

    @Test
    void aClusterSurvivesTheLossOfItsLeaderAndOfAFollower() throws Exception {
        long start = System.nanoTime();
        try (EtcdServer cluster = EtcdServer.startCluster(3)) {
            System.out.println("[etcd-fixture] 3-node cluster healthy after " + (System.nanoTime() - start) / 1_000_000
                    + " ms: " + cluster.description());
            assertThat(cluster.members()).hasSize(3);
            assertThat(cluster.control()).as("all members at once").isPresent();
            assertThat(cluster.replicaSet()).isPresent();
            EtcdServer.Member leader = cluster.leader().orElseThrow();
            long before = put(cluster);
            leader.control().kill();
            long killed = System.nanoTime();
            FixtureChecks.await(
                    () -> cluster.leader().filter(l -> !l.equals(leader)).isPresent(), Duration.ofSeconds(20));
            System.out.println("[etcd-fixture] new leader after " + (System.nanoTime() - killed) / 1_000_000 + " ms");
            assertThat(put(cluster)).isGreaterThan(before);
            EtcdServer.Member follower = cluster.follower().orElseThrow();
            follower.control().kill();
            assertThatThrownBy(() -> put(cluster, Duration.ofSeconds(1))).as("a write without a quorum");
            leader.control().start();
            follower.control().start();
            cluster.awaitHealthy(Duration.ofSeconds(30));
            assertThat(put(cluster)).isGreaterThan(before + 1);
        }
    }

    @Test
    void theReplicaSetControlFollowsTheLeaderAndTheClusterControlActsOnAll() throws Exception {
        try (EtcdServer cluster = EtcdServer.startCluster(3)) {
            ReplicaSetControl members = cluster.replicaSet().orElseThrow();
            assertThat(members.members()).hasSize(3);
            FixtureChecks.Failover failover = FixtureChecks.assertTheLeadersLossIsSurvived(members, () -> put(cluster));
            long before = failover.before();
            assertThat(putVia(cluster.members()
                            .get(members.members().indexOf(failover.rejoined()))
                            .endpoint()))
                    .as("a write through the member that rejoined")
                    .isGreaterThan(before + 1);

            ServerControl all = cluster.control().orElseThrow();
            all.kill();
            assertThat(all.isRunning()).isFalse();
            assertThat(members.members()).noneMatch(ServerControl::isRunning);
            all.start(); // returns once healthy with one leader
            assertThat(all.isRunning()).isTrue();
            assertThat(members.leader()).isPresent();
            assertThat(put(cluster))
                    .as("revisions survive a crash of every member")
                    .isGreaterThan(before + 2);
            all.stop();
            assertThat(all.isRunning()).isFalse();
            all.start();
            assertThat(put(cluster)).isGreaterThan(before + 3);
        }
    }

    @Test
    void aSingleNodeHasNoReplicaSetAndOneAddress() {
        EtcdServer server = EtcdServer.shared();
        assertThat(server.replicaSet()).isEmpty();
        if (server.endpoints().size() == 1) {
            java.net.InetSocketAddress address = server.address().orElseThrow();
            assertThat(server.endpoints().get(0)).endsWith(":" + address.getPort());
            assertThat(server.endpointVia(java.net.InetSocketAddress.createUnresolved("127.0.0.1", 1)))
                    .isEqualTo(server.endpoints().get(0).replaceAll(":\\d+$", ":1"));
        }
    }

    @Test
    void anUnknownForcedSourceIsNamed() {
        String property = "fencelock.etcd.source";
        System.setProperty(property, "nope");
        try {
            assertThatThrownBy(EtcdServer::start).hasMessageContaining("nope").hasMessageContaining("binaries");
        } finally {
            System.clearProperty(property);
        }
    }

    private static long put(EtcdServer server) throws Exception {
        return put(server, Duration.ofSeconds(10));
    }

    private static long put(EtcdServer server, Duration timeout) throws Exception {
        try (Client client = Client.builder()
                .endpoints(server.endpoints().toArray(String[]::new))
                .build()) {
            return client.getKVClient()
                    .put(KEY, KEY)
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .getHeader()
                    .getRevision();
        }
    }

    private static long putVia(String endpoint) throws Exception {
        try (Client client = Client.builder().endpoints(endpoint).build()) {
            return client.getKVClient()
                    .put(KEY, KEY)
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
        }
    }
}
