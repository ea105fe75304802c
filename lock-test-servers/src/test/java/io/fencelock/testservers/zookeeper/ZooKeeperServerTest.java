package io.fencelock.testservers.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.testservers.common.FixtureChecks;
import io.fencelock.testservers.common.ServerProcess;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

class ZooKeeperServerTest {

    @Test
    void aThrowawayNodeKeepsItsZxidsAndSessionsAcrossAKill() throws Exception {
        try (ZooKeeperServer server = ZooKeeperServer.start(ZooKeeperServer.Source.JVM)) {
            assertThat(server.description()).contains("ZooKeeper 3.", "child JVM");
            assertThat(server.url()).startsWith("zookeeper://127.0.0.1:");
            assertThat(server.replicaSet()).isEmpty();
            FixtureChecks.assertControlKeepsTheData(server.control().orElseThrow(), () -> write(server));
        }
    }

    @Test
    void anEnsembleSurvivesTheLossOfItsLeaderAndACrashOfEveryMember() throws Exception {
        long start = System.nanoTime();
        try (ZooKeeperServer ensemble = ZooKeeperServer.startEnsemble(3)) {
            System.out.println("[zookeeper-fixture] 3-member ensemble serving after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms: " + ensemble.description());
            assertThat(ensemble.members()).hasSize(3);
            long before;
            try {
                before = FixtureChecks.assertTheLeadersLossIsSurvived(
                                ensemble.replicaSet().orElseThrow(), () -> write(ensemble))
                        .before();
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + logs(ensemble), e);
            }
            ensemble.control().orElseThrow().kill();
            assertThat(ensemble.control().orElseThrow().isRunning()).isFalse();
            ensemble.control().orElseThrow().start();
            assertThat(write(ensemble)).isGreaterThan(before + 1);
        }
    }

    /** Each member's log tail (its election's votes among them), for a failure to show why. */
    private static String logs(ZooKeeperServer ensemble) {
        StringBuilder out = new StringBuilder();
        for (ZooKeeperServer.Member m : ensemble.members()) {
            out.append("\n--- ")
                    .append(m.name())
                    .append(" (")
                    .append(m.hostPort())
                    .append("):\n");
            out.append(((ServerProcess) m.control()).logTail());
        }
        return out.toString();
    }

    /** Creates and deletes a znode; returns its creation zxid. */
    private static long write(ZooKeeperServer server) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        ZooKeeper zk = new ZooKeeper(
                server.connectString(),
                5_000,
                e -> {
                    if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                config);
        try {
            assertThat(connected.await(20, TimeUnit.SECONDS)).as("connected").isTrue();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                try {
                    Stat stat = new Stat();
                    zk.create("/fixture-test", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL, stat);
                    zk.delete("/fixture-test", -1);
                    return stat.getCzxid();
                } catch (org.apache.zookeeper.KeeperException.ConnectionLossException e) {
                    if (System.nanoTime() - end > 0) {
                        throw e;
                    }
                    Thread.sleep(50); // pacing while the client finds a serving member
                }
            }
        } finally {
            zk.close();
        }
    }
}
