package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.tck.ClientConnection;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link JdbcFence} on a real database: the same promises on PostgreSQL and MariaDB. */
abstract class JdbcFenceContract {
    private FencedTarget.Spec spec;
    private JdbcFence fence;
    private String resource;

    /** HELPER_POSTGRES or HELPER_MYSQL. */
    abstract FencedTarget.Kind kind();

    @BeforeEach
    void freshDatabase() throws SQLException {
        spec = Backends.fresh(kind());
        fence = JdbcFence.builder(spec.dialect()).build();
        resource = "invoice:" + UUID.randomUUID();
    }

    private Connection connect() throws SQLException {
        return spec.jdbc();
    }

    private int insertInto(Connection c, String body) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO history (body, token) VALUES (?, 0)")) {
            ps.setString(1, body);
            return ps.executeUpdate();
        }
    }

    private long count(String body) throws SQLException {
        try (Connection c = connect();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM history WHERE body = ?")) {
            ps.setString(1, body);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void onAutocommitTheFirstWriteRunsAndIsCommitted() throws SQLException {
        try (Connection c = connect()) {
            int rows = fence.write(c, resource, 7, x -> insertInto(x, "first"));
            assertThat(rows).isEqualTo(1);
            assertThat(c.getAutoCommit()).as("autocommit restored").isTrue();
        }
        assertThat(count("first")).isEqualTo(1);
        try (Connection c = connect()) {
            assertThat(fence.currentToken(c, resource)).hasValue(7);
        }
    }

    @Test
    void equalAndHigherTokensAreAcceptedALowerOneWritesNothing() throws SQLException {
        try (Connection c = connect()) {
            fence.write(c, resource, 7, x -> insertInto(x, "a"));
            fence.write(c, resource, 7, x -> insertInto(x, "b"));
            fence.write(c, resource, 9, x -> insertInto(x, "c"));
            AtomicInteger ran = new AtomicInteger();
            StaleTokenException e = catchThrowableOfType(
                    StaleTokenException.class,
                    () -> fence.write(c, resource, 8, x -> ran.incrementAndGet() + insertInto(x, "stale")));
            assertThat(e.offeredToken()).isEqualTo(8);
            assertThat(e.currentToken()).isEqualTo(9);
            assertThat(e.resource()).isEqualTo(resource);
            assertThat(e).hasMessageContaining("8").hasMessageContaining("9");
            assertThat(ran).as("the work of a refused write").hasValue(0);
            assertThat(c.getAutoCommit()).isTrue();
            assertThat(fence.currentToken(c, resource)).hasValue(9);
        }
        assertThat(count("a") + count("b") + count("c")).isEqualTo(3);
        assertThat(count("stale")).isZero();
    }

    @Test
    void insideTheCallersTransactionTheCallerCommitsOrRollsBack() throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            fence.write(c, resource, 5, x -> insertInto(x, "rolled-back"));
            c.rollback();
            assertThat(fence.currentToken(c, resource))
                    .as("the claim rolled back with the work")
                    .isEmpty();

            fence.write(c, resource, 5, x -> insertInto(x, "kept"));
            // a refusal leaves the caller's transaction usable (on PostgreSQL: not aborted)
            assertThatThrownBy(() -> fence.write(c, resource, 4, x -> insertInto(x, "stale")))
                    .isInstanceOf(StaleTokenException.class);
            insertInto(c, "after-refusal");
            try (Connection other = connect()) {
                assertThat(fence.currentToken(other, resource))
                        .as("uncommitted, invisible to others")
                        .isEmpty();
            }
            c.commit();
            assertThat(c.getAutoCommit()).as("left as the caller set it").isFalse();
        }
        assertThat(count("kept")).isEqualTo(1);
        assertThat(count("after-refusal")).isEqualTo(1);
        assertThat(count("rolled-back") + count("stale")).isZero();
    }

    @Test
    void aFailingWorkOnAutocommitRecordsNoToken() throws SQLException {
        try (Connection c = connect()) {
            assertThatThrownBy(() -> fence.write(c, resource, 5, x -> {
                        insertInto(x, "half");
                        throw new SQLException("the work failed");
                    }))
                    .hasMessage("the work failed");
            assertThat(c.getAutoCommit()).isTrue();
            assertThat(fence.currentToken(c, resource)).isEmpty();
        }
        assertThat(count("half")).isZero();
    }

    @Test
    void tokensThatRiseWithinALeaseAreAccepted() throws Exception {
        ClientConnection lock = Backends.lockConnection(spec);
        LockClient.Builder builder = LockClient.builder()
                .uri(lock.uri())
                .options(LockOptions.builder()
                        .ttl(Duration.ofSeconds(2))
                        .tokenPeriod(Duration.ofMillis(100))
                        .autoRenew(false)
                        .build());
        lock.properties().forEach(builder::property);
        try (LockClient locks = builder.build();
                Connection c = connect()) {
            Lease lease = locks.tryAcquire("fencing/" + resource).orElseThrow();
            long first = lease.fencingToken();
            fence.write(c, resource, first, x -> insertInto(x, "period-1"));
            // the token period is the condition for the rise: renew until it has passed
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (lease.fencingToken() == first && System.nanoTime() < deadline) {
                Thread.sleep(50);
                assertThat(lease.renew()).isTrue();
            }
            long second = lease.fencingToken();
            assertThat(second).as("the token rose within the lease").isGreaterThan(first);
            fence.write(c, resource, second, x -> insertInto(x, "period-2"));
            fence.write(c, resource, second, x -> insertInto(x, "period-2-again"));
            assertThat(fence.currentToken(c, resource)).hasValue(second);
            lease.release();
        }
        assertThat(count("period-1") + count("period-2") + count("period-2-again"))
                .isEqualTo(3);
    }

    @Test
    void theTableNameIsValidatedAndTheDdlIsIdempotent() throws SQLException {
        assertThatThrownBy(() -> JdbcFence.builder(spec.dialect())
                        .table("fences; DROP TABLE x")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'fences; DROP TABLE x'")
                .hasMessageContaining("plain SQL identifier");
        JdbcFence own = JdbcFence.builder(spec.dialect()).table("Own_Fences").build();
        try (Connection c = connect()) {
            own.createTable(c);
            own.createTable(c);
            own.write(c, resource, 3, x -> null);
            assertThat(own.currentToken(c, resource)).hasValue(3);
            assertThat(own.ddl()).startsWith("CREATE TABLE IF NOT EXISTS");
        }
    }
}
