package io.fencelock.mysql;

import io.fencelock.jdbc.DriverDataSource;
import io.fencelock.jdbc.JdbcFailures;
import io.fencelock.jdbc.JdbcSettings;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.Redaction;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;
import javax.sql.DataSource;

/**
 * MySQL Connector/J, the one driver for MySQL and MariaDB: which URLs it takes, which of its
 * failures may heal, and the connections of the backend's own pool. The driver is loaded by class name (it sits on the class
 * path, outside the module graph), and the pool gets a {@link DriverDataSource}, never the URL,
 * user or password themselves, so that its configuration dump cannot show them.
 */
final class ConnectorJ {
    private static final String URL_PREFIX = "jdbc:mysql:";
    private static final String MARIADB_PREFIX = "jdbc:mariadb:";
    /**
     * Which failures may heal: deadlocks, timeouts, lost connections, an exhausted pool (the
     * exception types, whatever their state); connection exceptions and transaction rollbacks (the
     * states); and by error code: lock wait timeout, deadlock, too many connections, shutdown in
     * progress, read-only (a primary being switched over: 1290, 1836), query interrupted,
     * connection killed (MariaDB: 1927), maximum statement execution time exceeded, disconnected
     * by the server for inactivity.
     */
    static final JdbcFailures.Retryable RETRYABLE = new JdbcFailures.Retryable(
            Set.of("08", "40"), Set.of(1205, 1213, 1040, 1053, 1290, 1836, 1317, 1927, 3024, 4031), true);

    private ConnectorJ() {}

    static Driver driver() {
        return DriverDataSource.driver("MySQL Connector/J", "com.mysql.cj.jdbc.Driver");
    }

    /**
     * A {@code jdbc:mysql:} URL as it is, a {@code jdbc:mariadb:} one as {@code jdbc:mysql:...};
     * anything else is refused, and so is what Connector/J cannot parse, before any I/O: a
     * malformed URL or port is bad input, not a failed connect.
     */
    static String url(String url) {
        String mysql;
        if (url.regionMatches(true, 0, URL_PREFIX, 0, URL_PREFIX.length())) {
            mysql = url;
        } else if (url.regionMatches(true, 0, MARIADB_PREFIX, 0, MARIADB_PREFIX.length())) {
            mysql = URL_PREFIX + url.substring(MARIADB_PREFIX.length());
        } else {
            throw new IllegalArgumentException(
                    "jdbcUrl must start with " + URL_PREFIX + " or " + MARIADB_PREFIX + ", got " + Redaction.uri(url));
        }
        ConnectionString.parse(mysql).requireValidPorts();
        try {
            driver().getPropertyInfo(mysql, new Properties()); // parses, connects nowhere
        } catch (SQLException | RuntimeException e) {
            // no cause: the parser's message may quote pieces of the URL; Redaction withholds it if so
            throw new IllegalArgumentException("jdbcUrl " + Redaction.uri(mysql) + " is not a valid MySQL URL: "
                    + Redaction.message(e.getMessage(), mysql));
        }
        return mysql;
    }

    /** The connections of the own pool: the settings' URL and credentials, and the properties the statements rely on. */
    static DataSource direct(JdbcSettings settings) {
        Properties connection = new Properties();
        if (settings.user() != null) {
            connection.setProperty("user", settings.user());
        }
        if (settings.password() != null) {
            connection.setProperty("password", settings.password());
        }
        // an acquire and its read-back, a renewal and its read-back: one round trip each
        connection.setProperty("allowMultiQueries", "true");
        connection.setProperty(
                "connectTimeout", Long.toString(settings.connectTimeout().toMillis()));
        connection.setProperty(
                "socketTimeout", Long.toString(settings.socketTimeout().toMillis()));
        connection.setProperty("tcpKeepAlive", "true");
        // server-side prepared statements, prepared once per connection: the acquire, release,
        // inspect and list statements skip parsing and planning (measured: about 10% of an
        // acquire + release). Multi-statements (a renewal and its read) go client-side by themselves.
        connection.setProperty("useServerPrepStmts", "true");
        connection.setProperty("cachePrepStmts", "true");
        connection.setProperty("prepStmtCacheSize", "32");
        connection.setProperty("prepStmtCacheSqlLimit", "2048");
        // and NOT useAffectedRows=true: a refused acquire changes no row, and Connector/J only
        // reports LAST_INSERT_ID (the holder's remaining time) for rows it counts as affected
        connection.setProperty("useLocalSessionState", "true");
        connection.setProperty("cacheServerConfiguration", "true");
        return new DriverDataSource(driver(), "Connector/J", settings.jdbcUrl(), connection);
    }

    /**
     * Run on each new connection of the own pool: a lock wait ends with a definite error before the socket gives
     * up on the statement, and the session's sql_mode is the one the statements are written for (see
     * {@link ServerFacts#OWN_SQL_MODE}).
     */
    static String initSql(JdbcSettings settings) {
        return "SET SESSION innodb_lock_wait_timeout = "
                + Math.max(1, settings.socketTimeout().toSeconds() / 2)
                + ", sql_mode = " + ServerFacts.OWN_SQL_MODE;
    }
}
