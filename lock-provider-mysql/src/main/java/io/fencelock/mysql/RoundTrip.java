package io.fencelock.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Statements that belong to one operation: a batch of renewals and the read of their rows, or a
 * purge's locking reads. Where the connection allows multi-statements ({@code allowMultiQueries=true},
 * which the backend's own pool sets) they travel as one statement string: one round trip, the
 * server runs them in order and stops at the first error (which Connector/J reports from
 * {@code execute}, whichever statement failed). Otherwise they run one after another on the same
 * connection. In autocommit each is its own transaction, so a later statement reads what an
 * earlier one committed.
 */
final class RoundTrip {

    /** Binds a statement's parameters from {@code index} on; returns the next free index. */
    @FunctionalInterface
    interface Binder {
        int bind(PreparedStatement ps, int index) throws SQLException;
    }

    /** Reads a query's rows. */
    @FunctionalInterface
    interface Reader {
        void read(ResultSet rs) throws SQLException;
    }

    /** One statement: its SQL, its parameters, and for a query what to do with its rows (null for updates). */
    record Part(String sql, Binder binder, Reader reader) {
        static Part update(String sql, Binder binder) {
            return new Part(sql, binder, null);
        }

        static Part query(String sql, Binder binder, Reader reader) {
            return new Part(sql, binder, reader);
        }
    }

    private RoundTrip() {}

    /** Runs {@code parts} in order and returns the update count of each ({@code -1} for queries). */
    static int[] run(Connection c, boolean combined, List<Part> parts) throws SQLException {
        int[] counts = new int[parts.size()];
        if (combined && parts.size() > 1) {
            StringBuilder sql = new StringBuilder();
            for (Part part : parts) {
                sql.append(sql.length() == 0 ? "" : ";\n").append(part.sql());
            }
            try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
                int index = 1;
                for (Part part : parts) {
                    index = part.binder().bind(ps, index);
                }
                boolean isQuery = ps.execute();
                for (int i = 0; i < parts.size(); i++) {
                    if (i > 0) {
                        isQuery = ps.getMoreResults();
                    }
                    counts[i] = collect(ps, isQuery, parts.get(i));
                }
            }
        } else {
            for (int i = 0; i < parts.size(); i++) {
                Part part = parts.get(i);
                try (PreparedStatement ps = c.prepareStatement(part.sql())) {
                    part.binder().bind(ps, 1);
                    counts[i] = collect(ps, ps.execute(), part);
                }
            }
        }
        return counts;
    }

    /** {@code count} copies of {@code one}, comma-separated: the placeholders of an IN list. */
    static String placeholders(int count, String one) {
        StringBuilder sb = new StringBuilder(count * (one.length() + 2));
        for (int i = 0; i < count; i++) {
            sb.append(i == 0 ? "" : ", ").append(one);
        }
        return sb.toString();
    }

    private static int collect(PreparedStatement ps, boolean isQuery, Part part) throws SQLException {
        if (isQuery != (part.reader() != null)) {
            throw new SQLException(
                    "expected " + (part.reader() != null ? "rows" : "an update count") + " from: " + part.sql(),
                    "HY000");
        }
        if (!isQuery) {
            return ps.getUpdateCount();
        }
        try (ResultSet rs = ps.getResultSet()) {
            part.reader().read(rs);
        }
        return -1;
    }
}
