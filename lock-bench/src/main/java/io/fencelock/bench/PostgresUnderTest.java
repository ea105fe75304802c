package io.fencelock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.postgres.PostgresLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;

/** PostgreSQL from lock-tck's fixture (env URL, local binaries, Testcontainers or zonky embedded). */
final class PostgresUnderTest extends BackendUnderTest {
    private static final String RAW_TABLE = "bench_raw_locks";
    private static final String MICROS = " * interval '1 microsecond'";

    private final PostgresServer server;
    private final String url;

    PostgresUnderTest() {
        this(PostgresServer.shared());
    }

    private PostgresUnderTest(PostgresServer server) {
        super("postgres", "io.fencelock.postgres", "LISTEN/NOTIFY", server);
        this.server = server;
        this.url = server.createDatabase("bench");
        PostgresLockBackend.builder()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .createTable(true)
                .build()
                .close();
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            // the provider's table shape and sequence, for the raw primitive alone
            s.execute("CREATE SEQUENCE " + RAW_TABLE + "_seq AS bigint CACHE 1;"
                    + "CREATE TABLE " + RAW_TABLE + " (name text PRIMARY KEY, lease_id text, token bigint NOT NULL,"
                    + " token_issued_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)");
        } catch (Exception e) {
            throw new IllegalStateException(
                    "cannot create the raw primitive's table on " + description() + ": " + e, e);
        }
    }

    @Override
    public LockBackend openBackend() {
        return PostgresLockBackend.builder()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .build();
    }

    HikariDataSource openPool(String name) {
        return JdbcRawPrimitive.pool(url, server.user(), server.password(), name);
    }

    @Override
    protected RawPrimitive openRaw() {
        return openRaw("UPDATE " + RAW_TABLE + " SET lease_id = NULL, expires_at = clock_timestamp()"
                + " WHERE name = ? AND lease_id = ?");
    }

    private RawPrimitive openRaw(String releaseSql) {
        String next = "nextval('" + RAW_TABLE + "_seq')";
        return new JdbcRawPrimitive(
                openPool("bench-raw-postgres"),
                "INSERT INTO " + RAW_TABLE + " AS l (name, lease_id, token, token_issued_at, expires_at)"
                        + " VALUES (?, ?, " + next + ", clock_timestamp(), clock_timestamp() + ?" + MICROS + ")"
                        + " ON CONFLICT (name) DO UPDATE SET lease_id = EXCLUDED.lease_id, token = " + next + ","
                        + " token_issued_at = clock_timestamp(), expires_at = EXCLUDED.expires_at"
                        + " WHERE l.lease_id IS NULL OR l.expires_at <= clock_timestamp()",
                releaseSql);
    }

    /**
     * The raw primitive whose release also signals waiters with {@code pg_notify}, as the provider's
     * does: the difference to the plain raw primitive is the price of the wake-up signal (NOTIFY
     * serialises committing transactions on PostgreSQL's notification queue).
     */
    private RawPrimitive openRawNotifying() {
        return openRaw("WITH r AS (UPDATE " + RAW_TABLE + " SET lease_id = NULL, expires_at = clock_timestamp()"
                + " WHERE name = ? AND lease_id = ? RETURNING name) SELECT pg_notify('bench_raw', r.name) FROM r");
    }

    @Override
    public String rawPrimitiveDescription() {
        return "one prepared INSERT ... ON CONFLICT DO UPDATE (token from nextval) + one UPDATE to release, autocommit";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(
                new LockContender.Factory(
                        "raw primitive, release with pg_notify",
                        LockContender.Kind.RAW,
                        RawContender.WAITS_BY,
                        () -> new RawContender(openRawNotifying(), WORK_TTL)),
                ShedLockPeer.jdbc(this::openPool, "TIMESTAMP"),
                SpringIntegrationPeer.jdbc(this::openPool, "postgresql"));
    }

    /** The names go into the provider's table and the raw primitive's alike, each drawing its own sequence. */
    @Override
    public void fill(long from, long to) throws Exception {
        try (Connection c = server.connect(url)) {
            for (String table : List.of("fencelock_locks", RAW_TABLE)) {
                String sequence = table.equals(RAW_TABLE) ? RAW_TABLE + "_seq" : table + "_token_seq";
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                        + " (name, lease_id, token, token_issued_at, expires_at) SELECT '" + FILL_PREFIX
                        + "' || g, NULL, nextval('" + sequence + "'), clock_timestamp(), clock_timestamp()"
                        + " FROM generate_series(?::bigint, ?::bigint) g")) {
                    ps.setLong(1, from);
                    ps.setLong(2, to - 1);
                    ps.executeUpdate();
                }
            }
        }
    }

    @Override
    public void close() {
        // the shared server is stopped by the fixture's shutdown hook
    }
}
