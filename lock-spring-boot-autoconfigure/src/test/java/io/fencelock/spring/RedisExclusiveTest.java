package io.fencelock.spring;

import io.fencelock.LockClient;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The starter on a real Redis, through fencelock.uri (the application has no DataSource). */
class RedisExclusiveTest extends ExclusiveOnTwoNodesContract {
    private static final String KEY_PREFIX =
            "spring-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private static LockClient operator;

    @BeforeAll
    static void connect() {
        operator = LockClient.builder()
                .uri(RedisServer.shared().uri())
                .property("keyPrefix", KEY_PREFIX)
                .build();
    }

    @AfterAll
    static void close() {
        operator.close();
    }

    @Override
    protected Map<String, Object> backend() {
        return Map.of(
                "fencelock.uri",
                RedisServer.shared().uri(),
                "fencelock.properties.keyPrefix",
                KEY_PREFIX,
                "spring.autoconfigure.exclude",
                "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
    }

    @Override
    protected LockClient operator() {
        return operator;
    }
}
