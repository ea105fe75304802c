/**
 * The MySQL / MariaDB lock backend: {@link io.fencelock.mysql.MySqlLockBackend}, also found through
 * {@link java.util.ServiceLoader} for {@code jdbc:mysql:} and {@code jdbc:mariadb:} URLs. MySQL
 * Connector/J is needed at run time only (the backend loads its driver by class name), so it is not required here.
 */
module io.fencelock.mysql {
    requires transitive io.fencelock; // the backend implements its SPI
    requires transitive io.fencelock.jdbc; // the builder's settings; it takes a javax.sql.DataSource
    requires org.slf4j;

    exports io.fencelock.mysql;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.mysql.MySqlLockBackendProvider;
}
