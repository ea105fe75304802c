package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link RedisFence} on a real Redis. */
class RedisFenceTest {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> redis;
    private RedisFence fence;
    private String key;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisServer.shared().uri());
        connection = client.connect();
        redis = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        LettuceClients.shutDown(client);
    }

    @BeforeEach
    void freshKey() {
        fence = RedisFence.of(redis);
        key = "fencing-test:" + UUID.randomUUID();
    }

    @Test
    void setAcceptsEqualAndHigherTokensAndRefusesALowerOneWritingNothing() {
        fence.set(key, 5, "a");
        fence.set(key, 5, "b");
        fence.set(key, 6, "c");
        StaleTokenException e = catchThrowableOfType(StaleTokenException.class, () -> fence.set(key, 4, "stale"));
        assertThat(e.offeredToken()).isEqualTo(4);
        assertThat(e.currentToken()).isEqualTo(6);
        assertThat(e.resource()).isEqualTo(key);
        assertThat(redis.get(key)).isEqualTo("c");
        assertThat(fence.currentToken(key)).hasValue(6);
        assertThat(redis.get(RedisFence.tokenKey(key))).isEqualTo("6");
    }

    @Test
    void hsetAndDelAreFencedAndTheTokenOutlivesTheKey() {
        assertThat(fence.hset(key, 3, Map.of("f1", "v1", "f2", "v2"))).isEqualTo(2);
        assertThatThrownBy(() -> fence.hset(key, 2, Map.of("f1", "stale"))).isInstanceOf(StaleTokenException.class);
        assertThat(redis.hget(key, "f1")).isEqualTo("v1");
        assertThatThrownBy(() -> fence.del(key, 2)).isInstanceOf(StaleTokenException.class);
        assertThat(redis.exists(key)).isEqualTo(1);
        assertThat(fence.del(key, 4)).isEqualTo(1);
        assertThat(redis.exists(key)).isZero();
        // a stale writer cannot bring the deleted key back
        assertThatThrownBy(() -> fence.set(key, 3, "resurrected")).isInstanceOf(StaleTokenException.class);
        assertThat(redis.exists(key)).isZero();
        assertThat(fence.currentToken(key)).hasValue(4);
    }

    @Test
    void tokensCompareExactlyBeyondTheDoublesOfLua() {
        long big = (1L << 53) + 1; // as a double it equals 2^53
        fence.set(key, big, "big");
        assertThatThrownBy(() -> fence.set(key, big - 1, "stale")).isInstanceOf(StaleTokenException.class);
        fence.set(key, Long.MAX_VALUE, "max");
        assertThatThrownBy(() -> fence.set(key, Long.MAX_VALUE - 1, "stale")).isInstanceOf(StaleTokenException.class);
        assertThat(redis.get(key)).isEqualTo("max");
        assertThat(fence.currentToken(key)).hasValue(Long.MAX_VALUE);
    }

    @Test
    void aWriteThatFailsLeavesTheTokenAsItWas() {
        fence.set(key, 5, "a string");
        assertThatThrownBy(() -> fence.hset(key, 9, Map.of("f", "v")))
                .isInstanceOf(RedisCommandExecutionException.class)
                .hasMessageContaining("WRONGTYPE");
        assertThat(fence.currentToken(key)).hasValue(5);
    }

    @Test
    void theScriptIsLoadedAgainAfterAScriptFlush() {
        fence.set(key, 1, "before");
        redis.scriptFlush();
        fence.set(key, 2, "after");
        assertThat(redis.get(key)).isEqualTo("after");
    }

    @Test
    void theTokenKeyIsInTheSameClusterSlot() {
        for (String k : new String[] {"plain", "user:{42}:profile", "{tag}", "a{b", "x:y:z", "ü-ñ"}) {
            assertThat(SlotHash.getSlot(RedisFence.tokenKey(k))).as(k).isEqualTo(SlotHash.getSlot(k));
        }
        assertThat(RedisFence.tokenKey("plain")).isEqualTo("{plain}:fence-token");
        assertThat(RedisFence.tokenKey("user:{42}:profile")).isEqualTo("user:{42}:profile:fence-token");
    }
}
