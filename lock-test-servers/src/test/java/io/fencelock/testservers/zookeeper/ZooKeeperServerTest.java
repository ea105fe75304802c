package io.fencelock.testservers.zookeeper;

import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

class ZooKeeperServerTest {

    @Test
    void aThrowawayNodeKeepsItsZxidsAndSessionsAcrossAKill() throws Exception {
        try (ZooKeeperServer server = ZooKeeperServer.start(ZooKeeperServer.Source.JVM)) {
            assertThat(server.description()).contains("ZooKeeper 3.", "child JVM");
            assertThat(server.url()).startsWith("zookeeper://127.0.0.1:");
            ServerControl control = server.control().orElseThrow();
            long before = write(server);
            control.kill();
            assertThat(control.isRunning()).isFalse();
            control.start();
            assertThat(write(server)).as("zxid after SIGKILL + start").isGreaterThan(before);
            control.pause();
            assertThat(control.isRunning()).isTrue();
            control.resume();
            control.stop();
            assertThat(control.isRunning()).isFalse();
            control.start();
            assertThat(write(server)).isGreaterThan(before + 1);
        }
    }

    @Test
    void anEnsembleSurvivesTheLossOfItsLeaderAndThenOfAFollower() throws Exception {
        long start = System.nanoTime();
        try (ZooKeeperServer ensemble = ZooKeeperServer.startEnsemble(3)) {
            System.out.println("[zookeeper-fixture] 3-member ensemble serving after " + (System.nanoTime() - start) / 1_000_000
                    + " ms: " + ensemble.description());
            assertThat(ensemble.members()).hasSize(3);
            ReplicaSetControl members = ensemble.replicaSet().orElseThrow();
            ServerControl leader = members.leader().orElseThrow();
            ServerControl follower = members.follower().orElseThrow();
            assertThat(follower).isNotSameAs(leader);
            long before = write(ensemble);
            leader.kill();
            long killed = System.nanoTime();
            await(() -> members.leader().filter(l -> l != leader).isPresent());
            System.out.println("[zookeeper-fixture] new leader after " + (System.nanoTime() - killed) / 1_000_000 + " ms");
            assertThat(write(ensemble)).as("the two left elect a leader and take writes").isGreaterThan(before);
            leader.start();
            members.awaitHealthy(Duration.ofSeconds(30));
            assertThat(members.leader()).isPresent();
            ensemble.control().orElseThrow().kill();
            assertThat(ensemble.control().orElseThrow().isRunning()).isFalse();
            ensemble.control().orElseThrow().start();
            assertThat(write(ensemble)).isGreaterThan(before + 1);
        }
    }

    /** Creates and deletes a znode; returns its creation zxid. */
    private static long write(ZooKeeperServer server) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZKClientConfig config = new ZKClientConfig();
        config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        ZooKeeper zk = new ZooKeeper(server.connectString(), 5_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, config);
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

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as("condition within 30 s").isNegative();
            Thread.sleep(20); // polling the members
        }
    }
}
