package io.fencelock.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockClient;
import io.fencelock.testservers.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The example application on a real PostgreSQL: its job runs under the lock and writes a fenced report. */
class NightlyReportApplicationTest {

    @Test
    void theJobWritesItsReportWithTheLeasesToken() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.url", pg.createDatabase("example"));
        properties.put("spring.datasource.username", pg.user() == null ? "" : pg.user());
        properties.put("spring.datasource.password", pg.password() == null ? "" : pg.password());
        properties.put("spring.main.web-application-type", "none");
        properties.put("reports.cron", "* * * * * *"); // every second
        properties.put("reports.min-hold", "200ms");
        properties.put("logging.level.root", "warn");
        // as command-line arguments: they override the application's application.properties
        String[] arguments = properties.entrySet().stream()
                .map(e -> "--" + e.getKey() + "=" + e.getValue())
                .toArray(String[]::new);
        try (ConfigurableApplicationContext app =
                new SpringApplicationBuilder(NightlyReportApplication.class).run(arguments)) {
            DataSource dataSource = app.getBean(DataSource.class);
            long deadline = System.nanoTime() + 20_000_000_000L;
            long token = 0;
            while (token == 0 && System.nanoTime() < deadline) {
                token = maxToken(dataSource);
                Thread.sleep(20); // polls the table; bounded by the deadline
            }
            assertThat(token).as("a report written within 20 s").isPositive();
            assertThat(app.getBean(LockClient.class).backendName()).contains("Postgres");
        }
    }

    private static long maxToken(DataSource dataSource) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT coalesce(max(token), 0) FROM report")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
