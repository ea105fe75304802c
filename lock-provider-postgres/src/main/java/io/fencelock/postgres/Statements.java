package io.fencelock.postgres;

/**
 * The SQL of one lock table: each operation is one autocommit statement, decided by the server's
 * {@code clock_timestamp()}. Parameters are bound by {@link PostgresLockBackend} in the order the
 * comments give; identifiers are the table's validated, quoted names.
 */
final class Statements {
    private static final String MICROS = " * interval '1 microsecond'";
    /** Rows a purge statement considers at once: each deleted row holds one advisory lock until its commit. */
    static final int PURGE_BATCH = 500;

    /** name (guard), name, lease id, ttl µs, owner, lock type, data (JSON text), name (the refusal's hint). */
    final String acquire;
    /** names[], lease ids[], ttls µs[], token periods µs[] (0: none). */
    final String renew;
    /** name, lease id, the NOTIFY channel. */
    final String release;
    /** name: the columns of lock-jdbc's LockInfoRows. */
    final String inspect;
    /** prefix: the same columns, held locks only, in Java's order of the names. */
    final String list;
    /** after this name, age µs, age µs: deleted, considered, last name considered. */
    final String purge;

    Statements(LockTable table) {
        String t = table.qualifiedTable;
        String nextToken = "nextval('" + table.qualifiedSequence + "'::regclass)";
        // The name's guard: a transaction-scoped advisory lock keyed by this table and the name.
        String guard = "('" + t + "'::regclass::oid::int, hashtext(%s))";
        // One "now" per statement (c), so that every CASE below takes the same decision. The token of
        // a takeover is drawn in DO UPDATE, after the row lock: never EXCLUDED.token, whose nextval
        // ran before the conflict was seen and may be older than a concurrent grant's. The insert
        // branch has no choice but that early nextval; c first takes the name's guard (shared), and
        // the projection that draws it reads c, so the guard is held from before the draw to the
        // commit: no purge can delete the name's row in between, and if the row is gone when the
        // insert looks, it was deleted before the draw, with every token it carried lower.
        String free = "(l.lease_id IS NULL OR l.expires_at <= EXCLUDED.token_issued_at)";
        // what a grant writes and a refusal keeps: the grant's metadata and time ride along in the
        // same statement, so no reader ever sees a grant without them (or with the last holder's)
        StringBuilder granted = new StringBuilder();
        for (String column : new String[] {
            "lease_id", "token_issued_at", "expires_at", "lock_owner", "lock_type", "lock_data", "granted_at"
        }) {
            granted.append(' ')
                    .append(column)
                    .append(" = CASE WHEN ")
                    .append(free)
                    .append(" THEN EXCLUDED.")
                    .append(column)
                    .append(" ELSE l.")
                    .append(column)
                    .append(" END,");
        }
        this.acquire = "WITH c AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared" + guard.formatted("?")
                + " AS guarded, clock_timestamp() AS now), acquired AS ("
                + " INSERT INTO " + t + " AS l (name, lease_id, token, token_issued_at, expires_at, contended,"
                + " lock_owner, lock_type, lock_data, granted_at)"
                + " SELECT ?, ?, " + nextToken + ", c.now, c.now + ?" + MICROS + ", false, ?, ?, ?::jsonb, c.now FROM c"
                + " ON CONFLICT (name) DO UPDATE SET"
                + granted
                + " token = CASE WHEN " + free + " THEN " + nextToken + " ELSE l.token END,"
                // a refused caller may be about to wait: the holder's release must wake it
                + " contended = NOT " + free
                // a refusal writes only the first time after a grant
                + " WHERE " + free + " OR NOT l.contended"
                + " RETURNING NOT l.contended AS granted, l.token, l.expires_at)"
                + " SELECT a.granted, a.token, a.expires_at, (extract(epoch FROM a.expires_at - c.now) * 1000000)::bigint"
                + " FROM acquired a, c"
                // refused without a write: the holder's remaining time, as the statement's snapshot shows it (a hint)
                + " UNION ALL SELECT false, NULL, NULL, (extract(epoch FROM h.expires_at - c.now) * 1000000)::bigint"
                + " FROM " + t + " h, c WHERE h.name = ? AND NOT EXISTS (SELECT 1 FROM acquired)"
                + " AND h.lease_id IS NOT NULL AND h.expires_at > c.now";
        // one "now" per statement, so the expiry check, the new expiry and the token age agree; the
        // grant's metadata and granted_at are not touched: a renewal keeps them
        String due = "req.period_us > 0 AND l.token_issued_at + req.period_us" + MICROS + " <= c.now";
        this.renew = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " UPDATE " + t + " AS l SET expires_at = c.now + req.ttl_us" + MICROS + ","
                + " token = CASE WHEN " + due + " THEN " + nextToken + " ELSE l.token END,"
                + " token_issued_at = CASE WHEN " + due + " THEN c.now ELSE l.token_issued_at END"
                + " FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[]) AS req(name, lease_id, ttl_us, period_us), c"
                + " WHERE l.name = req.name AND l.lease_id = req.lease_id AND l.expires_at > c.now"
                + " RETURNING l.name, l.lease_id, l.token, l.expires_at";
        // Rows are never deleted on release: the free row keeps the name's history (and none of the
        // holder's metadata). NOTIFY only when a caller was refused since the grant: a NOTIFY
        // serialises commits database-wide, so the uncontended release stays a plain update.
        // "contended" is reset by the next grant.
        this.release = "WITH r AS (UPDATE " + t + " SET lease_id = NULL, expires_at = clock_timestamp(),"
                + " lock_owner = NULL, lock_type = NULL, lock_data = NULL, granted_at = NULL"
                + " WHERE name = ? AND lease_id = ? AND expires_at > clock_timestamp() RETURNING name, contended)"
                + " SELECT CASE WHEN r.contended THEN pg_notify(?, r.name) END FROM r";
        String info = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " SELECT l.name, l.lease_id IS NOT NULL AND l.expires_at > c.now, l.lease_id, l.token, l.expires_at, c.now,"
                + " l.lock_owner, l.lock_type, l.lock_data, l.granted_at"
                + " FROM " + t + " l, c WHERE ";
        this.inspect = info + "l.name = ?";
        this.list = info + "l.lease_id IS NOT NULL AND l.expires_at > c.now AND starts_with(l.name, ?)"
                + " ORDER BY l.name COLLATE \"C\""; // Java's order of the names, whatever the database collation
        // A batch of free rows in name order (resumed after the last name of the previous batch);
        // of those, the ones whose guard is free right now, taken exclusively without waiting (an
        // acquire in flight holds it: the row stays for a later purge); then the delete, which
        // re-checks that each row is still free long enough on its latest version.
        String freeLongEnough = "(%1$slease_id IS NULL OR %1$sexpires_at <= clock_timestamp())"
                + " AND %1$sexpires_at <= clock_timestamp() - ?" + MICROS;
        this.purge = "WITH batch AS MATERIALIZED (SELECT name FROM " + t + " WHERE name > ? AND "
                + freeLongEnough.formatted("") + " ORDER BY name LIMIT " + PURGE_BATCH + "),"
                + " guarded AS MATERIALIZED (SELECT name FROM batch WHERE pg_try_advisory_xact_lock"
                + guard.formatted("name") + "),"
                + " gone AS (DELETE FROM " + t + " l USING guarded g WHERE l.name = g.name AND "
                + freeLongEnough.formatted("l.")
                + " RETURNING 1)"
                + " SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM batch), (SELECT max(name) FROM batch)";
    }
}
