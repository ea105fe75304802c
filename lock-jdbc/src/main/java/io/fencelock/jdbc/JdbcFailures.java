package io.fencelock.jdbc;

import io.fencelock.LockBackendException;
import io.fencelock.spi.Redaction;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * Turns a backend's {@link SQLException}s into {@link LockBackendException}s: the product, the
 * operation and the server (without credentials) in the message, the driver's own words with every
 * echo of the connection string redacted ({@link Redaction#message(String, String)}), and whether
 * the same call may succeed later, by the dialect's {@link Retryable} rule.
 */
public final class JdbcFailures {
    private final String product;
    private final String where;
    private final Retryable retryable;
    private final boolean showErrorCode;

    /**
     * @param product       the name messages start with ("PostgreSQL")
     * @param where         the server, already without credentials
     * @param retryable     which failures may heal
     * @param showErrorCode whether messages show the vendor's error code beside the SQLState
     *                      (where the codes say more than the states, as MySQL's do)
     */
    public JdbcFailures(String product, String where, Retryable retryable, boolean showErrorCode) {
        this.product = product;
        this.where = where;
        this.retryable = retryable;
        this.showErrorCode = showErrorCode;
    }

    /** The server the failures name, without credentials. */
    public String where() {
        return where;
    }

    public LockBackendException failure(String operation, SQLException e) {
        return failure(operation, e, null);
    }

    /** With the raw {@code url} the failure's connection was made with, whose echoes in the driver's message are redacted. */
    public LockBackendException failure(String operation, SQLException e, String url) {
        String code = e.getSQLState() == null
                ? ""
                : "[" + e.getSQLState() + (showErrorCode ? "/" + e.getErrorCode() : "") + "] ";
        return new LockBackendException(
                product + " " + operation + " failed on " + where + ": " + code
                        + Redaction.message(e.getMessage(), url),
                e,
                retryable.test(e));
    }

    /** A failure of the connection that is not an {@link SQLException} (a pool that could not start). */
    LockBackendException connectFailure(RuntimeException e, String url) {
        return new LockBackendException(
                product + " connect failed on " + where + ": " + Redaction.message(e.getMessage(), url), e, true);
    }

    public boolean isRetryable(SQLException e) {
        return retryable.test(e);
    }

    /**
     * Which failures may heal: the connection, the server or a lock conflict had a moment, not a
     * bug. A failure is retryable when its SQLState is in {@code states} (a two-character entry
     * names a whole class, as {@code "08"}, connection exceptions), when its vendor error code is
     * in {@code errorCodes}, or when the driver threw an {@link SQLTransientException} or
     * {@link SQLRecoverableException}: always if {@code typeFirst}, else only for a failure with
     * no SQLState (whose state, when there is one, is the better witness).
     */
    public record Retryable(Set<String> states, Set<Integer> errorCodes, boolean typeFirst) {
        public Retryable {
            states = Set.copyOf(states);
            errorCodes = Set.copyOf(errorCodes);
        }

        public boolean test(SQLException e) {
            String state = e.getSQLState();
            if ((typeFirst || state == null)
                    && (e instanceof SQLTransientException || e instanceof SQLRecoverableException)) {
                return true;
            }
            if (state != null
                    && (states.contains(state) || state.length() > 2 && states.contains(state.substring(0, 2)))) {
                return true;
            }
            return errorCodes.contains(e.getErrorCode());
        }
    }
}
