package io.fencelock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * The raw primitive of a SQL backend: one prepared autocommit statement per acquire (an upsert
 * whose row count says whether it took the lock) and one per release, on a pool as large as the
 * provider's, so that both meet the same connection limit under 64 clients.
 */
final class JdbcRawPrimitive implements RawPrimitive {
    static final int POOL_SIZE = 8; // the providers' default pool size

    private final HikariDataSource pool;
    private final String acquireSql;
    private final String releaseSql;

    /**
     * @param acquireSql parameters: name, owner, ttl in microseconds; its update count is positive
     *                   exactly when the lock was taken
     * @param releaseSql parameters: name, owner; an update or a query
     */
    JdbcRawPrimitive(HikariDataSource pool, String acquireSql, String releaseSql) {
        this.pool = pool;
        this.acquireSql = acquireSql;
        this.releaseSql = releaseSql;
    }

    static HikariDataSource pool(String jdbcUrl, String user, String password, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(POOL_SIZE);
        config.setPoolName(name);
        config.setAutoCommit(true);
        return new HikariDataSource(config);
    }

    @Override
    public boolean tryAcquire(String name, String owner, Duration ttl) throws Exception {
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement(acquireSql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.setLong(3, ttl.toNanos() / 1000);
            return ps.executeUpdate() > 0;
        }
    }

    @Override
    public void release(String name, String owner) throws Exception {
        try (Connection c = pool.getConnection();
                PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setString(1, name);
            ps.setString(2, owner);
            ps.execute(); // an UPDATE, or a SELECT of pg_notify over one
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
