package io.fencelock.tck.broken;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A deliberately unsafe PostgreSQL backend, each flaw one of the mistakes docs/design.md warns about
 * (most straight from the classic designs it names). The TCK's own tests run the contract against it and
 * require the matching property to fail: proof that the kit is not vacuous.
 */
final class FlawedTableBackend implements LockBackend {

    enum Flaw {
        /** Release frees the lock whoever holds it (no owner check). */
        RELEASE_WITHOUT_OWNER_CHECK,
        /** The bigserial design's "token + 1" on a row, combined with a cleanup that deletes free rows: the token restarts. */
        TOKEN_PLUS_ONE_WITH_CLEANUP,
        /** Renew extends the lease even after it expired on the server. */
        RENEW_IGNORES_EXPIRY,
        /** A takeover keeps the previous holder's token. */
        TAKEOVER_KEEPS_TOKEN,
        /** Acquire takes the lock even when another lease holds it. */
        NO_MUTUAL_EXCLUSION,
        /**
         * Tokens from a sequence as the PostgreSQL provider draws them (the insert branch's nextval
         * when the statement starts, the takeover's inside DO UPDATE), with a purge that deletes free
         * rows while acquires of their names are in flight: a waiting insert lands an older token.
         */
        PURGE_WITHOUT_GUARD,
        /**
         * Acquire blocks until the holder lets go, up to a timeout of its own, as a blocking primitive
         * does ({@code GET_LOCK(name, timeout)}, {@code pg_advisory_lock}): the caller's wait is ignored.
         */
        BLOCKS_UNTIL_FREE,
        /**
         * An acquire whose thread is interrupted during the call reports a refusal although its
         * statement took the lock (an interrupt mapped to "not acquired"): a grant nobody knows of.
         */
        INTERRUPTED_GRANT_REPORTED_REFUSED,
        /**
         * Release hands its statement to a background thread and returns at once, the tempting way
         * around a driver that fails on an interrupted thread: the lock is still held when it returns.
         */
        RELEASE_NOT_AWAITED,
        /**
         * The grant's metadata outlives it: a release leaves owner, type and data in the row, and a
         * grant without a type or data keeps the previous holder's ({@code COALESCE} with the old
         * values, the tempting "do not overwrite with null").
         */
        METADATA_LEFT_BY_LAST_HOLDER,
        /**
         * A renewal keeps the later of the current and the new expiry ({@code GREATEST}, the tempting
         * "a renewal never takes time away"): a lease renewed to a shorter TTL stays held to the old one.
         */
        RENEW_NEVER_SHORTENS,
        /** A hand-over moves the grant to the new lease and keeps its token (the tempting "it never was free"). */
        HAND_OVER_KEEPS_TOKEN,
        /** A hand-over moves the name's grant to the new lease whoever holds it, or after it expired. */
        HAND_OVER_WITHOUT_OWNER_CHECK
    }

    /** How late a release that is not awaited reaches the table. */
    private static final long RELEASE_LATE_MILLIS = 200;

    /** How long a {@link Flaw#BLOCKS_UNTIL_FREE} acquire blocks at most. */
    private static final Duration BLOCKING_TIMEOUT = Duration.ofSeconds(2);

    private final Flaw flaw;
    private final String table;
    private final String sequence;
    /** Connections, each used by one statement at a time. */
    private final BlockingQueue<Connection> connections;

    private volatile boolean closed;
    private final ScheduledExecutorService late;

    /** @param flaw the flaw to build in, or {@code null} for the same design without one */
    FlawedTableBackend(Flaw flaw, String jdbcUrl, String user, String password) {
        this.flaw = flaw;
        this.table = "flawed_" + (flaw == null ? "none" : flaw.name().toLowerCase());
        this.sequence = table + "_seq";
        // a pool as the real providers have, where the flaw is a race between statements or the property puts
        // a crowd of callers on the backend (a single connection would make every waiter queue for it)
        int count = flaw == null || flaw == Flaw.PURGE_WITHOUT_GUARD || flaw == Flaw.BLOCKS_UNTIL_FREE ? 8 : 1;
        this.late = flaw != Flaw.RELEASE_NOT_AWAITED
                ? null
                : Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "flawed-backend-late-release");
                    t.setDaemon(true);
                    return t;
                });
        this.connections = new ArrayBlockingQueue<>(count);
        try {
            for (int i = 0; i < count; i++) {
                connections.add(DriverManager.getConnection(jdbcUrl, user, password));
            }
            try (var st = connections.peek().createStatement()) {
                st.execute("CREATE TABLE IF NOT EXISTS " + table + " (name text PRIMARY KEY, lease_id text, "
                        + "token bigint NOT NULL, expires_at timestamptz NOT NULL, lock_owner text, lock_type text, "
                        + "lock_data text, granted_at timestamptz)");
                st.execute("CREATE SEQUENCE IF NOT EXISTS " + sequence + " CACHE 1");
            }
        } catch (SQLException e) {
            close();
            throw new IllegalStateException("cannot open the flawed backend: " + e.getMessage(), e);
        }
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        AcquireResult result = attempt(name, leaseId, ttl, metadata);
        if (flaw == Flaw.BLOCKS_UNTIL_FREE && !result.acquired()) {
            long end = System.nanoTime() + BLOCKING_TIMEOUT.toNanos();
            while (!result.acquired() && System.nanoTime() - end < 0) {
                try {
                    Thread.sleep(50); // the flaw under test: waiting inside the primitive
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockBackendException("flawed backend: interrupted", e, true);
                }
                result = attempt(name, leaseId, ttl, metadata);
            }
        }
        return result;
    }

    private AcquireResult attempt(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        boolean sequenced = flaw == Flaw.PURGE_WITHOUT_GUARD;
        String firstToken = sequenced ? "nextval('" + sequence + "')" : "1";
        String takeoverToken = flaw == Flaw.TAKEOVER_KEEPS_TOKEN ? "l.token" : sequenced ? firstToken : "l.token + 1";
        String when =
                flaw == Flaw.NO_MUTUAL_EXCLUSION ? "true" : "l.lease_id IS NULL OR l.expires_at <= clock_timestamp()";
        String keep = flaw == Flaw.METADATA_LEFT_BY_LAST_HOLDER ? "COALESCE(EXCLUDED.%1$s, l.%1$s)" : "EXCLUDED.%1$s";
        String sql =
                "INSERT INTO " + table + " AS l (name, lease_id, token, expires_at, lock_owner, lock_type, lock_data,"
                        + " granted_at) VALUES (?, ?, " + firstToken
                        + ", clock_timestamp() + ? * interval '1 millisecond', ?, ?, ?, clock_timestamp()) "
                        + "ON CONFLICT (name) DO UPDATE SET lease_id = EXCLUDED.lease_id, token = " + takeoverToken
                        + ", expires_at = EXCLUDED.expires_at, lock_owner = EXCLUDED.lock_owner, lock_type = "
                        + keep.formatted("lock_type") + ", lock_data = " + keep.formatted("lock_data")
                        + ", granted_at = EXCLUDED.granted_at WHERE " + when + " RETURNING token, expires_at";
        String data = metadata.data().isEmpty() ? null : MetadataCodec.encodeData(metadata.data());
        AcquireResult result = query(
                sql,
                ps -> {
                    ps.setString(1, name);
                    ps.setString(2, leaseId);
                    ps.setLong(3, ttl.toMillis());
                    ps.setString(4, metadata.owner());
                    ps.setString(5, metadata.type());
                    ps.setString(6, data);
                },
                rs -> rs.next()
                        ? AcquireResult.granted(
                                rs.getLong(1), rs.getTimestamp(2).toInstant())
                        : AcquireResult.held(null));
        if (flaw == Flaw.INTERRUPTED_GRANT_REPORTED_REFUSED
                && result.acquired()
                && Thread.currentThread().isInterrupted()) {
            return AcquireResult.held(null);
        }
        return result;
    }

    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        String token = flaw == Flaw.HAND_OVER_KEEPS_TOKEN
                ? "token"
                : flaw == Flaw.PURGE_WITHOUT_GUARD ? "nextval('" + sequence + "')" : "token + 1";
        boolean ownerChecked = flaw != Flaw.HAND_OVER_WITHOUT_OWNER_CHECK;
        String data = metadata.data().isEmpty() ? null : MetadataCodec.encodeData(metadata.data());
        return query(
                "UPDATE " + table + " SET lease_id = ?, token = " + token
                        + ", expires_at = clock_timestamp() + ? * interval '1 millisecond', lock_owner = ?,"
                        + " lock_type = ?, lock_data = ?, granted_at = clock_timestamp() WHERE name = ?"
                        + (ownerChecked ? " AND lease_id = ? AND expires_at > clock_timestamp()" : "")
                        + " RETURNING token, expires_at",
                ps -> {
                    ps.setString(1, leaseId);
                    ps.setLong(2, ttl.toMillis());
                    ps.setString(3, metadata.owner());
                    ps.setString(4, metadata.type());
                    ps.setString(5, data);
                    ps.setString(6, name);
                    if (ownerChecked) {
                        ps.setString(7, fromLeaseId);
                    }
                },
                rs -> rs.next()
                        ? AcquireResult.granted(
                                rs.getLong(1), rs.getTimestamp(2).toInstant())
                        : AcquireResult.held(null));
    }

    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        List<RenewResult> results = new ArrayList<>();
        String expiry = flaw == Flaw.RENEW_IGNORES_EXPIRY ? "" : " AND expires_at > clock_timestamp()";
        String newExpiry = flaw == Flaw.RENEW_NEVER_SHORTENS
                ? "GREATEST(expires_at, clock_timestamp() + ? * interval '1 millisecond')"
                : "clock_timestamp() + ? * interval '1 millisecond'";
        for (RenewRequest r : requests) {
            results.add(query(
                    "UPDATE " + table + " SET expires_at = " + newExpiry + " " + "WHERE name = ? AND lease_id = ?"
                            + expiry + " RETURNING token, expires_at",
                    ps -> {
                        ps.setLong(1, r.ttl().toMillis());
                        ps.setString(2, r.name());
                        ps.setString(3, r.leaseId());
                    },
                    rs -> rs.next()
                            ? RenewResult.renewed(
                                    rs.getLong(1), rs.getTimestamp(2).toInstant())
                            : RenewResult.rejected()));
        }
        return results;
    }

    @Override
    public boolean release(String name, String leaseId) {
        if (flaw == Flaw.RELEASE_NOT_AWAITED) {
            late.schedule(() -> releaseNow(name, leaseId), RELEASE_LATE_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        }
        return releaseNow(name, leaseId);
    }

    private boolean releaseNow(String name, String leaseId) {
        String owner =
                flaw == Flaw.RELEASE_WITHOUT_OWNER_CHECK ? "" : " AND lease_id = ? AND expires_at > clock_timestamp()";
        String clear = flaw == Flaw.METADATA_LEFT_BY_LAST_HOLDER
                ? ""
                : ", lock_owner = NULL, lock_type = NULL, lock_data = NULL, granted_at = NULL";
        return query(
                "UPDATE " + table + " SET lease_id = NULL, expires_at = clock_timestamp()" + clear + " WHERE name = ?"
                        + owner + " RETURNING name",
                ps -> {
                    ps.setString(1, name);
                    if (flaw != Flaw.RELEASE_WITHOUT_OWNER_CHECK) {
                        ps.setString(2, leaseId);
                    }
                },
                ResultSet::next);
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return query(
                "SELECT name, lease_id IS NOT NULL AND expires_at > clock_timestamp(), lease_id, token, expires_at, "
                        + "clock_timestamp(), lock_owner, lock_type, lock_data, granted_at FROM " + table
                        + " WHERE name = ?",
                ps -> ps.setString(1, name),
                rs -> rs.next() ? Optional.of(info(rs)) : Optional.empty());
    }

    @Override
    public List<LockInfo> list(String prefix) {
        return query(
                "SELECT name, true, lease_id, token, expires_at, clock_timestamp(), lock_owner, lock_type, lock_data,"
                        + " granted_at FROM " + table
                        + " WHERE starts_with(name, ?) AND lease_id IS NOT NULL AND expires_at > clock_timestamp() ORDER BY name",
                ps -> ps.setString(1, prefix),
                rs -> {
                    List<LockInfo> all = new ArrayList<>();
                    while (rs.next()) {
                        all.add(info(rs));
                    }
                    return all;
                });
    }

    @Override
    public int purgeFree(Duration freeFor) {
        return query(
                "DELETE FROM " + table + " WHERE (lease_id IS NULL OR expires_at <= clock_timestamp()) "
                        + "AND expires_at <= clock_timestamp() - ? * interval '1 millisecond' RETURNING name",
                ps -> ps.setLong(1, freeFor.toMillis()),
                rs -> {
                    int n = 0;
                    while (rs.next()) {
                        n++;
                    }
                    return n;
                });
    }

    @Override
    public Set<Capability> capabilities() {
        // Only the purge flaws offer purging: token + 1 is safe as long as rows are never deleted.
        return flaw == Flaw.TOKEN_PLUS_ONE_WITH_CLEANUP || flaw == Flaw.PURGE_WITHOUT_GUARD
                ? EnumSet.of(
                        Capability.FENCING,
                        Capability.SERVER_TIME,
                        Capability.PURGE_FREE,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL,
                        Capability.HAND_OVER)
                : EnumSet.of(
                        Capability.FENCING,
                        Capability.SERVER_TIME,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL,
                        Capability.HAND_OVER);
    }

    @Override
    public void close() {
        closed = true;
        if (late != null) {
            late.shutdown();
        }
        for (Connection c; (c = connections.poll()) != null; ) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // closing a test connection
            }
        }
    }

    /** A free lock shows no metadata, whatever its row still holds. */
    private static LockInfo info(ResultSet rs) throws SQLException {
        Timestamp expires = rs.getTimestamp(5);
        boolean held = rs.getBoolean(2);
        Timestamp granted = rs.getTimestamp(10);
        return new LockInfo(
                rs.getString(1),
                held,
                rs.getString(3),
                rs.getLong(4),
                expires == null ? null : expires.toInstant(),
                rs.getTimestamp(6).toInstant(),
                held
                        ? new LockMetadata(rs.getString(7), rs.getString(8), MetadataCodec.decodeData(rs.getString(9)))
                        : LockMetadata.NONE,
                held && granted != null ? granted.toInstant() : null);
    }

    private Connection takeUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return connections.take();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private interface Reader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> T query(String sql, Binder binder, Reader<T> reader) {
        if (closed) {
            throw new IllegalStateException("flawed backend is closed");
        }
        // an interrupt does not stop a statement here, as it does not stop a JDBC driver's (the interrupt flaw relies
        // on it)
        Connection connection = takeUninterruptibly();
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                return reader.read(rs);
            }
        } catch (SQLException e) {
            throw new LockBackendException("flawed backend: " + e.getMessage(), e, true);
        } finally {
            connections.add(connection);
            if (closed) {
                close(); // returned after close(): close it too
            }
        }
    }
}
