package io.fencelock.mysql;

import static io.fencelock.testservers.common.ServerFixture.PROXIED_TIMEOUT;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.testservers.common.Endpoints;
import io.fencelock.testservers.common.ServerFixture;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;

/**
 * The whole TCK on an application's HikariCP pool rather than the provider's own: Connector/J's defaults (no
 * multi-statements, no server-side prepared statements), and sessions whose sql_mode carries every mode the
 * provider accepts that changes how SQL parses or compares (ANSI's quoting and {@code ||}, {@code NOT}'s
 * precedence, unsigned subtraction, fractional-second rounding, padded CHARs, strictness everywhere). The tables
 * and stored procedures are created through that pool too, so they keep its sql_mode. Only
 * {@code NO_BACKSLASH_ESCAPES} is left out: Connector/J learns it once, when it connects, so a pool must have
 * it from the server, never from a later {@code SET}.
 */
class MySqlApplicationPoolContractTest extends LockBackendContract {
    private static final String COMMON_MODES =
            "ANSI,HIGH_NOT_PRECEDENCE,NO_UNSIGNED_SUBTRACTION,PAD_CHAR_TO_FULL_LENGTH,"
                    + "STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_VALUE_ON_ZERO";

    @Override
    protected BackendFixture fixture() {
        MariaDbServer server = MariaDbServer.shared();
        String modes = COMMON_MODES
                + (server.product().equals("MariaDB") ? ",TIME_ROUND_FRACTIONAL" : ",TIME_TRUNCATE_FRACTIONAL");
        String url = server.createDatabase("apppool");
        onApplicationPool(server, url, modes, true, false).close(); // as an operator would: tables created once
        return ServerFixture.on(server, () -> onApplicationPool(server, url, modes, false, false))
                .withClient(ClientConnection.withCredentials(
                        url, server.user(), server.password(), Map.of("poolSize", "2")))
                .withProxy(via -> onApplicationPool(server, Endpoints.withAddress(url, via), modes, false, true));
    }

    /** A backend on a pool of two of the application's, closed with it; through the proxy with its short timeouts. */
    private static LockBackend onApplicationPool(
            MariaDbServer server, String url, String modes, boolean createTable, boolean proxied) {
        HikariConfig config = new HikariConfig();
        long timeout = PROXIED_TIMEOUT.toMillis();
        config.setJdbcUrl(
                proxied
                        ? url + (url.contains("?") ? "&" : "?") + "connectTimeout=" + timeout + "&socketTimeout="
                                + timeout
                        : url);
        config.setUsername(server.user());
        config.setPassword(server.password());
        config.setMaximumPoolSize(2);
        if (proxied) {
            config.setConnectionTimeout(timeout);
            config.setValidationTimeout(timeout / 2);
        }
        // a lock wait ends before the socket gives up, as the own pool's init SQL arranges
        config.setConnectionInitSql("SET SESSION innodb_lock_wait_timeout = 1, sql_mode = '" + modes + "'");
        HikariDataSource pool = new HikariDataSource(config);
        try {
            MySqlLockBackend backend = MySqlLockBackend.builder()
                    .dataSource(pool)
                    .createTable(createTable)
                    .build();
            return closingThePool(backend, pool);
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /** {@code backend}, whose {@code close()} closes {@code pool} after it: the pool is the application's. */
    private static LockBackend closingThePool(LockBackend backend, HikariDataSource pool) {
        return (LockBackend) Proxy.newProxyInstance(
                LockBackend.class.getClassLoader(), new Class<?>[] {LockBackend.class}, (proxy, method, args) -> {
                    try {
                        return method.invoke(backend, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (method.getName().equals("close") && method.getParameterCount() == 0) {
                            pool.close();
                        }
                    }
                });
    }
}
