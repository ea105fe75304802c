package io.fencelock.spring;

import io.fencelock.LockClient;
import io.fencelock.testservers.postgres.PostgresServer;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The starter on a real PostgreSQL, reached through the application's own DataSource (no fencelock.uri). */
class PostgresExclusiveTest extends ExclusiveOnTwoNodesContract {
    private static String url;
    private static LockClient operator;

    @BeforeAll
    static void database() {
        url = PostgresServer.shared().createDatabase("spring");
        PostgresServer pg = PostgresServer.shared();
        LockClient.Builder builder = LockClient.builder().uri(url).property("createTable", "true");
        if (pg.user() != null) {
            builder.property("user", pg.user());
        }
        if (pg.password() != null) {
            builder.property("password", pg.password());
        }
        operator = builder.build();
    }

    @AfterAll
    static void close() {
        operator.close();
    }

    @Override
    protected Map<String, Object> backend() {
        PostgresServer pg = PostgresServer.shared();
        Map<String, Object> p = new HashMap<>();
        p.put("spring.datasource.url", url);
        if (pg.user() != null) {
            p.put("spring.datasource.username", pg.user());
        }
        if (pg.password() != null) {
            p.put("spring.datasource.password", pg.password());
        }
        p.put("fencelock.properties.createTable", "true");
        return p;
    }

    @Override
    protected LockClient operator() {
        return operator;
    }
}
