package io.fencelock.mysql;

import static io.fencelock.mysql.RoundTrip.placeholders;

import io.fencelock.jdbc.SqlTime;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * A batch of renewals: the mutex leases' UPDATEs and the read of their rows, then one call of the
 * shared grants' renew procedure (see {@link SharedTable}), all in one multi-statement round trip
 * where the connection allows it (else one statement after another on the same connection). A lease
 * whose grant the request names ({@code RenewRequest.grant()}) takes only its own part: the procedure
 * call, several times an UPDATE's cost on the server, only when the batch holds a shared grant.
 */
final class Renewals {
    private static final SqlTime.Reader TIME = SqlTime.UTC_DATETIME;
    private static final String NOW = Statements.NOW;

    private final LockTable table;
    private final boolean combined;
    private final ServerClock serverClock;

    Renewals(LockTable table, boolean combined, ServerClock serverClock) {
        this.table = table;
        this.combined = combined;
        this.serverClock = serverClock;
    }

    /** Renews {@code requests} (not empty) on {@code c}: one round trip with multi-statements. */
    List<RenewResult> run(Connection c, List<RenewRequest> requests) throws SQLException {
        // One UPDATE per TTL and token period (a client's leases usually share both), then one read
        // of all the rows: a lease was renewed iff its row still names it and has not expired. A
        // refused lease cannot look renewed, since nothing but its own renewal moves its expiry on.
        // Each lease in its one place where its grant is known: a batch of mutex leases calls no procedure,
        // one of shared grants runs no UPDATE.
        List<RenewRequest> mutexes = new ArrayList<>(requests.size());
        List<RenewRequest> sharedGrants = new ArrayList<>();
        for (RenewRequest r : requests) {
            if (r.grant().mayBeMutex()) {
                mutexes.add(r);
            }
            if (r.grant().mayBeShared()) {
                sharedGrants.add(r);
            }
        }
        Map<List<Long>, List<RenewRequest>> groups = new LinkedHashMap<>();
        for (RenewRequest r : mutexes) {
            long period = r.tokenPeriod() == null ? 0 : SqlTime.micros(r.tokenPeriod());
            groups.computeIfAbsent(List.of(SqlTime.micros(r.ttl()), period), k -> new ArrayList<>())
                    .add(r);
        }
        List<RoundTrip.Part> parts = new ArrayList<>();
        groups.forEach((key, group) -> {
            for (int from = 0; from < group.size(); from += MySqlLockBackend.RENEW_CHUNK) {
                parts.add(renewPart(
                        group.subList(from, Math.min(group.size(), from + MySqlLockBackend.RENEW_CHUNK)),
                        key.get(0),
                        key.get(1)));
            }
        });
        List<String> names = new ArrayList<>(
                new LinkedHashSet<>(mutexes.stream().map(RenewRequest::name).toList()));
        Map<String, Row> rows = new HashMap<>();
        Instant[] serverTime = new Instant[1];
        for (int from = 0; from < names.size(); from += MySqlLockBackend.RENEW_CHUNK) {
            List<String> chunk = names.subList(from, Math.min(names.size(), from + MySqlLockBackend.RENEW_CHUNK));
            parts.add(RoundTrip.Part.query(
                    "SELECT name, lease_id, token, expires_at, expires_at > " + NOW + ", " + NOW + " FROM "
                            + table.qualifiedTable + " WHERE name IN (" + placeholders(chunk.size(), "?") + ")",
                    (ps, i) -> {
                        for (String n : chunk) {
                            ps.setString(i++, n);
                        }
                        return i;
                    },
                    rs -> {
                        while (rs.next()) {
                            rows.put(
                                    rs.getString(1),
                                    new Row(rs.getString(2), rs.getLong(3), TIME.read(rs, 4), rs.getBoolean(5)));
                            serverTime[0] = TIME.read(rs, 6);
                        }
                    }));
        }
        boolean oneUpdateAndItsRead = parts.size() == 2;
        // the shared grants among them: one procedure call at the end of the same round trip
        Map<List<String>, RenewResult> shared = new HashMap<>();
        if (!sharedGrants.isEmpty()) {
            parts.add(table.shared.renewPart(sharedGrants, shared));
        }
        Instant sent = Instant.now();
        RoundTrip.run(c, combined, parts);
        if (oneUpdateAndItsRead) { // with or without the procedure after them: a clean sample of the server's clock
            serverClock.observe(sent, serverTime[0], Instant.now());
        }
        List<RenewResult> results = new ArrayList<>(requests.size());
        for (RenewRequest r : requests) {
            Row row = rows.get(r.name());
            RenewResult grant = shared.get(List.of(r.name(), r.leaseId()));
            results.add(
                    grant != null
                            ? grant
                            : r.grant().mayBeMutex()
                                            && row != null
                                            && row.live
                                            && r.leaseId().equals(row.leaseId)
                                    ? RenewResult.renewed(row.token, row.expiresAt)
                                    : RenewResult.rejected());
        }
        return results;
    }

    private record Row(String leaseId, long token, Instant expiresAt, boolean live) {}

    /**
     * Extends the leases of one TTL that still hold their lock. With a token period, the token rises
     * once the current one is that old: single-table UPDATE assigns left to right, so both the token
     * and its time are decided from the old token_issued_at before it is overwritten.
     */
    private RoundTrip.Part renewPart(List<RenewRequest> chunk, long ttlMicros, long periodMicros) {
        String set = "expires_at = " + NOW + " + INTERVAL ? MICROSECOND";
        if (periodMicros > 0) {
            String due = "token_issued_at <= " + NOW + " - INTERVAL ? MICROSECOND";
            set = "token = IF(" + due + ", token + 1, token), token_issued_at = IF(" + due + ", " + NOW
                    + ", token_issued_at), " + set;
        }
        String sql = "UPDATE " + table.qualifiedTable + " SET " + set
                + " WHERE name IN (" + placeholders(chunk.size(), "?") + ")"
                + " AND (name, lease_id) IN (" + placeholders(chunk.size(), "(?, ?)") + ")"
                + " AND expires_at > " + NOW;
        return RoundTrip.Part.update(sql, (ps, i) -> {
            if (periodMicros > 0) {
                ps.setLong(i++, periodMicros);
                ps.setLong(i++, periodMicros);
            }
            ps.setLong(i++, ttlMicros);
            for (RenewRequest r : chunk) {
                ps.setString(i++, r.name());
            }
            for (RenewRequest r : chunk) {
                ps.setString(i++, r.name());
                ps.setString(i++, r.leaseId());
            }
            return i;
        });
    }
}
