package io.fencelock.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.mysql.MySqlLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

/** MySQL or MariaDB from lock-tck's fixture (env URL, local MariaDB binaries, Testcontainers). */
final class MariaDbUnderTest extends BackendUnderTest {
    private static final String RAW_TABLE = "bench_raw_locks";
    private static final String NOW = "UTC_TIMESTAMP(6)";
    private static final String FREE = "(lease_id IS NULL OR expires_at <= " + NOW + ")";

    private final MariaDbServer server;
    private final String url;

    MariaDbUnderTest() {
        this(MariaDbServer.shared());
    }

    private MariaDbUnderTest(MariaDbServer server) {
        super("mariadb", "io.fencelock.mysql", "polling with backoff (no release signal)", server);
        this.server = server;
        this.url = server.createDatabase("bench");
        MySqlLockBackend.builder()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .createTable(true)
                .build()
                .close();
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            s.execute(
                    "CREATE TABLE " + RAW_TABLE + " (name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
                            + " lease_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL, token BIGINT NOT NULL,"
                            + " token_issued_at DATETIME(6) NOT NULL, expires_at DATETIME(6) NOT NULL, PRIMARY KEY (name))"
                            + " ENGINE=InnoDB");
        } catch (Exception e) {
            throw new IllegalStateException(
                    "cannot create the raw primitive's table on " + description() + ": " + e, e);
        }
    }

    @Override
    public String title() {
        return server.product();
    }

    @Override
    public LockBackend openBackend() {
        return MySqlLockBackend.builder()
                .jdbcUrl(url)
                .user(server.user())
                .password(server.password())
                .build();
    }

    HikariDataSource openPool(String name) {
        // affected rows, not found rows: an upsert that changed nothing reports 0, i.e. "held"
        String withAffectedRows = url + (url.contains("?") ? "&" : "?") + "useAffectedRows=true";
        return JdbcRawPrimitive.pool(withAffectedRows, server.user(), server.password(), name);
    }

    @Override
    protected RawPrimitive openRaw() {
        // assignments run left to right: decide on the old owner before lease_id is overwritten
        return new JdbcRawPrimitive(
                openPool("bench-raw-mariadb"),
                "INSERT INTO " + RAW_TABLE + " (name, lease_id, token, token_issued_at, expires_at)"
                        + " VALUES (?, ?, 1, " + NOW + ", " + NOW + " + INTERVAL ? MICROSECOND)"
                        + " ON DUPLICATE KEY UPDATE token = IF(" + FREE + ", token + 1, token),"
                        + " token_issued_at = IF(" + FREE + ", VALUES(token_issued_at), token_issued_at),"
                        + " lease_id = IF(" + FREE + ", VALUES(lease_id), lease_id),"
                        + " expires_at = IF(lease_id = VALUES(lease_id), VALUES(expires_at), expires_at)",
                "UPDATE " + RAW_TABLE + " SET lease_id = NULL, expires_at = " + NOW
                        + " WHERE name = ? AND lease_id = ?");
    }

    @Override
    public String rawPrimitiveDescription() {
        return "one INSERT ... ON DUPLICATE KEY UPDATE + one UPDATE to release, autocommit";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(
                ShedLockPeer.jdbc(this::openPool, "TIMESTAMP(3)"), SpringIntegrationPeer.jdbc(this::openPool, "mysql"));
    }

    @Override
    public void fill(long from, long to) throws Exception {
        // MariaDB's sequence engine makes the rows on the server; MySQL gets a recursive CTE
        String rows = server.product().equalsIgnoreCase("MariaDB")
                ? "SELECT seq AS n FROM seq_" + from + "_to_" + (to - 1)
                : "WITH RECURSIVE g(n) AS (SELECT " + from + " UNION ALL SELECT n + 1 FROM g WHERE n < " + (to - 1)
                        + ") SELECT n FROM g";
        try (Connection c = server.connect(url);
                Statement s = c.createStatement()) {
            if (!server.product().equalsIgnoreCase("MariaDB")) {
                s.execute("SET SESSION cte_max_recursion_depth = " + (to - from + 1));
            }
            // into the provider's table and the raw primitive's alike
            for (String table : List.of("fencelock_locks", RAW_TABLE)) {
                s.executeUpdate("INSERT INTO " + table + " (name, lease_id, token, token_issued_at, expires_at)"
                        + " SELECT CONCAT('" + FILL_PREFIX + "', n), NULL, 1, " + NOW + ", " + NOW + " FROM ("
                        + rows + ") r");
            }
        }
    }

    @Override
    public void close() {}
}
