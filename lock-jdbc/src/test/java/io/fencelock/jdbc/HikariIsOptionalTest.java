package io.fencelock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockBackendException;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A backend given the application's DataSource needs no HikariCP: the connections layer, loaded
 * where HikariCP is absent, never touches the pool code, and a backend built from a URL says
 * what is missing instead of failing with a linkage error.
 */
class HikariIsOptionalTest {

    @Test
    void theApplicationsDataSourceWorksWithoutHikariOnTheClassPath() throws Exception {
        URL[] path = {
            location(JdbcConnections.class), // lock-jdbc
            location(HikariIsOptionalTest.class), // this test, run inside the isolated loader
            location(LockBackendException.class), // lock-api
        };
        try (URLClassLoader withoutHikari = new URLClassLoader(path, ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> Class.forName("com.zaxxer.hikari.HikariConfig", false, withoutHikari))
                    .as("the isolated class path has no HikariCP")
                    .isInstanceOf(ClassNotFoundException.class);
            @SuppressWarnings("unchecked")
            Callable<String> scenario = (Callable<String>) withoutHikari
                    .loadClass(Scenario.class.getName())
                    .getDeclaredConstructor()
                    .newInstance();
            assertThat(scenario.call()).contains("HikariCP").contains("dataSource(...)");
        }
    }

    private static URL location(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    /** Runs inside the loader without HikariCP; returns the message of the own-pool attempt. */
    public static final class Scenario implements Callable<String> {
        @Override
        public String call() {
            // never asked for a connection: building the connections layer does no I/O
            DataSource untouched = (DataSource) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        throw new AssertionError("no call expected: " + method.getName());
                    });
            JdbcFailures failures =
                    new JdbcFailures("Test", "nowhere", new JdbcFailures.Retryable(Set.of(), Set.of(), false), false);
            try (JdbcConnections application = JdbcConnections.application(untouched, failures)) {
                if (application.ownPool() != null || !application.where().equals("nowhere")) {
                    throw new AssertionError("the application's DataSource is no own pool");
                }
            }
            JdbcSettings settings = new JdbcSettings(
                    "jdbc:test://db/x",
                    null,
                    null,
                    null,
                    "public",
                    "locks",
                    false,
                    1,
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(1));
            try {
                JdbcConnections.ownPool(untouched, settings, "test", null, failures)
                        .close();
                throw new AssertionError("an own pool without HikariCP");
            } catch (IllegalStateException expected) {
                return expected.getMessage();
            }
        }
    }
}
