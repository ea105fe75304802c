package io.fencelock.jdbc;

import io.fencelock.spi.Redaction;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * What a {@link JdbcBuilder} collected, each value already checked: either a URL (with user and
 * password, for the backend's own pool) or the application's DataSource. Its {@link #toString()}
 * names no credential.
 */
public final class JdbcSettings {
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final DataSource dataSource;
    private final String schema;
    private final String table;
    private final boolean createTable;
    private final int poolSize;
    private final Duration connectTimeout;
    private final Duration socketTimeout;

    JdbcSettings(
            String jdbcUrl,
            String user,
            String password,
            DataSource dataSource,
            String schema,
            String table,
            boolean createTable,
            int poolSize,
            Duration connectTimeout,
            Duration socketTimeout) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.dataSource = dataSource;
        this.schema = schema;
        this.table = table;
        this.createTable = createTable;
        this.poolSize = poolSize;
        this.connectTimeout = connectTimeout;
        this.socketTimeout = socketTimeout;
    }

    /** The URL as the driver takes it, null with the application's DataSource. */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** The application's DataSource, null with a URL. */
    public DataSource dataSource() {
        return dataSource;
    }

    /** Whether the backend runs its own pool (a URL was given) rather than the application's DataSource. */
    public boolean ownPool() {
        return jdbcUrl != null;
    }

    public String schema() {
        return schema;
    }

    public String table() {
        return table;
    }

    public boolean createTable() {
        return createTable;
    }

    public int poolSize() {
        return poolSize;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration socketTimeout() {
        return socketTimeout;
    }

    /** The server for messages and log lines: the URL without its credentials, or "a DataSource of the application". */
    public String where() {
        return jdbcUrl == null ? "a DataSource of the application" : Redaction.uri(jdbcUrl);
    }

    @Override
    public String toString() {
        return "JdbcSettings[" + where() + ", table " + (schema == null ? "" : schema + ".") + table + "]";
    }
}
