/**
 * What the JDBC lock backends share ({@code io.fencelock.jdbc}): the builder settings, the
 * connections (an own HikariCP pool or the application's DataSource), failure classification,
 * identifier rules, the {@link io.fencelock.LockInfo} row reader and the names a backend knows to have a row. HikariCP is needed only for
 * a backend built from a URL; with a DataSource its classes are never loaded.
 */
module io.fencelock.jdbc {
    requires transitive io.fencelock; // builders build LockBackends, failures are LockBackendExceptions
    requires transitive java.sql; // the builders take a javax.sql.DataSource
    requires static com.zaxxer.hikari; // the own pool only

    exports io.fencelock.jdbc;
}
