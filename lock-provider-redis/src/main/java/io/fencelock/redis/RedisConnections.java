package io.fencelock.redis;

import io.fencelock.redis.RedisLockBackend.Deployment;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One backend's Lettuce side: a {@link RedisClient} (one server, or Sentinel's master) or a
 * {@link RedisClusterClient} on the JVM's {@link SharedResources}, its {@link CommandConnection}, and
 * how to open the pub/sub connection for wake-ups.
 */
final class RedisConnections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisConnections.class);
    private static final long SHUTDOWN_TIMEOUT_SECONDS = 2;
    private static final long SHUTDOWN_WAIT_SECONDS = 10; // past the shutdown's own timeout its future is stuck

    private final AbstractRedisClient client;
    private final ClientResources shared;
    final CommandConnection commands;
    final Supplier<StatefulRedisPubSubConnection<String, String>> pubSub;

    private RedisConnections(
            AbstractRedisClient client,
            ClientResources shared,
            CommandConnection commands,
            Supplier<StatefulRedisPubSubConnection<String, String>> pubSub) {
        this.client = client;
        this.shared = shared;
        this.commands = commands;
        this.pubSub = pubSub;
    }

    /**
     * Makes the client and its command connection. On failure everything made so far is shut down
     * and Lettuce's exception is thrown as it is.
     */
    static RedisConnections open(RedisSettings settings) {
        List<RedisURI> targets = settings.targets();
        ClientResources shared = SharedResources.acquire();
        AbstractRedisClient client = null;
        StatefulConnection<String, String> first = null;
        try {
            // REJECT_COMMANDS makes every call at most once: a command in flight when the connection
            // drops fails (the engine treats it as indeterminate) instead of being replayed after
            // the reconnect, and a call while disconnected fails at once instead of queueing
            SocketOptions socket = SocketOptions.builder()
                    .connectTimeout(settings.connectTimeout)
                    .keepAlive(true)
                    .build();
            TimeoutOptions timeouts = TimeoutOptions.enabled(settings.commandTimeout);
            if (settings.deployment == Deployment.CLUSTER) {
                RedisClusterClient cluster = RedisClusterClient.create(shared, targets);
                client = cluster;
                cluster.setOptions(ClusterClientOptions.builder()
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .socketOptions(socket)
                        .timeoutOptions(timeouts)
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers()
                                .enablePeriodicRefresh(Duration.ofSeconds(30))
                                .build())
                        .build());
                StatefulRedisClusterConnection<String, String> c =
                        connect(() -> cluster.connect(StringCodec.UTF8), settings, shared, socket);
                first = c;
                CommandConnection commands = new CommandConnection(
                        c,
                        () -> cluster.connectAsync(StringCodec.UTF8),
                        fresh -> ((StatefulRedisClusterConnection<String, String>) fresh).async(),
                        settings.where,
                        settings.commandTimeout);
                return new RedisConnections(cluster, shared, commands, () -> cluster.connectPubSub(StringCodec.UTF8));
            }
            RedisClient single = RedisClient.create(shared);
            client = single;
            single.setOptions(ClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .socketOptions(socket)
                    .timeoutOptions(timeouts)
                    .build());
            RedisURI target = targets.get(0);
            StatefulRedisConnection<String, String> c =
                    connect(() -> single.connect(StringCodec.UTF8, target), settings, shared, socket);
            first = c;
            CommandConnection commands = new CommandConnection(
                    c,
                    () -> single.connectAsync(StringCodec.UTF8, target),
                    fresh -> ((StatefulRedisConnection<String, String>) fresh).async(),
                    settings.where,
                    settings.commandTimeout);
            return new RedisConnections(single, shared, commands, () -> single.connectPubSub(StringCodec.UTF8, target));
        } catch (RuntimeException e) {
            if (client != null) {
                shutDown(client, first, shared);
            } else {
                SharedResources.release(shared);
            }
            throw e;
        }
    }

    /**
     * Connects; when Lettuce lost the reason of a failed handshake, asks the server for it.
     *
     * <p>Lettuce looks for its handshake handler when the TCP connect completes; if the server
     * refused the handshake (bad credentials) before that look, the handler is gone and Lettuce
     * reports only "RedisHandshakeHandler not registered". Whether the failure is final (refused
     * credentials) or retryable rests on the reason, so it is asked for on a connection whose
     * handshake cannot fail that way: RESP2 without credentials sends nothing before it is open.
     * Then the credentials go in an AUTH of their own (or a PING, without any), whose refusal is
     * the reason. When the server accepts them, the connect is tried once more.
     */
    private static <C> C connect(
            Supplier<C> connect, RedisSettings settings, ClientResources shared, SocketOptions socket) {
        try {
            return connect.get();
        } catch (RedisConnectionException e) {
            if (!(e.getCause() instanceof IllegalStateException)) {
                throw e;
            }
            RedisException refusal = handshakeRefusal(settings, shared, socket);
            if (refusal != null) {
                refusal.addSuppressed(e);
                throw refusal;
            }
            return connect.get();
        }
    }

    /** The server's refusal of this backend's credentials, or null when it accepts them. */
    static RedisException handshakeRefusal(RedisSettings settings, ClientResources shared, SocketOptions socket) {
        RedisClient probe = RedisClient.create(shared);
        probe.setOptions(ClientOptions.builder()
                .protocolVersion(ProtocolVersion.RESP2)
                .pingBeforeActivateConnection(false)
                .socketOptions(socket)
                .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout))
                .build());
        StatefulRedisConnection<String, String> c = null;
        try {
            c = probe.connect(StringCodec.UTF8, settings.firstTargetWithoutCredentials());
            RedisCredentials credentials = settings.credentials();
            if (credentials.hasUsername()) {
                c.sync().auth(credentials.getUsername(), new String(credentials.getPassword()));
            } else if (credentials.hasPassword()) {
                c.sync().auth(new String(credentials.getPassword()));
            } else {
                c.sync().ping();
            }
            return null;
        } catch (RedisException refused) {
            return refused;
        } finally {
            closeQuietly(probe, c);
        }
    }

    /** Closes the command connection and the client, and lets go of the shared resources. */
    @Override
    public void close() {
        shutDown(client, commands, shared);
    }

    private static void shutDown(AbstractRedisClient client, AutoCloseable connection, ClientResources shared) {
        try {
            closeQuietly(client, connection);
        } finally {
            SharedResources.release(shared);
        }
    }

    private static void closeQuietly(AbstractRedisClient client, AutoCloseable connection) {
        try {
            if (connection != null) {
                connection.close();
            }
            // no quiet period: nothing is left to send. Bounded: Lettuce's own shutdown() waits on a future that
            // sometimes never completes (Lettuce issue 2278), and close() must not hang the caller.
            client.shutdownAsync(0, SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .get(SHUTDOWN_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.debug("fencelock: closing the Redis client failed: {}", e.toString());
        }
    }
}
