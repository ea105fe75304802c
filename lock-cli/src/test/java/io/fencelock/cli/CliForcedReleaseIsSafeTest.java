package io.fencelock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Lease;
import io.fencelock.LeaseLoss;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.fencing.SqlDialect;
import io.fencelock.fencing.TableFence;
import io.fencelock.testservers.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A forced release is safe: the holder that was forced out still believes it holds the lock (its
 * watchdog has not renewed yet) and writes late with its old token; the fenced table rejects that
 * write because the next holder wrote with a higher one, and the old holder's next renewal is
 * refused, so it learns of the loss.
 */
class CliForcedReleaseIsSafeTest {
    private static final Duration BOUND = Duration.ofSeconds(20);

    @Test
    void theForcedOutHolderIsFencedAndLearnsOfTheLoss() throws Exception {
        Targets.Target target = Targets.of("postgres");
        PostgresServer pg = PostgresServer.shared();
        try (Connection db = pg.connect(target.uri());
                Statement s = db.createStatement()) {
            s.execute("CREATE TABLE report (id INT PRIMARY KEY, body TEXT)");
            TableFence.builder(SqlDialect.POSTGRESQL).table("report").build().apply(db);
        }
        String name = "report:daily";
        // the watchdog renews the old holder a third of a TTL after each grant: 10 s, longer than this test's steps
        LockOptions renewed = LockOptions.builder().ttl(Duration.ofSeconds(30)).build();
        try (LockClient old = target.holder(renewed);
                LockClient next = target.holder(LockOptions.defaults());
                Connection oldWriter = pg.connect(target.uri());
                Connection newWriter = pg.connect(target.uri())) {
            Lease oldLease =
                    old.lock(name).owner("report-writer-a").acquire(BOUND).orElseThrow();
            assertThat(write(oldWriter, oldLease.fencingToken(), "a-1")).isTrue();

            Cli.Result forced = Cli.run(Cli.args("release --force", target, name));
            assertThat(forced.exitCode()).as(forced.toString()).isZero();
            assertThat(forced.out()).contains("token " + oldLease.fencingToken());

            Lease newLease = next.acquire(name, BOUND).orElseThrow();
            assertThat(newLease.fencingToken()).isGreaterThan(oldLease.fencingToken());
            assertThat(write(newWriter, newLease.fencingToken(), "b-1")).isTrue();

            assertThat(write(oldWriter, oldLease.fencingToken(), "a-2"))
                    .as("the forced-out holder's late write")
                    .isFalse();
            assertThat(body(newWriter)).isEqualTo("b-1");

            assertThat(oldLease.renew())
                    .as("the forced-out holder's next renewal")
                    .isFalse();
            LeaseLoss loss = oldLease.lost().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertThat(loss.reason()).isEqualTo(LeaseLoss.Reason.REJECTED);
            assertThat(newLease.isValid()).as("the new holder keeps the lock").isTrue();
        }
    }

    /** A fenced upsert; false when the table's fence rejects the token as stale. */
    private static boolean write(Connection c, long token, String body) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO report (id, body, fence_token) VALUES (1, ?, ?)"
                + " ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, fence_token = EXCLUDED.fence_token")) {
            ps.setString(1, body);
            ps.setLong(2, token);
            ps.executeUpdate();
            return true;
        } catch (SQLException e) {
            if (TableFence.isStaleToken(e)) {
                return false;
            }
            throw e;
        }
    }

    private static String body(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT body FROM report WHERE id = 1")) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }
}
