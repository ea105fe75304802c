package io.fencelock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockBackendException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;
import org.junit.jupiter.api.Test;

class JdbcFailuresTest {
    /** PostgreSQL's rule: a state decides when there is one. */
    private static final JdbcFailures.Retryable BY_STATE =
            new JdbcFailures.Retryable(Set.of("08", "40001", "57P01"), Set.of(), false);
    /** MySQL's rule: the exception type first, then states and vendor codes. */
    private static final JdbcFailures.Retryable TYPE_FIRST =
            new JdbcFailures.Retryable(Set.of("08", "40"), Set.of(1205, 1290), true);

    @Test
    void aStateClassOrAnExactStateIsRetryableOthersAreNot() {
        assertThat(BY_STATE.test(new SQLException("connection refused", "08001")))
                .isTrue();
        assertThat(BY_STATE.test(new SQLException("I/O error", "08006"))).isTrue();
        assertThat(BY_STATE.test(new SQLException("serialization", "40001"))).isTrue();
        assertThat(BY_STATE.test(new SQLException("deadlock", "40P01")))
                .as("only 40001 was named")
                .isFalse();
        assertThat(BY_STATE.test(new SQLException("shutting down", "57P01"))).isTrue();
        assertThat(BY_STATE.test(new SQLException("no such table", "42P01"))).isFalse();
        assertThat(BY_STATE.test(new SQLException("no state"))).isFalse();
    }

    @Test
    void theExceptionTypeDecidesAloneOrOnlyWithoutAState() {
        // a pool's timeout that carries the last connect failure's state: bad credentials do not heal
        SQLException badPasswordTimeout = new SQLTransientConnectionException("timed out", "28P01");
        assertThat(BY_STATE.test(badPasswordTimeout)).isFalse();
        assertThat(BY_STATE.test(new SQLTransientConnectionException("timed out")))
                .isTrue();
        assertThat(BY_STATE.test(new SQLRecoverableException("gone"))).isTrue();
        assertThat(TYPE_FIRST.test(badPasswordTimeout)).isTrue();
        assertThat(TYPE_FIRST.test(new SQLException("Lock wait timeout exceeded", "HY000", 1205)))
                .isTrue();
        assertThat(TYPE_FIRST.test(new SQLException("read-only", "HY000", 1290)))
                .isTrue();
        assertThat(TYPE_FIRST.test(new SQLException("Deadlock found", "40001", 1213)))
                .isTrue();
        assertThat(TYPE_FIRST.test(new SQLException("Access denied", "28000", 1045)))
                .isFalse();
        assertThat(TYPE_FIRST.test(new SQLException("Table doesn't exist", "42S02", 1146)))
                .isFalse();
    }

    @Test
    void aFailureNamesProductOperationServerAndStateAndRedactsTheUrlsEchoes() {
        String url = "jdbc:mysql://app:s3cret@db:3306/locks?password1=other-s3cret";
        JdbcFailures failures = new JdbcFailures("MySQL", "jdbc:mysql://db:3306/locks?password1=***", TYPE_FIRST, true);
        LockBackendException e = failures.failure(
                "connect",
                new SQLException("Cannot connect with " + url + " (password1=other-s3cret)", "08001", 0),
                url);
        assertThat(e)
                .hasMessageStartingWith("MySQL connect failed on jdbc:mysql://db:3306/locks?password1=***: [08001/0] ")
                .hasMessageNotContaining("s3cret");
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getCause()).isInstanceOf(SQLException.class);

        LockBackendException noCode = new JdbcFailures("PostgreSQL", "a DataSource of the application", BY_STATE, false)
                .failure("release of 'x'", new SQLException("relation does not exist", "42P01"));
        assertThat(noCode)
                .hasMessage("PostgreSQL release of 'x' failed on a DataSource of the application:"
                        + " [42P01] relation does not exist");
        assertThat(noCode.isRetryable()).isFalse();
    }

    @Test
    void theDriverDataSourceShowsTheUrlWithoutCredentials() {
        DriverDataSource ds = new DriverDataSource(
                null,
                "Connector/J",
                "jdbc:mysql://app:s3cret@db:3306/locks?password1=s3cret2",
                new java.util.Properties());
        assertThat(ds.toString())
                .startsWith("Connector/J jdbc:mysql://db:3306/locks")
                .doesNotContain("s3cret");
    }
}
