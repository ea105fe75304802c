package io.fencelock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.jdbc.support.JdbcTransactionManager;

/**
 * Spring Integration's lock registries, outside a Spring context, configured as their defaults
 * ship: waiters poll every 100 ms. A registry lock is also a local lock of the JVM, so one registry
 * stands for one process.
 */
final class SpringIntegrationPeer implements LockContender {
    private static final String WAITS_BY = "polling every 100 ms (default)";
    private static final Pattern INT_LOCK_DDL =
            Pattern.compile("CREATE TABLE INT_LOCK\\s*\\(.*?\\)[^;]*;", Pattern.DOTALL | Pattern.CASE_INSENSITIVE);

    private final LockRegistry registry;
    private final AutoCloseable connections;

    private SpringIntegrationPeer(LockRegistry registry, AutoCloseable connections) {
        this.registry = registry;
        this.connections = connections;
    }

    /**
     * {@code JdbcLockRegistry} with its {@code INT_LOCK} table created from the schema shipped in the
     * jar ({@code schema-postgresql.sql}, {@code schema-mysql.sql}).
     */
    static Factory jdbc(Function<String, HikariDataSource> pools, String schemaDialect) {
        return new Factory("Spring Integration JdbcLockRegistry", Kind.PEER, WAITS_BY, () -> {
            HikariDataSource pool = pools.apply("bench-spring-jdbc");
            try (Connection c = pool.getConnection();
                    Statement s = c.createStatement()) {
                s.execute(intLockDdl(schemaDialect).replaceFirst("(?i)CREATE TABLE", "CREATE TABLE IF NOT EXISTS"));
            }
            DefaultLockRepository repository = new DefaultLockRepository(pool);
            repository.setTransactionManager(new JdbcTransactionManager(pool));
            repository.afterPropertiesSet();
            repository.afterSingletonsInstantiated();
            JdbcLockRegistry registry = new JdbcLockRegistry(repository, BackendUnderTest.WORK_TTL);
            return new SpringIntegrationPeer(registry, () -> {
                repository.close();
                pool.close();
            });
        });
    }

    static String intLockDdl(String schemaDialect) throws IOException {
        String resource = "/org/springframework/integration/jdbc/schema-" + schemaDialect + ".sql";
        try (InputStream in = JdbcLockRegistry.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no Spring Integration schema for dialect '" + schemaDialect + "'");
            }
            Matcher m = INT_LOCK_DDL.matcher(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            if (!m.find()) {
                throw new IllegalStateException("no CREATE TABLE INT_LOCK in " + resource);
            }
            return m.group().replaceAll(";$", "");
        }
    }

    /** {@code RedisLockRegistry} on a Lettuce connection factory, default lock type (spin). */
    static Factory redis(String uri) {
        return new Factory("Spring Integration RedisLockRegistry", Kind.PEER, WAITS_BY, () -> {
            LettuceConnectionFactory factory = lettuceFactory(uri);
            RedisLockRegistry registry = new RedisLockRegistry(factory, "bench-spring", BackendUnderTest.WORK_TTL);
            return new SpringIntegrationPeer(registry, () -> {
                registry.destroy();
                factory.destroy();
            });
        });
    }

    /** A started Spring Data Redis connection factory on Lettuce for {@code uri}; destroy it when done. */
    static LettuceConnectionFactory lettuceFactory(String uri) {
        RedisURI parsed = RedisURI.create(uri);
        RedisStandaloneConfiguration config = new RedisStandaloneConfiguration(parsed.getHost(), parsed.getPort());
        config.setDatabase(parsed.getDatabase());
        char[] password = password(parsed);
        if (password != null) {
            config.setPassword(password);
        }
        LettuceConnectionFactory factory = new LettuceConnectionFactory(config);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** The password in {@code uri}, or null (Lettuce 7 keeps it behind a credentials provider). */
    static char[] password(RedisURI uri) {
        if (uri.getCredentialsProvider() instanceof RedisCredentialsProvider.ImmediateRedisCredentialsProvider now) {
            io.lettuce.core.RedisCredentials credentials = now.resolveCredentialsNow();
            return credentials == null ? null : credentials.getPassword();
        }
        return null;
    }

    @Override
    public Held acquire(String name, Duration wait) throws Exception {
        Lock lock = registry.obtain(name);
        return lock.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS) ? lock::unlock : null;
    }

    @Override
    public void close() throws Exception {
        connections.close();
    }
}
