package io.fencelock.testservers.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.ServerLocator;
import io.fencelock.testservers.redis.RedisServer.Persistence;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class RedisClusterNodesTest {

    @Test
    void killedClusterStartsAgainOnItsNodeConfigAndServesEverySlot() throws Exception {
        Path binary = binary();
        RedisClusterNodes cluster = RedisClusterNodes.start(binary, 3, Persistence.NONE);
        try {
            ServerControl control = cluster.control();
            assertThat(control.isRunning()).isTrue();
            withCluster(cluster, redis -> spread(redis, "before"));
            List<Path> configs = cluster.nodeConfigFiles();
            assertThat(configs)
                    .hasSize(3)
                    .allSatisfy(config -> assertThat(config).isRegularFile());

            control.kill();
            assertThat(control.isRunning()).isFalse();
            assertThat(configs)
                    .as("nodes.conf survives SIGKILL, in each node's directory")
                    .allSatisfy(config -> assertThat(config).isRegularFile());
            String firstConfig = Files.readString(configs.get(0));

            control.start(); // returns once every node says cluster_state:ok and all slots are served
            assertThat(control.isRunning()).isTrue();
            assertThat(myId(Files.readString(configs.get(0))))
                    .as("the node came back with its own id from nodes.conf")
                    .isEqualTo(myId(firstConfig));
            withCluster(cluster, redis -> {
                assertThat(redis.sync().get("before-0"))
                        .as("no persistence: the data is gone")
                        .isNull();
                spread(redis, "after");
                assertThat(redis.sync().get("after-29")).isEqualTo("v29");
            });

            control.stop();
            assertThat(control.isRunning()).isFalse();
            control.start();
            withCluster(cluster, redis -> spread(redis, "again"));
        } finally {
            cluster.destroy();
        }
    }

    @Test
    void pausedClusterAnswersAgainWhenResumed() throws Exception {
        RedisClusterNodes cluster = RedisClusterNodes.start(binary(), 3, Persistence.NONE);
        try {
            ServerControl control = cluster.control();
            control.pause();
            assertThat(control.isRunning()).as("a paused node still runs").isTrue();
            assertThat(cluster.ports()).as("no node answers while paused").noneMatch(RedisProcess::answersPong);
            control.resume();
            assertThat(cluster.ports()).allMatch(RedisProcess::answersPong);
            withCluster(cluster, redis -> spread(redis, "resumed"));
        } finally {
            cluster.destroy();
        }
    }

    /** The node id on the {@code myself} line of a nodes.conf. */
    private static String myId(String nodesConf) {
        return nodesConf
                .lines()
                .filter(l -> l.contains("myself"))
                .findFirst()
                .orElseThrow()
                .split(" ")[0];
    }

    private static Path binary() {
        try {
            return RedisProcess.findBinary();
        } catch (ServerLocator.Unavailable e) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new AssertionError("redis-server is required under CI: " + e.getMessage(), e);
            }
            return Assumptions.abort(e.getMessage());
        }
    }

    /** Thirty keys: spread over the slots, so over all three masters. */
    private static void spread(StatefulRedisClusterConnection<String, String> redis, String prefix) {
        for (int i = 0; i < 30; i++) {
            redis.sync().set(prefix + "-" + i, "v" + i);
        }
    }

    private static void withCluster(
            RedisClusterNodes cluster, Consumer<StatefulRedisClusterConnection<String, String>> work) {
        RedisClusterClient client =
                RedisClusterClient.create("redis://127.0.0.1:" + cluster.ports().get(0));
        try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
            assertThat(connection.getPartitions().size()).isEqualTo(3);
            work.accept(connection);
        } finally {
            LettuceClients.shutDown(client);
        }
        for (int port : cluster.ports()) {
            RedisClient single = RedisClient.create("redis://127.0.0.1:" + port);
            try (StatefulRedisConnection<String, String> c = single.connect()) {
                assertThat(c.sync().clusterInfo()).contains("cluster_state:ok");
            } finally {
                LettuceClients.shutDown(single);
            }
        }
    }
}
