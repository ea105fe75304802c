/**
 * The PostgreSQL lock backend: {@link io.fencelock.postgres.PostgresLockBackend}, also found
 * through {@link java.util.ServiceLoader} for {@code jdbc:postgresql:} URLs.
 */
module io.fencelock.postgres {
    requires transitive io.fencelock; // the backend implements its SPI
    requires transitive io.fencelock.jdbc; // the builder's settings; it takes a javax.sql.DataSource
    requires org.postgresql.jdbc;
    requires java.naming; // pgjdbc's PGSimpleDataSource is a javax.naming.Referenceable
    requires org.slf4j;

    exports io.fencelock.postgres;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.postgres.PostgresLockBackendProvider;
}
