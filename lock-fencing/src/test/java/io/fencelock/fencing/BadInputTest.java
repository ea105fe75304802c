package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import io.fencelock.testservers.mongo.MongoServer;
import io.fencelock.testservers.postgres.PostgresServer;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Bad input is refused with an IllegalArgumentException that names the value and the rule, before
 * any I/O: the connections here are closed, so any attempt to use them would fail differently.
 */
class BadInputTest {

    private static void refused(ThrowingCallable call, String... mentions) {
        var a = assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class);
        for (String m : mentions) {
            a.hasMessageContaining(m);
        }
    }

    @Test
    void theJdbcHelperChecksBeforeTouchingTheConnection() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        Connection closed = pg.connect(pg.jdbcUrl());
        closed.close();
        JdbcFence fence = JdbcFence.builder(SqlDialect.POSTGRESQL).build();
        refused(() -> fence.write(closed, "r", 0, c -> null), "fencing token 0", "positive");
        refused(() -> fence.write(closed, "r", -3, c -> null), "fencing token -3", "positive");
        refused(() -> fence.write(closed, null, 1, c -> null), "resource key is null");
        refused(() -> fence.write(closed, "", 1, c -> null), "resource key ''", "1 to 255 characters");
        refused(() -> fence.write(closed, "x".repeat(256), 1, c -> null), "256 characters", "1 to 255 characters");
        refused(() -> fence.write(closed, "a\0b", 1, c -> null), "NUL");
        refused(() -> fence.write(closed, "r", 1, null), "work is null");
        refused(() -> fence.write(null, "r", 1, c -> null), "connection is null");
        refused(() -> fence.claim(closed, "r", 0), "fencing token 0");
        refused(() -> fence.currentToken(closed, null), "resource key is null");
        refused(() -> JdbcFence.builder(null), "dialect is null");
        refused(
                () -> JdbcFence.builder(SqlDialect.MYSQL).schema("a.b").build(),
                "schema 'a.b'",
                "plain SQL identifier");
    }

    @Test
    void theRedisFenceChecksBeforeTalkingToRedis() {
        RedisClient client = RedisClient.create(RedisServer.shared().uri());
        StatefulRedisConnection<String, String> connection = client.connect();
        RedisFence fence = RedisFence.of(connection.sync());
        connection.close();
        try {
            refused(() -> fence.set("k", 0, "v"), "fencing token 0", "positive");
            refused(() -> fence.set(null, 1, "v"), "key is null");
            refused(() -> fence.set("", 1, "v"), "key ''");
            refused(() -> fence.set("k", 1, null), "value is null");
            refused(() -> fence.hset("k", 1, Map.of()), "0 entries", "1 to");
            refused(() -> fence.hset("k", 1, null), "fields is null");
            refused(() -> fence.del("k", -1), "fencing token -1");
            refused(() -> fence.currentToken(null), "key is null");
            refused(() -> RedisFence.of(null), "redis commands is null");
        } finally {
            LettuceClients.shutDown(client);
        }
    }

    @Test
    void theMongoFenceChecksBeforeTalkingToMongoDb() {
        MongoClient client = MongoClients.create(MongoServer.shared().uri());
        MongoCollection<Document> docs = client.getDatabase("fl_bad_input").getCollection("docs");
        MongoFence fence = MongoFence.of(docs);
        client.close();
        refused(() -> fence.set("d", 0, Map.of("f", 1)), "fencing token 0", "positive");
        refused(() -> fence.set(null, 1, Map.of("f", 1)), "id is null");
        refused(() -> fence.set("d", 1, Map.of()), "0 entries", "at least one field");
        refused(() -> fence.set("d", 1, null), "fields is null");
        refused(() -> fence.set("d", 1, Map.of("fenceToken", 99)), "'fenceToken'", "the fence's to write");
        refused(() -> fence.update("d", 1, Updates.inc("fenceToken.x", 1)), "'fenceToken.x'", "the fence's to write");
        refused(() -> fence.update("d", 1, new Document("body", "replacement")), "'body'", "not a replacement");
        refused(() -> fence.update("d", 1, new Document()), "update {}", "at least one operator");
        refused(() -> fence.update("d", 1, null), "update is null");
        refused(() -> fence.clear("d", -1), "fencing token -1");
        refused(() -> fence.currentToken(null), "id is null");
        refused(() -> MongoFence.of(null), "collection is null");
        for (String field : new String[] {"", "_id", "$t", "a.b", "x".repeat(65)}) {
            refused(() -> MongoFence.of(docs, field), "tokenField '", "breaks the rule");
        }
    }

    @Test
    void theGuardChecksBeforeItsStore() {
        TokenGuard guard = TokenGuard.backedBy(new TokenStore() {
            @Override
            public long advance(String resource, long token) {
                throw new AssertionError("the store was reached");
            }

            @Override
            public java.util.OptionalLong current(String resource) {
                throw new AssertionError("the store was reached");
            }
        });
        refused(() -> guard.admit("r", 0), "fencing token 0");
        refused(() -> guard.admit(null, 1), "resource key is null");
        refused(() -> guard.runFenced("r", 1, null), "work is null");
        refused(() -> guard.current(""), "resource key ''");
        refused(() -> TokenGuard.backedBy(null), "token store is null");
        refused(() -> TokenGuard.headerValue(0), "fencing token 0");
    }

    @Test
    void theTableFenceChecksItsNames() {
        refused(
                () -> TableFence.builder(SqlDialect.MYSQL)
                        .table("t")
                        .schema("s-1")
                        .build(),
                "schema 's-1'");
        refused(() -> TableFence.builder(null), "dialect is null");
    }
}
