package io.fencelock.mysql;

import io.fencelock.jdbc.JdbcBackendProvider;
import java.util.List;

/**
 * Opens {@link MySqlLockBackend}s from {@code jdbc:mysql:} URLs, and from {@code jdbc:mariadb:} URLs,
 * which are handed to MySQL Connector/J as {@code jdbc:mysql:} (same hosts, database and
 * parameters). Properties: {@code user}, {@code password}, {@code schema}, {@code table},
 * {@code createTable} ({@code true}/{@code false}) and {@code poolSize}.
 */
public final class MySqlLockBackendProvider extends JdbcBackendProvider {

    @Override
    public String name() {
        return "mysql";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("jdbc:mysql:", "jdbc:mariadb:");
    }

    @Override
    protected MySqlLockBackend.Builder builder() {
        return MySqlLockBackend.builder();
    }
}
