package io.fencelock.testservers.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.redis.RedisServer.Persistence;
import io.fencelock.testservers.redis.RedisServer.Source;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    @Test
    void sharedServerAnswersAndHasNoPersistence() {
        RedisServer server = RedisServer.shared();

        assertThat(RedisServer.shared()).isSameAs(server);
        withRedis(server, redis -> {
            assertThat(redis.ping()).isEqualTo("PONG");
            if (server.source() != Source.ENV) {
                assertThat(redis.configGet("appendonly")).containsEntry("appendonly", "no");
                assertThat(redis.configGet("save")).containsEntry("save", "");
            }
        });
        assertThat(server.description())
                .startsWith("Redis ")
                .contains("source '" + server.source().key() + "'")
                .contains("appendonly=");
        if (server.source() != Source.ENV) {
            assertThat(server.persistence()).isEqualTo(Persistence.NONE);
        }
    }

    @Test
    void binariesServerWithAofAlwaysKeepsItsDataAcrossKillAndStop() {
        try (RedisServer server = RedisServer.start(Source.BINARIES, Persistence.AOF_ALWAYS)) {
            ServerControl control = server.control().orElseThrow();
            assertThat(server.persistence()).isEqualTo(Persistence.AOF_ALWAYS);
            assertThat(server.description()).contains("appendonly=yes appendfsync=always");
            withRedis(server, redis -> {
                assertThat(redis.configGet("append*"))
                        .containsEntry("appendonly", "yes")
                        .containsEntry("appendfsync", "always");
                redis.set("kept", "survivor");
                redis.incr("counter");
            });

            control.kill();
            assertThat(control.isRunning()).isFalse();
            control.start();
            withRedis(server, redis -> {
                assertThat(redis.get("kept"))
                        .as("written before the crash: fsynced in the AOF")
                        .isEqualTo("survivor");
                assertThat(redis.incr("counter")).isEqualTo(2);
            });

            control.stop();
            assertThat(control.isRunning()).isFalse();
            control.start();
            withRedis(server, redis -> assertThat(redis.get("counter")).isEqualTo("2"));
        }
    }

    @Test
    void binariesServerWithoutPersistenceForgetsEverythingOnRestart() {
        try (RedisServer server = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            ServerControl control = server.control().orElseThrow();
            withRedis(server, redis -> redis.set("kept", "survivor"));

            control.stop(); // even a clean shutdown: no RDB snapshot, no AOF
            control.start();
            withRedis(server, redis -> assertThat(redis.get("kept")).isNull());
        }
    }

    @Test
    void pausedBinariesServerAnswersNothingUntilResumed() {
        try (RedisServer server = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            ServerControl control = server.control().orElseThrow();
            RedisURI uri = RedisURI.create(server.uri());
            uri.setTimeout(Duration.ofMillis(300));
            RedisClient client = RedisClient.create(uri);
            try (StatefulRedisConnection<String, String> open = client.connect()) {
                control.pause();
                try {
                    assertThat(control.isRunning()).isTrue();
                    assertThatThrownBy(() -> open.sync().ping()).isInstanceOf(RedisException.class);
                } finally {
                    control.resume();
                }
                assertThat(open.sync().ping()).isEqualTo("PONG");
            } finally {
                LettuceClients.shutDown(client);
            }
        }
    }

    @Test
    void embeddedSourceWorksWhenForcedByProperty() {
        String property = "fencelock.redis.source";
        String before = System.getProperty(property);
        System.setProperty(property, "embedded");
        try (RedisServer server = RedisServer.start(Persistence.AOF_ALWAYS)) {
            assertThat(server.source()).isEqualTo(Source.EMBEDDED);
            assertThat(server.control()).isEmpty();
            assertThat(server.description()).contains("embedded").contains("appendonly=yes appendfsync=always");
            withRedis(server, redis -> {
                assertThat(redis.ping()).isEqualTo("PONG");
                Map<String, String> config = redis.configGet("append*");
                assertThat(config).containsEntry("appendonly", "yes").containsEntry("appendfsync", "always");
            });
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
    }

    @Test
    void clusterOfThreeMastersServesEverySlot() {
        try (RedisServer cluster = RedisServer.startCluster(3, Persistence.NONE)) {
            assertThat(cluster.nodeUris()).hasSize(3).contains(cluster.uri());
            assertThat(cluster.description()).contains("Cluster of 3 masters");
            RedisClusterClient client = RedisClusterClient.create(cluster.uri());
            try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
                for (int i = 0; i < 30; i++) {
                    connection.sync().set("key-" + i, "v" + i); // spread over the slots, so over all masters
                }
                assertThat(connection.sync().get("key-29")).isEqualTo("v29");
                assertThat(connection.getPartitions().size()).isEqualTo(3);
            } finally {
                LettuceClients.shutDown(client);
            }
            for (String node : cluster.nodeUris()) {
                RedisClient single = RedisClient.create(node);
                try (StatefulRedisConnection<String, String> c = single.connect()) {
                    assertThat(c.sync().clusterInfo()).contains("cluster_state:ok");
                } finally {
                    LettuceClients.shutDown(single);
                }
            }
        }
    }

    @Test
    void sentinelNamesItsMaster() {
        try (RedisServer server = RedisServer.startWithSentinel(Persistence.NONE)) {
            assertThat(server.uri())
                    .startsWith("redis-sentinel://127.0.0.1:")
                    .endsWith("#" + RedisServer.SENTINEL_MASTER);
            assertThat(server.nodeUris()).hasSize(1);
            assertThat(server.control()).isPresent();
            withRedis(
                    server,
                    redis -> { // connected through the Sentinel, to the master
                        redis.set("through-sentinel", "yes");
                        assertThat(redis.info("replication")).contains("role:master");
                    });
            RedisClient direct = RedisClient.create(server.nodeUris().get(0));
            try (StatefulRedisConnection<String, String> c = direct.connect()) {
                assertThat(c.sync().get("through-sentinel")).isEqualTo("yes");
            } finally {
                LettuceClients.shutDown(direct);
            }
        }
    }

    @Test
    void unknownSourceIsRejected() {
        String property = "fencelock.redis.source";
        String before = System.getProperty(property);
        System.setProperty(property, "carrier-pigeon");
        try {
            assertThatThrownBy(() -> RedisServer.start(Persistence.NONE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("carrier-pigeon")
                    .hasMessageContaining("binaries");
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
    }

    private static void withRedis(RedisServer server, Consumer<RedisCommands<String, String>> work) {
        RedisClient client = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            work.accept(connection.sync());
        } finally {
            LettuceClients.shutDown(client);
        }
    }
}
