package io.fencelock.jdbc;

import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BiConsumer;
import javax.sql.DataSource;

/**
 * The settings every JDBC lock backend takes, each checked when it is set (an
 * {@link IllegalArgumentException} naming the value and the rule, before any I/O). Either
 * {@link #jdbcUrl(String)} (with user and password; the backend runs its own small HikariCP pool)
 * or {@link #dataSource(DataSource)} (the application's pool, which the backend never closes).
 * A backend's builder adds its dialect: which URLs it takes, its table's name rules and defaults,
 * and {@link #build()}.
 *
 * @param <B> the backend's builder
 */
public abstract class JdbcBuilder<B extends JdbcBuilder<B>> {
    private String jdbcUrl;
    private String user;
    private String password;
    private DataSource dataSource;
    private String schema;
    private String table;
    private boolean createTable;
    private int poolSize = 8;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration socketTimeout = Duration.ofSeconds(10);
    private final BiConsumer<String, String> checkTable;

    /**
     * @param schema     the default schema, or null for the connection's own
     * @param table      the default table
     * @param checkTable checks a schema (null: the connection's own) and a table together, before
     *                   any I/O (the dialect's lock table, made from the two names)
     */
    protected JdbcBuilder(String schema, String table, BiConsumer<String, String> checkTable) {
        this.schema = schema;
        this.table = table;
        this.checkTable = checkTable;
    }

    /** Checks a URL before any I/O and returns it as the driver takes it. */
    protected abstract String checkUrl(String jdbcUrl);

    /**
     * Validates the settings, opens the connections, creates the table if asked, and checks it
     * (throwing {@link IllegalStateException} saying how to fix it).
     */
    public abstract LockBackend build();

    /** A URL of the backend's driver; credentials may be given in it or with user/password. */
    public B jdbcUrl(String jdbcUrl) {
        this.jdbcUrl = checkUrl(Objects.requireNonNull(jdbcUrl, "jdbcUrl"));
        return self();
    }

    public B user(String user) {
        this.user = user;
        return self();
    }

    public B password(String password) {
        this.password = password;
        return self();
    }

    /** The application's DataSource, instead of a URL; the backend never closes it. */
    public B dataSource(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        return self();
    }

    /** The schema (database) of the lock table; a plain identifier. */
    public B schema(String schema) {
        checkTable.accept(SqlIdentifiers.require("schema", schema), table); // validates before keeping it
        this.schema = schema;
        return self();
    }

    /** The lock table (default {@code fencelock_locks}); a plain identifier. */
    public B table(String table) {
        checkTable.accept(schema, table);
        this.table = table;
        return self();
    }

    /** Whether {@link #build()} creates the table (and what goes with it) when absent (default false). */
    public B createTable(boolean createTable) {
        this.createTable = createTable;
        return self();
    }

    /** Connections of the backend's own pool (default 8); ignored with {@link #dataSource(DataSource)}. */
    public B poolSize(int poolSize) {
        if (poolSize < 1) {
            throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
        }
        this.poolSize = poolSize;
        return self();
    }

    /** How long to wait for a connection, from the pool or the network (default 5 s). */
    public B connectTimeout(Duration connectTimeout) {
        this.connectTimeout = SqlTime.requirePositive("connectTimeout", connectTimeout);
        return self();
    }

    /**
     * How long a statement may wait for the server's answer (default 10 s), so that a dead or
     * frozen server fails a renewal instead of hanging it; ignored with {@link #dataSource(DataSource)}.
     */
    public B socketTimeout(Duration socketTimeout) {
        this.socketTimeout = SqlTime.requirePositive("socketTimeout", socketTimeout);
        return self();
    }

    /** The settings, once exactly one of a URL and a DataSource is set. */
    protected final JdbcSettings settings() {
        checkTable.accept(schema, table);
        if ((jdbcUrl == null) == (dataSource == null)) {
            throw new IllegalArgumentException("set exactly one of jdbcUrl and dataSource");
        }
        return new JdbcSettings(
                jdbcUrl,
                user,
                password,
                dataSource,
                schema,
                table,
                createTable,
                poolSize,
                connectTimeout,
                socketTimeout);
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
