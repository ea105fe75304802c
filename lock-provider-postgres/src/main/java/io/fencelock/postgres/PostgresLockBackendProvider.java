package io.fencelock.postgres;

import io.fencelock.jdbc.JdbcBackendProvider;
import java.util.List;

/**
 * Opens {@link PostgresLockBackend}s from {@code jdbc:postgresql:} URLs. Properties:
 * {@code user}, {@code password}, {@code schema}, {@code table}, {@code createTable}
 * ({@code true}/{@code false}) and {@code poolSize}.
 */
public final class PostgresLockBackendProvider extends JdbcBackendProvider {

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("jdbc:postgresql:");
    }

    @Override
    protected PostgresLockBackend.Builder builder() {
        return PostgresLockBackend.builder();
    }
}
