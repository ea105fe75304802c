package io.fencelock.bench;

import com.mongodb.client.MongoClient;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.mongo.MongoLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * ShedLock (net.javacrumbs.shedlock) on the same server: a lock is held until {@code lockAtMostFor}
 * (no renewal, no token), and ShedLock cannot wait, so a waiter retries at once.
 */
final class ShedLockPeer implements LockContender {
    private static final String WAITS_BY = "busy retry (ShedLock has no waiting)";

    private final LockProvider provider;
    private final AutoCloseable connections;

    private ShedLockPeer(LockProvider provider, AutoCloseable connections) {
        this.provider = provider;
        this.connections = connections;
    }

    /**
     * ShedLock's JdbcTemplate provider with {@code usingDbTime()}, as its README recommends, on a table
     * of its documented shape.
     */
    static Factory jdbc(Function<String, HikariDataSource> pools, String timestampType) {
        return new Factory("ShedLock (JDBC)", Kind.PEER, WAITS_BY, () -> {
            HikariDataSource pool = pools.apply("bench-shedlock");
            try (Connection c = pool.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until " + timestampType
                        + " NOT NULL, locked_at " + timestampType + " NOT NULL, locked_by VARCHAR(255) NOT NULL,"
                        + " PRIMARY KEY (name))");
            }
            JdbcTemplateLockProvider provider =
                    new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                            .withJdbcTemplate(new JdbcTemplate(pool))
                            .usingDbTime()
                            .build());
            return new ShedLockPeer(provider, pool);
        });
    }

    static Factory mongo(Supplier<MongoClient> clients, String database) {
        return new Factory("ShedLock (Mongo)", Kind.PEER, WAITS_BY, () -> {
            MongoClient client = clients.get();
            return new ShedLockPeer(new MongoLockProvider(client.getDatabase(database)), client);
        });
    }

    /** ShedLock's Spring Data Redis provider ({@code SET NX PX}), on Lettuce. */
    static Factory redis(String uri) {
        return new Factory("ShedLock (Redis)", Kind.PEER, WAITS_BY, () -> {
            LettuceConnectionFactory factory = SpringIntegrationPeer.lettuceFactory(uri);
            return new ShedLockPeer(new RedisLockProvider(factory, "bench"), factory::destroy);
        });
    }

    private final LongAdder attempts = new LongAdder();

    @Override
    public long acquireAttempts() {
        return attempts.sum();
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        return BusyRetry.until(wait, attempts, () -> {
            Optional<SimpleLock> lock =
                    provider.lock(new LockConfiguration(Instant.now(), name, BackendUnderTest.WORK_TTL, Duration.ZERO));
            return lock.<Held>map(l -> l::unlock).orElse(null);
        });
    }

    @Override
    public void close() throws Exception {
        connections.close();
    }
}
