package io.fencelock.examples.spring;

import io.fencelock.Lease;
import io.fencelock.fencing.JdbcFence;
import io.fencelock.fencing.SqlDialect;
import io.fencelock.spring.Exclusive;
import io.fencelock.spring.ExclusiveContext;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The job: on one node at a time, and each slot once (the lock is held at least {@code minHold}
 * after it was taken, so a node whose clock fires a little later finds it held and skips). The report
 * row is written through a {@link JdbcFence}: a node that lost its lock while working (a long GC
 * pause) has its late write refused by the token.
 */
@Component
public class NightlyReport {
    private static final JdbcFence FENCE =
            JdbcFence.builder(SqlDialect.POSTGRESQL).build();
    private final DataSource dataSource;

    public NightlyReport(DataSource dataSource) throws SQLException {
        this.dataSource = dataSource;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            FENCE.createTable(c);
            s.execute("CREATE TABLE IF NOT EXISTS report (id bigserial PRIMARY KEY, token bigint NOT NULL,"
                    + " made_at timestamptz NOT NULL DEFAULT now())");
        }
    }

    @Scheduled(cron = "${reports.cron:0 0 2 * * *}")
    @Exclusive(name = "'reports:nightly'", minHold = "${reports.min-hold:10m}", type = "report")
    public void run() throws SQLException {
        Lease lease = ExclusiveContext.currentLease(); // a @Scheduled method takes no parameters
        try (Connection c = dataSource.getConnection()) {
            FENCE.write(c, "report", lease.fencingToken(), connection -> {
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO report (token) VALUES (?)")) {
                    insert.setLong(1, lease.fencingToken());
                    return insert.executeUpdate();
                }
            });
        }
    }
}
