package io.fencelock.jdbc;

import io.fencelock.spi.Redaction;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Connections straight from a JDBC driver, for a backend's own pool. The pool gets this instead
 * of a JDBC URL, a user and a password, so that neither its configuration dump (HikariCP logs it
 * at DEBUG and masks only properties named "password") nor its messages can carry the URL's
 * user-info or parameters ({@code password1}...): its {@link #toString()} is the redacted URL.
 */
public final class DriverDataSource implements DataSource {
    private final Driver driver;
    private final String label;
    private final String url;
    private final Properties properties;
    private volatile int loginTimeout;

    /** @param label the driver's name in messages ("Connector/J"); @param properties the connection's (user, password...) */
    public DriverDataSource(Driver driver, String label, String url, Properties properties) {
        this.driver = driver;
        this.label = label;
        this.url = url;
        this.properties = properties;
    }

    /** A driver by class name, for drivers that sit on the class path, outside the module graph. */
    public static Driver driver(String label, String className) {
        try {
            return (Driver) Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IllegalStateException(label + " (" + className + ") cannot be loaded", e);
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection c = driver.connect(url, properties);
        if (c == null) {
            throw new SQLException(label + " does not accept " + this);
        }
        return c;
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the user and password are set when the backend is built");
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // the driver logs through its own logger
    }

    @Override
    public void setLoginTimeout(int seconds) {
        loginTimeout = seconds; // the driver's connect timeout bounds a connect; DriverManager's global stays untouched
    }

    @Override
    public int getLoginTimeout() {
        return loginTimeout;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no java.util.logging parent");
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        throw new SQLException("not a wrapper of " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return type.isInstance(this);
    }

    @Override
    public String toString() {
        return label + " " + Redaction.uri(url);
    }
}
