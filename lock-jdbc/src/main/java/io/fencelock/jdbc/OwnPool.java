package io.fencelock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The only class that names HikariCP, loaded only for a backend built from a URL. Its signature
 * has JDK types only, so that {@link JdbcConnections} links without HikariCP.
 */
final class OwnPool {
    private OwnPool() {}

    /** How long a borrower may wait for a connection: the connect timeout, and no less than HikariCP's floor. */
    static long connectionTimeoutMillis(JdbcSettings settings) {
        return Math.max(250, settings.connectTimeout().toMillis());
    }

    static DataSource open(
            DataSource direct, String poolName, JdbcSettings settings, String initSql, JdbcFailures failures) {
        // the pool sees a DataSource only: no URL, user or password in its configuration or its log
        HikariConfig config = new HikariConfig();
        config.setDataSource(direct);
        config.setPoolName(poolName);
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(Math.min(2, settings.poolSize()));
        config.setAutoCommit(true);
        config.setConnectionTimeout(connectionTimeoutMillis(settings));
        if (initSql != null) {
            config.setConnectionInitSql(initSql);
        }
        try {
            return new HikariDataSource(config);
        } catch (HikariPool.PoolInitializationException e) {
            // the first connection failed: report it like any other SQL failure
            if (e.getCause() instanceof SQLException sql) {
                throw failures.failure("connect", sql, settings.jdbcUrl());
            }
            throw failures.connectFailure(e, settings.jdbcUrl());
        } catch (RuntimeException e) {
            if (e.getCause() instanceof SQLException sql) {
                throw failures.failure("connect", sql, settings.jdbcUrl());
            }
            throw e;
        }
    }
}
