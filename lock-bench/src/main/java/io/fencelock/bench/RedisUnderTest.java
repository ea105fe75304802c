package io.fencelock.bench;

import io.fencelock.redis.RedisLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;

/** Redis from lock-tck's fixture (env URL, local redis-server, Testcontainers or embedded-redis). */
final class RedisUnderTest extends BackendUnderTest {
    /** Leaves what a released lock leaves: its token record (the lock key itself is gone). */
    private static final String FILL_SCRIPT = """
            for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
              redis.call('HSET', 'fencelock:{' .. ARGV[3] .. i .. '}:token', 'n', 1, 't', 0)
            end
            return 1
            """;

    /**
     * The release of a lock on SET NX: delete the key only while it still holds the owner's value, so
     * that a release after the expiry cannot free the next holder's lock (one EVALSHA, as Redis's
     * documentation of the pattern shows). A plain DEL would be cheaper, and unsafe.
     */
    private static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    private static final long FILL_CHUNK = 50_000; // one script blocks Redis: keep each one short

    private final RedisServer server;

    RedisUnderTest() {
        this(RedisServer.shared());
    }

    private RedisUnderTest(RedisServer server) {
        super("redis", "io.fencelock.redis", "pub/sub", server);
        this.server = server;
    }

    @Override
    public LockBackend openBackend() {
        return RedisLockBackend.builder().uri(server.uri()).build();
    }

    @Override
    protected RawPrimitive openRaw() {
        RedisClient client = RedisClient.create(server.uri());
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisCommands<String, String> redis = connection.sync();
        String compareAndDelete = redis.scriptLoad(COMPARE_AND_DELETE);
        return new RawPrimitive() {
            @Override
            public boolean tryAcquire(String name, String owner, Duration ttl) {
                return "OK"
                        .equals(redis.set(
                                "bench-raw:" + name, owner, SetArgs.Builder.nx().px(ttl.toMillis())));
            }

            @Override
            public void release(String name, String owner) {
                redis.evalsha(compareAndDelete, ScriptOutputType.INTEGER, new String[] {"bench-raw:" + name}, owner);
            }

            @Override
            public void close() {
                connection.close();
                LettuceClients.shutDown(client);
            }
        };
    }

    @Override
    public String rawPrimitiveDescription() {
        return "one SET key owner NX PX ttl + one compare-and-delete (GET, then DEL if still the owner, in one EVALSHA); Lettuce, sync";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(
                RedissonPeer.rLock(server.uri()),
                RedissonPeer.fencedLock(server.uri()),
                ShedLockPeer.redis(server.uri()),
                SpringIntegrationPeer.redis(server.uri()));
    }

    @Override
    protected List<SharedMeasurements.Factory> sharedPeers() {
        return RedissonSharedPeer.all(server.uri());
    }

    @Override
    public void fill(long from, long to) {
        RedisClient client = RedisClient.create(server.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            for (long start = from; start < to; start += FILL_CHUNK) {
                long end = Math.min(to, start + FILL_CHUNK) - 1;
                connection
                        .sync()
                        .eval(
                                FILL_SCRIPT,
                                ScriptOutputType.INTEGER,
                                new String[0],
                                Long.toString(start),
                                Long.toString(end),
                                FILL_PREFIX);
            }
        } finally {
            LettuceClients.shutDown(client);
        }
    }

    @Override
    public void close() {}
}
