package io.fencelock.examples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A Spring Boot application with the fencelock starter: every node runs {@link NightlyReport} on its
 * schedule, and the lock lets one of them do each run. The lock lives in the application's own
 * PostgreSQL (its DataSource; no fencelock.uri), and so does the fenced report table.
 */
@SpringBootApplication
@EnableScheduling
public class NightlyReportApplication {
    public static void main(String[] args) {
        SpringApplication.run(NightlyReportApplication.class, args);
    }
}
