package io.fencelock.testservers.common;

import io.fencelock.spi.Redaction;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What the SQL servers share: their URL and credentials, connections, and a fresh database per test
 * class ({@link #createDatabase(String)}), dropped again when the server is someone else's (an
 * {@code env} source) so that it is left as found. A subclass gives its dialect's DDL and how its
 * URLs name a database.
 */
public abstract class JdbcServer extends TestServer {
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final boolean someoneElses;
    private final Queue<String> createdDatabases = new ConcurrentLinkedQueue<>();

    /** @param someoneElses a server this fixture did not start: its test databases are dropped on shutdown */
    protected JdbcServer(
            String jdbcUrl, String user, String password, boolean someoneElses, Runnable shutdown, boolean isShared) {
        super(shutdown, isShared);
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.someoneElses = someoneElses;
    }

    /** {@code CREATE DATABASE} of {@code name} (a validated identifier) in this dialect. */
    protected abstract String createDatabaseSql(String name);

    /** {@code DROP DATABASE} of {@code name} in this dialect, even with sessions left on it. */
    protected abstract String dropDatabaseSql(String name);

    /** {@code url} with its database replaced by {@code database}, keeping hosts and parameters. */
    protected abstract String urlWithDatabase(String url, String database);

    /** A JDBC URL of the server's own database; see {@link #createDatabase(String)} for tests. */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** The user to connect as (may be null for an {@code env} URL that carries its own). */
    public String user() {
        return user;
    }

    /** The password to connect with (may be null or empty where the URL carries it or the server does not ask). */
    public String password() {
        return password;
    }

    /** A connection to {@code url} on this server with its credentials. */
    public Connection connect(String url) throws SQLException {
        Properties properties = new Properties();
        if (user != null) {
            properties.setProperty("user", user);
        }
        if (password != null) {
            properties.setProperty("password", password);
        }
        return DriverManager.getConnection(url, properties);
    }

    /**
     * Creates a fresh database named {@code prefix} plus a random suffix, so that each test class
     * works on its own tables, and returns its JDBC URL (the server's URL with the database replaced).
     */
    public String createDatabase(String prefix) {
        if (prefix == null || !prefix.matches("[A-Za-z_][A-Za-z0-9_]*")) { // it becomes part of a database name
            throw new IllegalArgumentException("database prefix '" + prefix + "' is not a plain SQL identifier");
        }
        String stem = prefix.toLowerCase(Locale.ROOT);
        String name = stem.substring(0, Math.min(stem.length(), 40)) + "_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection c = connect(jdbcUrl);
                Statement s = c.createStatement()) {
            s.execute(createDatabaseSql(name));
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot create database " + name + " on " + summary() + ": " + e.getMessage(), e);
        }
        createdDatabases.add(name);
        return urlWithDatabase(jdbcUrl, name);
    }

    /** The first column of the first row of {@code sql} on the server's own database, e.g. its version. */
    protected final String queryOne(String sql) {
        try (Connection c = connect(jdbcUrl);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot query " + Redaction.uri(jdbcUrl) + ": " + Redaction.message(e.getMessage(), jdbcUrl), e);
        }
    }

    /** Someone else's server: leave it as we found it. */
    @Override
    protected void beforeShutdown() {
        if (!someoneElses) {
            return;
        }
        try (Connection c = connect(jdbcUrl);
                Statement s = c.createStatement()) {
            for (String name; (name = createdDatabases.poll()) != null; ) {
                s.execute(dropDatabaseSql(name));
            }
        } catch (SQLException e) {
            System.err.println("fencelock: cannot drop test databases on " + summary() + ": " + e.getMessage());
        }
    }
}
