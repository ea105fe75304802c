package io.fencelock.testservers.redis;

import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.common.GroupControl;
import io.fencelock.testservers.common.ThrowawayServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * A throwaway Redis Cluster: {@code n} {@link RedisProcess}es with {@code cluster-enabled yes}, each
 * owning an even share of the 16384 slots, no replicas. Built by hand (ADDSLOTS, MEET) rather than
 * with {@code redis-cli --cluster create}, so that only the server binary is needed; the bus port is
 * chosen free too ({@code cluster-port}, Redis 7).
 */
final class RedisClusterNodes {
    private static final int SLOTS = 16384;
    private static final long READY_TIMEOUT_MILLIS = 30_000;
    private static final String NODE_CONFIG = "nodes.conf"; // relative: in the node's --dir

    private final List<RedisProcess> nodes;
    private final List<Integer> busPorts;

    private RedisClusterNodes(List<RedisProcess> nodes, List<Integer> busPorts) {
        this.nodes = nodes;
        this.busPorts = busPorts;
    }

    static RedisClusterNodes start(Path binary, int masters, RedisServer.Persistence persistence) throws IOException {
        if (masters < 1) {
            throw new IllegalArgumentException("a cluster needs at least one master, got " + masters);
        }
        List<RedisProcess> nodes = new ArrayList<>();
        List<Integer> busPorts = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                int busPort = ThrowawayServers.freeLoopbackPort();
                nodes.add(RedisProcess.start(
                        binary,
                        persistence,
                        List.of(
                                "--cluster-enabled",
                                "yes",
                                "--cluster-config-file",
                                NODE_CONFIG,
                                "--cluster-node-timeout",
                                "5000",
                                "--cluster-port",
                                Integer.toString(busPort))));
                busPorts.add(busPort);
            }
            RedisClusterNodes cluster = new RedisClusterNodes(nodes, busPorts);
            cluster.join();
            return cluster;
        } catch (IOException | RuntimeException e) {
            nodes.forEach(RedisProcess::destroy);
            throw e;
        }
    }

    private void join() throws IOException {
        int n = nodes.size();
        for (int i = 0; i < n; i++) {
            int from = i * SLOTS / n;
            int to = (i + 1) * SLOTS / n;
            int[] slots = IntStream.range(from, to).toArray();
            on(nodes.get(i), redis -> redis.clusterAddSlots(slots));
        }
        for (int i = 1; i < n; i++) {
            // MEET with the bus port: it is not the default port + 10000 here
            CommandArgs<String, String> meet = new CommandArgs<>(StringCodec.UTF8)
                    .add("MEET")
                    .add("127.0.0.1")
                    .add(nodes.get(i).port())
                    .add(busPorts.get(i));
            on(nodes.get(0), redis -> redis.dispatch(CommandType.CLUSTER, new StatusOutput<>(StringCodec.UTF8), meet));
        }
        awaitReady();
    }

    /** Until every node says {@code cluster_state:ok}, knows all the others and sees every slot served. */
    private void awaitReady() throws IOException {
        int n = nodes.size();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MILLIS);
        while (!nodes.stream().allMatch(node -> isReady(node, n))) {
            if (System.nanoTime() > deadline) {
                throw new IOException(
                        "Redis Cluster of " + n + " nodes not ready after " + READY_TIMEOUT_MILLIS + " ms");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the cluster", e);
            }
        }
    }

    /**
     * Controls that act on every node. {@code start()} restarts the stopped nodes on their ports and
     * directories; each reads back its {@code nodes.conf} (its id, its slots, its peers' addresses and
     * bus ports), so the nodes find each other again without a new MEET, and {@code start()} returns
     * once the cluster serves every slot.
     */
    ServerControl control() {
        return new GroupControl("a Redis Cluster on ports " + ports(), nodes, () -> {
            try {
                awaitReady();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /** The file in which a node keeps the cluster's configuration, in the node's own directory. */
    List<Path> nodeConfigFiles() {
        return nodes.stream().map(node -> node.dir().resolve(NODE_CONFIG)).toList();
    }

    private static boolean isReady(RedisProcess node, int n) {
        return RedisProcess.clusterInfo(node.port())
                .filter(info -> info.contains("cluster_state:ok")
                        && info.contains("cluster_known_nodes:" + n + "\r")
                        && info.contains("cluster_slots_ok:" + SLOTS + "\r"))
                .isPresent();
    }

    private static void on(RedisProcess node, java.util.function.Consumer<RedisCommands<String, String>> work) {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + node.port());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            work.accept(connection.sync());
        } finally {
            LettuceClients.shutDown(client);
        }
    }

    List<Integer> ports() {
        return nodes.stream().map(RedisProcess::port).toList();
    }

    void destroy() {
        nodes.forEach(RedisProcess::destroy);
    }
}
