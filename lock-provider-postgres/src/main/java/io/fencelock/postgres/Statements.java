package io.fencelock.postgres;

/**
 * The SQL of one lock table: autocommit statements (a grant, then the acquire's decision only when it
 * granted nothing; a mutex release, then the shared one only when it freed nothing), decided by the server's
 * {@code clock_timestamp()}. Parameters are bound by {@link PostgresLockBackend} in the order the
 * comments give; identifiers are the table's validated, quoted names.
 */
final class Statements {
    private static final String MICROS = " * interval '1 microsecond'";
    /**
     * Queued clients a release (or a leave) looks at for one still listening: each that crashed while
     * queued costs one look, so a crowd of them cannot make a release slow; past them the next is woken
     * unchecked (if it is gone too, the waiters behind it hear of the release by their poll).
     */
    static final int WAKE_TRIES = 4;
    /** Rows a purge statement considers at once: each deleted row holds one advisory lock until its commit. */
    static final int PURGE_BATCH = 500;

    /**
     * name (guard), waiter (the client's listener, or null), lease id, name (a refusal seen in the
     * snapshot), name, ttl µs, owner, lock type, data (JSON text), name (the refusal's hint):
     * granted, token, expiry, remaining µs, the kind and limit of a shared name that refuses a mutex, the lease under
     * which the waiter's client is queued (or was granted by a release) and whether a release granted it.
     */
    final String acquire;
    /**
     * name (guard), lease id, name, ttl µs, owner, lock type, data (JSON text), name (the holder look),
     * waiter (or null) twice: token and expiry when granted, no row otherwise ({@link #acquire} decides then).
     */
    final String grant;
    /**
     * lease id, ttl µs, owner, lock type, data (JSON text), waiter (or null) twice, name: the grant for a name whose
     * row the backend has seen; token and expiry when granted, no row otherwise ({@link #acquire} decides then).
     */
    final String grantOnRow;
    /** names[], lease ids[], ttls µs[], token periods µs[] (0: none). */
    final String renew;
    /**
     * name, lease id, the NOTIFY channel: a row when the mutex grant was live and nobody is queued for the
     * name (it is now free); no row otherwise, and nothing written ({@link #release} decides then).
     */
    final String releaseUnqueued;
    /** name, lease id, the NOTIFY channel three times: a row when the mutex grant was live (and is now freed or granted on). */
    final String release;
    /** waiter, name, the NOTIFY channel: a client's waiter leaves the name's queue, passing a wake-up on. */
    final String leave;
    /**
     * waiter, lease id, name: this client's place in the name's queue withdrawn when it is queued under that lease
     * (a row answering false), run when {@link #release} freed no mutex grant; a row answering true when the lease
     * holds the name by now (a release granted it meanwhile), which is left as it is.
     */
    final String withdraw;
    /** name, id, channel, name, id: freed, run when {@link #release} freed no mutex grant (a shared grant or waiter). */
    final String releaseShared;
    /**
     * new lease id, ttl µs, owner, lock type, data (JSON text), waiter (the client's listener, or null) twice, name, the
     * holder's lease id, name (the refusal's hint): granted, token, expiry, remaining µs.
     */
    final String handOver;
    /** name: the columns of lock-jdbc's LockInfoRows, then shared kind, limit and holder columns (SharedRows). */
    final String inspect;
    /** prefix: the same columns, held locks only, in Java's order of the names. */
    final String list;
    /** after this name, age µs: deleted, considered, last name considered. */
    final String purge;
    /** The shared acquire function's parameters (SharedRows.bindAcquire): its answer. */
    final String acquireShared;
    /** name, lease id, ttl µs, the NOTIFY channel: token and expiry, or nulls when rejected. */
    final String downgrade;

    Statements(LockTable table) {
        String t = table.qualifiedTable;
        SharedFunctions shared = table.shared;
        this.acquireShared = "SELECT * FROM " + shared.acquireFunction + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)";
        this.downgrade = "SELECT * FROM " + shared.downgradeFunction + "(?, ?, ?, ?)";
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
        // A live shared grant of the name (a semaphore, a read-write lock: of another kind; a fair mutex: a
        // holder), or a live waiter of another kind, keeps the name from the mutex. The lock-table row's
        // summary says so, kept under the row lock by every shared operation (SharedFunctions): this
        // statement reads no other table, whose rows it would see as of its start, not as of the lock.
        String now = "EXCLUDED.token_issued_at";
        String otherKind = otherKind("l", now);
        String free = free("l", now);
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
        // The grant alone: a name that is free gets its grant from a statement a fraction of the size of
        // the acquire's, whose decision (refusal hints, waiter queue, contention mark, other kinds) runs only
        // when this one grants nothing. PostgreSQL initialises the whole plan of a statement at every
        // execution, so the grant's branch inside the acquire's statement costs as much as the statement.
        // Same guard, same "now", same token draws as the acquire (above). A holder live in the snapshot
        // skips the insert, so a refused call takes no row lock here; a holder that appears meanwhile
        // makes the conflict's WHERE false (evaluated on the row's latest version, under its lock).
        this.grant = "WITH c AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared" + guard.formatted("?")
                + " AS guarded, clock_timestamp() AS now)"
                + " INSERT INTO " + t + " AS l (name, lease_id, token, token_issued_at, expires_at, contended,"
                + " lock_owner, lock_type, lock_data, granted_at)"
                + " SELECT ?, ?, " + nextToken + ", c.now, c.now + ?" + MICROS + ", false, ?, ?, ?::jsonb, c.now FROM c"
                + " WHERE NOT EXISTS (SELECT 1 FROM " + t + " h WHERE h.name = ? AND NOT " + free("h", "c.now") + ")"
                + " ON CONFLICT (name) DO UPDATE SET lease_id = EXCLUDED.lease_id, token = " + nextToken + ","
                + " token_issued_at = EXCLUDED.token_issued_at, expires_at = EXCLUDED.expires_at, contended = false,"
                + " lock_owner = EXCLUDED.lock_owner, lock_type = EXCLUDED.lock_type, lock_data = EXCLUDED.lock_data,"
                + " granted_at = EXCLUDED.granted_at, waiters = array_remove(l.waiters, ?::text),"
                + " queued_grants = " + withoutEntry("l.queued_grants", "?::text") + ", granted_to = NULL"
                + " WHERE " + free
                + " RETURNING l.token, l.expires_at";
        // The grant for a name whose row exists, as a plain update of that row: none of the insert's guard, its
        // holder look or its early draw. The token is drawn in SET, after the row lock (a concurrent change of
        // the row makes the update re-read it and draw again), as a hand-over's is. A purge that deleted the row
        // first leaves nothing to match, and so does a holder: the acquire's decision (with its guarded insert)
        // follows, as after the grant above.
        // A new grant written over row l in an UPDATE (c.now its time): lease id, ttl µs, owner, lock type, data,
        // waiter (or null) twice. The grantee's own waiter leaves the queue, as on any grant.
        String newGrant = "lease_id = ?, token = " + nextToken + ", token_issued_at = c.now,"
                + " expires_at = c.now + ?" + MICROS + ", lock_owner = ?, lock_type = ?, lock_data = ?::jsonb,"
                + " granted_at = c.now, waiters = array_remove(l.waiters, ?::text),"
                + " queued_grants = " + withoutEntry("l.queued_grants", "?::text") + ", granted_to = NULL";
        this.grantOnRow = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " UPDATE " + t + " AS l SET " + newGrant + ", contended = false"
                + " FROM c WHERE l.name = ? AND " + free("l", "c.now")
                + " RETURNING l.token, l.expires_at";
        // Whom a release wakes: a caller whose client waits for the name (the engine watches it on the
        // client's listener) names its listener as the waiter, and a refusal queues that waiter on the
        // row once (waiters, in order of their first refusal); the release wakes the first in the queue
        // only, and a grant takes the grantee's waiter out. A refused caller that names no waiter marks
        // the row contended instead, and the release wakes everyone. Either is written once per waiter:
        // a refusal that would write nothing still takes the row lock in ON CONFLICT DO UPDATE, and a
        // row lock is written into the row, so that refused waiters would commit one after another
        // behind every grant. When the statement's snapshot shows a live mutex holder and the caller's
        // refusal already recorded, the insert is skipped and the refusal is a plain read: it holds at
        // the snapshot, within the statement, and the release will signal.
        String waiter = "(SELECT c.waiter FROM c)";
        String queued = "coalesce(" + waiter + " = ANY (l.waiters), false)";
        // the name is held by the grant a release made to the waiter's queued lease
        String holdsGrant = grantHeldBy("l", waiter);
        this.acquire = "WITH c AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared" + guard.formatted("?")
                + " AS guarded, clock_timestamp() AS now, ?::text AS waiter, ?::text AS lease_id),"
                + " refused AS MATERIALIZED (SELECT 1 FROM " + t + " h, c WHERE h.name = ?"
                + " AND h.lease_id IS NOT NULL AND h.expires_at > c.now"
                + " AND NOT coalesce(h.shared_until > c.now OR h.shared_held_until > c.now, false)"
                + " AND CASE WHEN c.waiter IS NULL THEN h.contended ELSE " + grantHeldBy("h", "c.waiter")
                + " OR coalesce(c.waiter = ANY (h.waiters), false) AND " + freshEntry("h", "c.waiter", "c.now")
                + " END),"
                + " acquired AS ("
                + " INSERT INTO " + t + " AS l (name, lease_id, token, token_issued_at, expires_at, contended,"
                + " lock_owner, lock_type, lock_data, granted_at)"
                + " SELECT ?, c.lease_id, " + nextToken + ", c.now, c.now + ?" + MICROS
                + ", false, ?, ?, ?::jsonb, c.now FROM c"
                + " WHERE NOT EXISTS (SELECT 1 FROM refused)"
                + " ON CONFLICT (name) DO UPDATE SET"
                + granted
                + " token = CASE WHEN " + free + " THEN " + nextToken + " ELSE l.token END,"
                + " contended = CASE WHEN " + free + " THEN false WHEN " + waiter + " IS NULL THEN true"
                + " ELSE l.contended END,"
                + " waiters = CASE WHEN " + free + " THEN array_remove(l.waiters, " + waiter + ")"
                + " WHEN " + waiter + " IS NULL OR " + queued + " OR " + holdsGrant + " THEN l.waiters"
                // the waiter the last release woke lost the race to another caller: first again
                + " WHEN " + waiter + " = l.woken THEN array_prepend(" + waiter + ", l.waiters)"
                + " ELSE array_append(l.waiters, " + waiter + ") END,"
                // the grant a release makes to the waiter: this attempt's lease, TTL and metadata, and since when;
                // written with the waiter's place, and again once a quarter of its TTL old (the client counts the
                // grant's validity from the attempt that wrote it)
                + " queued_grants = CASE WHEN " + free + " THEN " + withoutEntry("l.queued_grants", waiter)
                + " WHEN " + waiter + " IS NULL OR " + holdsGrant + " OR " + queued + " AND "
                + freshEntry("l", waiter, now) + " THEN l.queued_grants"
                + " ELSE coalesce(l.queued_grants, '{}'::jsonb) || jsonb_build_object(" + waiter
                + ", jsonb_build_object("
                + "'l', EXCLUDED.lease_id, 't', (extract(epoch FROM EXCLUDED.expires_at - EXCLUDED.token_issued_at)"
                + " * 1000000)::bigint, 'o', EXCLUDED.lock_owner, 'y', EXCLUDED.lock_type, 'd', EXCLUDED.lock_data,"
                + " 'at', EXCLUDED.token_issued_at)) END,"
                + " granted_to = CASE WHEN " + free + " THEN NULL ELSE l.granted_to END"
                // a refusal writes only to record itself (or its entry, grown old), or to learn of a name of another
                // kind from the row's latest version
                + " WHERE " + free + " OR " + otherKind + " OR CASE WHEN " + waiter + " IS NULL THEN NOT l.contended"
                + " ELSE NOT " + holdsGrant + " AND NOT (" + queued + " AND " + freshEntry("l", waiter, now) + ") END"
                + " RETURNING coalesce(l.lease_id = (SELECT c.lease_id FROM c), false) AS granted, l.token, l.expires_at, l.shared_kind, l.shared_limit,"
                + " l.shared_until, l.shared_held_until, " + queuedLease("l", waiter) + " AS queued_lease, "
                + holdsGrant + " AS queued_granted)"
                + " SELECT a.granted, a.token, a.expires_at,"
                + " (extract(epoch FROM greatest(a.expires_at, a.shared_held_until) - c.now) * 1000000)::bigint,"
                + " CASE WHEN NOT a.granted AND a.shared_until > c.now AND a.shared_kind <> 'EXCLUSIVE'"
                + " THEN a.shared_kind END, a.shared_limit, a.queued_lease, a.queued_granted"
                + " FROM acquired a, c"
                // refused without a write: the holder's remaining time, as the statement's snapshot shows it (a hint)
                + " UNION ALL SELECT false, h.token, h.expires_at, (extract(epoch FROM greatest(CASE WHEN h.lease_id IS NOT NULL"
                + " AND h.expires_at > c.now THEN h.expires_at END, h.shared_held_until) - c.now) * 1000000)::bigint,"
                + " NULL, NULL, " + queuedLease("h", "c.waiter") + ", " + grantHeldBy("h", "c.waiter")
                + " FROM " + t + " h, c WHERE h.name = ? AND NOT EXISTS (SELECT 1 FROM acquired)"
                + " AND (h.lease_id IS NOT NULL AND h.expires_at > c.now OR h.shared_held_until > c.now)";
        // A hand-over: the holder's grant ends and the new lease's begins in one update of the row, so the
        // name is never free and nothing is signalled. The token is drawn in SET, after the row lock (a
        // concurrent change of the row makes the update re-read it and draw again), as a renewal's is. The
        // waiter queue and the contention mark stay as they are: the waiters of other clients were refused
        // by a holder the new one replaces without a release, and its release must still wake them; only
        // the grantee's own waiter leaves the queue, as on any grant. The holder must hold as the acquire
        // would see it: a mutex grant of the lease, live, and no shared grant or other kind on the name.
        this.handOver = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now),"
                + " handed AS (UPDATE " + t + " AS l SET " + newGrant
                + " FROM c WHERE l.name = ? AND l.lease_id = ? AND l.expires_at > c.now AND "
                + noSharedHold("l", "c.now")
                + " RETURNING l.token, l.expires_at)"
                + " SELECT true, a.token, a.expires_at, NULL::bigint FROM handed a"
                // refused: the holder's remaining time, as the statement's snapshot shows it (a hint)
                + " UNION ALL SELECT false, NULL, NULL, (extract(epoch FROM h.expires_at - c.now) * 1000000)::bigint"
                + " FROM " + t + " h, c WHERE h.name = ? AND NOT EXISTS (SELECT 1 FROM handed)"
                + " AND h.lease_id IS NOT NULL AND h.expires_at > c.now";
        // one "now" per statement, so the expiry check, the new expiry and the token age agree; the
        // grant's metadata and granted_at are not touched: a renewal keeps them
        String due = "req.period_us > 0 AND l.token_issued_at + req.period_us" + MICROS + " <= c.now";
        // Shared grants in the same round trip: their function runs only when a request names one
        this.renew = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now),"
                + " a AS MATERIALIZED (SELECT ?::text[] AS names, ?::text[] AS leases, ?::bigint[] AS ttls,"
                + " ?::bigint[] AS periods),"
                + " m AS (UPDATE " + t + " AS l SET expires_at = c.now + req.ttl_us" + MICROS + ","
                + " token = CASE WHEN " + due + " THEN " + nextToken + " ELSE l.token END,"
                + " token_issued_at = CASE WHEN " + due + " THEN c.now ELSE l.token_issued_at END"
                + " FROM a, unnest(a.names, a.leases, a.ttls, a.periods) AS req(name, lease_id, ttl_us, period_us), c"
                + " WHERE l.name = req.name AND l.lease_id = req.lease_id AND l.expires_at > c.now"
                + " RETURNING l.name, l.lease_id, l.token, l.expires_at)"
                + " SELECT * FROM m"
                + " UNION ALL SELECT r.* FROM a, " + shared.renewFunction + "(a.names, a.leases, a.ttls, a.periods) r"
                + " WHERE EXISTS (SELECT 1 FROM " + shared.qualifiedShared
                + " s, unnest(a.names, a.leases) AS q(name, lease_id)"
                + " WHERE s.name = q.name AND s.id = q.lease_id)";
        // Rows are never deleted on release: the free row keeps the name's history (and none of the
        // holder's metadata). NOTIFY only when a caller was refused since the grant: a NOTIFY
        // serialises commits database-wide, so the uncontended release stays a plain update. A queued
        // waiter is woken alone, by a payload that names its listener ("name waiter": a name has no
        // space), and leaves the queue (woken keeps it for the NOTIFY: SET reads the row before the
        // update); a refused caller that is not queued (contended) is woken with everyone, by the name.
        // "contended" is reset by the next grant. The waiter woken is the first whose listener still
        // listens (liveWaiter): a crashed client's id is skipped and dropped with the ones before it.
        // A lease id that is not the mutex's may be a shared grant's or a waiter's: their function runs
        // only when the name has a row of that id.
        // With GRANT_ON_RELEASE, the waiter chosen is granted in the same update when its client queued a grant
        // (queued_grants): its lease, TTL from now, metadata and a new token; granted_to names its client, whose
        // listener hears "name waiter lease token expiry-µs" and whose later attempts learn of it. A waiter queued
        // without a grant (a client of an earlier version) is woken as before, the name left free. The live
        // waiter is picked once, by a locking read of the row (p: its latest version, locked until the commit):
        // a chain of tries in each column the grant sets made every release initialise a dozen copies of it
        // (own names, provider alone, 8 threads, three alternating passes of 6 s: 4,811 cycles/s with the
        // copies, 5,368 with the pick, 5,439 with the release before grants, 5,647 before this change).
        // The release of a name nobody is queued for, the common case, as one plain update: the row ends as the
        // full release below leaves it when its queue and queued grants are empty (free, the holder's metadata
        // gone, the token kept), and a refused caller that is not queued (contended) is woken by the name. The
        // full statement (its locking read, which writes a row lock into the row before the update, and its
        // larger plan) costs about 90 µs more per release here (a probe of 12,000 cycles each, one thread, alternating
        // with the raw primitive: grant + this release 892 µs p50 against 979 with the full release, the raw
        // pair 777). A queue that appears meanwhile fails the WHERE, which an UPDATE re-evaluates on the row's
        // latest version under its lock: no row, nothing written, and the caller runs the full release.
        this.releaseUnqueued =
                "UPDATE " + t + " SET lease_id = NULL, expires_at = clock_timestamp(), lock_owner = NULL,"
                        + " lock_type = NULL, lock_data = NULL, granted_at = NULL, granted_to = NULL, woken = NULL"
                        + " WHERE name = ? AND lease_id = ? AND expires_at > clock_timestamp()"
                        + " AND coalesce(cardinality(waiters), 0) = 0 AND (queued_grants IS NULL OR queued_grants = '{}'::jsonb)"
                        + " RETURNING CASE WHEN contended THEN pg_notify(?, name) END";
        String next = "l.waiters[p.k]";
        String entry = "l.queued_grants -> " + next;
        String grants = "(" + entry + ") IS NOT NULL";
        this.release = "WITH p AS MATERIALIZED (SELECT name, " + liveWaiter("waiters") + " AS k FROM " + t
                + " WHERE name = ? AND lease_id = ? AND expires_at > clock_timestamp() FOR UPDATE),"
                + " r AS (UPDATE " + t + " AS l SET lease_id = (" + entry + ") ->> 'l',"
                + " token = CASE WHEN " + grants + " THEN " + nextToken + " ELSE l.token END,"
                + " token_issued_at = CASE WHEN " + grants + " THEN clock_timestamp() ELSE l.token_issued_at END,"
                + " expires_at = clock_timestamp() + coalesce(((" + entry + ") ->> 't')::bigint, 0)" + MICROS + ","
                + " lock_owner = (" + entry + ") ->> 'o', lock_type = (" + entry + ") ->> 'y',"
                + " lock_data = nullif((" + entry + ") -> 'd', 'null'::jsonb),"
                + " granted_at = CASE WHEN " + grants + " THEN clock_timestamp() END,"
                + " granted_to = CASE WHEN " + grants + " THEN " + next + " || ' ' || ((" + entry + ") ->> 'l') END,"
                + " woken = CASE WHEN " + grants + " THEN NULL ELSE " + next + " END,"
                + " waiters = l.waiters[p.k + 1:],"
                + " queued_grants = nullif(l.queued_grants - l.waiters[1:p.k], '{}'::jsonb)"
                + " FROM p WHERE l.name = p.name"
                + " RETURNING l.name, l.contended, l.woken, l.granted_to, l.token, l.expires_at)"
                + " SELECT true, CASE WHEN r.contended THEN pg_notify(?, r.name) END,"
                + " CASE WHEN r.granted_to IS NOT NULL THEN pg_notify(?, r.name || ' ' || r.granted_to"
                + " || ' ' || r.token || ' ' || (extract(epoch FROM r.expires_at) * 1000000)::bigint)"
                + " WHEN r.woken IS NOT NULL THEN pg_notify(?, r.name || ' ' || r.woken) END FROM r";
        // A client whose waiters of the name stopped waiting leaves the queue, and a client woken after they
        // stopped passes the wake-up on: when the name is free, the next queued waiter is woken in its place,
        // as a release would (taken out of the queue, kept in woken). Otherwise a release's one wake-up could
        // go to a client nobody waits in, and the next waiter would hear of the release only by its poll.
        // Runs only when the row queues the waiter, or is free with a queue. The live waiter is picked once, by a
        // locking read of the row, as the release picks it.
        String freeNow = free("l", "c.now");
        this.leave = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now, ?::text AS waiter),"
                + " p AS MATERIALIZED (SELECT l.name, " + freeNow + " AS freed, q.rest, CASE WHEN " + freeNow
                + " THEN " + liveWaiter("q.rest") + " END AS k"
                + " FROM " + t
                + " l CROSS JOIN c CROSS JOIN LATERAL (SELECT array_remove(l.waiters, c.waiter) AS rest) q"
                + " WHERE l.name = ? AND (c.waiter = ANY (l.waiters) OR " + freeNow + " AND cardinality(l.waiters) > 0)"
                + " FOR UPDATE OF l),"
                + " r AS (UPDATE " + t + " AS l SET"
                + " woken = CASE WHEN p.freed THEN p.rest[p.k] ELSE l.woken END,"
                + " waiters = CASE WHEN p.freed THEN p.rest[p.k + 1:] ELSE p.rest END,"
                + " queued_grants = nullif(l.queued_grants - c.waiter"
                + " - CASE WHEN p.freed THEN p.rest[1:p.k] ELSE '{}'::text[] END, '{}'::jsonb)"
                + " FROM p, c WHERE l.name = p.name"
                + " RETURNING l.name, p.freed, l.woken)"
                + " SELECT pg_notify(?, r.name || ' ' || r.woken) FROM r WHERE r.freed AND r.woken IS NOT NULL";
        // The engine releases the lease a waiter of this client is queued under when the waiter stops waiting
        // without holding: a release of it that frees nothing takes the client's place out of the queue (when it
        // is still queued under that lease), before the acquire returns, so that no later release grants a client
        // nobody waits in. A holder's release may grant that lease between the release statements above, which
        // found it holding nothing, and this one, which then finds no place: this one also matches the row the
        // lease holds by then (an UPDATE re-reads its row's latest version under the row lock), changes no value
        // there, and answers true, so that the caller releases the grant (under load, the TCK's
        // interruptedAcquireLeavesNoGrantBehind found such a grant held until its TTL, about once in 1,000 races).
        String placed = "l.queued_grants -> c.waiter ->> 'l' = c.lease";
        this.withdraw = "WITH c AS MATERIALIZED (SELECT ?::text AS waiter, ?::text AS lease) UPDATE " + t + " AS l"
                + " SET waiters = CASE WHEN " + placed + " THEN array_remove(l.waiters, c.waiter) ELSE l.waiters END,"
                + " queued_grants = CASE WHEN " + placed + " THEN " + withoutEntry("l.queued_grants", "c.waiter")
                + " ELSE l.queued_grants END"
                + " FROM c WHERE l.name = ? AND (" + placed + " OR l.lease_id = c.lease)"
                + " RETURNING l.lease_id IS NOT DISTINCT FROM c.lease";
        this.releaseShared = "SELECT " + shared.releaseFunction + "(?, ?, ?) WHERE EXISTS (SELECT 1 FROM "
                + shared.qualifiedShared + " s WHERE s.name = ? AND s.id = ?)";
        // the columns of lock-jdbc's LockInfoRows, then the name's shared kind and limit and one live
        // shared grant per row (SharedRows reads them), oldest first
        String info = "WITH c AS MATERIALIZED (SELECT clock_timestamp() AS now)"
                + " SELECT l.name, l.lease_id IS NOT NULL AND l.expires_at > c.now, l.lease_id, l.token, l.expires_at, c.now,"
                + " l.lock_owner, l.lock_type, l.lock_data, l.granted_at, l.shared_kind, l.shared_limit,"
                + " h.id, h.mode, h.permits, h.token, h.expires_at, h.lock_owner, h.lock_type, h.lock_data, h.granted_at"
                + " FROM " + t + " l CROSS JOIN c LEFT JOIN " + shared.qualifiedShared
                + " h ON h.name = l.name AND NOT h.waiter AND h.expires_at > c.now WHERE ";
        this.inspect = info + "l.name = ? ORDER BY h.token";
        this.list = info + "(l.lease_id IS NOT NULL AND l.expires_at > c.now OR l.shared_held_until > c.now)"
                + " AND starts_with(l.name, ?)"
                + " ORDER BY l.name COLLATE \"C\", h.token"; // Java's order of the names, whatever the database
        // collation
        // A batch of free rows in name order (resumed after the last name of the previous batch);
        // of those, the ones whose guard is free right now, taken exclusively without waiting (an
        // acquire in flight holds it: the row stays for a later purge); then the delete, which
        // re-checks that each row is still free long enough on its latest version.
        // A shared name is free once its last shared row (grant or waiter) has expired, as long ago;
        // its expired shared rows go with it (no shared operation runs meanwhile: the acquire holds
        // the guard, the others the row lock the delete waits for).
        String freeLongEnough = "(l.lease_id IS NULL OR l.expires_at <= clock_timestamp())"
                + " AND l.expires_at <= clock_timestamp() - p.age"
                + " AND (l.shared_until IS NULL OR l.shared_until <= clock_timestamp() - p.age)";
        this.purge = "WITH p AS MATERIALIZED (SELECT ?::text AS after, ?::bigint" + MICROS + " AS age),"
                + " batch AS MATERIALIZED (SELECT l.name FROM " + t + " l, p WHERE l.name > p.after AND "
                + freeLongEnough + " ORDER BY l.name LIMIT " + PURGE_BATCH + "),"
                + " guarded AS MATERIALIZED (SELECT name FROM batch WHERE pg_try_advisory_xact_lock"
                + guard.formatted("name") + "),"
                + " gone AS (DELETE FROM " + t + " l USING guarded g, p WHERE l.name = g.name AND "
                + freeLongEnough
                + " RETURNING l.name),"
                + " gone_shared AS (DELETE FROM " + shared.qualifiedShared + " s USING gone WHERE s.name = gone.name)"
                + " SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM batch), (SELECT max(name) FROM batch)";
    }

    /**
     * The advisory lock key of a release listener's waiter id ({@code id}, an SQL expression): the listener's
     * connection holds it for as long as it listens (ReleaseListener), so a key nobody holds is the id of a
     * client that is gone.
     */
    static String listenerKey(String id) {
        return "hashtextextended(" + id + ", 0)";
    }

    /**
     * The position in {@code queue} (an SQL text[] expression) of the first of its first {@link #WAKE_TRIES}
     * waiters whose listener still listens, else the position after those tried (past the end of a shorter
     * queue): a shared try of a waiter's key fails only while a listener holds it (a key taken here is let
     * go at the commit, and taken again by the second look of the same statement). A chain of scalar
     * tests, not a subquery: on an empty queue each is a strict function of NULL, where a subquery is a
     * plan every release initialises, contended or not (pgbench, acquire + release, 8 clients, six passes
     * of 10 s: median 13.6k cycles/s with the subquery, 14.15k with the chain, 14.15k without either).
     */
    private static String liveWaiter(String queue) {
        StringBuilder k = new StringBuilder("CASE");
        for (int i = 1; i <= WAKE_TRIES; i++) {
            k.append(" WHEN NOT pg_try_advisory_xact_lock_shared(")
                    .append(listenerKey("(" + queue + ")[" + i + "]"))
                    .append(") THEN ")
                    .append(i);
        }
        return k.append(" ELSE coalesce(least(cardinality(")
                .append(queue)
                .append("), ")
                .append(WAKE_TRIES)
                .append("), 0) + 1 END")
                .toString();
    }

    /** {@code grants} (a queued_grants expression) without {@code waiter}'s entry (none when null); null when empty. */
    private static String withoutEntry(String grants, String waiter) {
        return "nullif(" + grants + " - coalesce(" + waiter + ", ''), '{}'::jsonb)";
    }

    /** {@code waiter}'s queued grant on row {@code r} was written less than a quarter of its TTL before {@code now}. */
    private static String freshEntry(String r, String waiter, String now) {
        String e = r + ".queued_grants -> " + waiter;
        return "coalesce((" + e + " ->> 'at')::timestamptz >= " + now + " - ((" + e + " ->> 't')::bigint / 4)" + MICROS
                + ", false)";
    }

    /** The lease under which {@code waiter}'s client waits on row {@code r}: the one a release granted, or its queued one. */
    private static String queuedLease(String r, String waiter) {
        return "CASE WHEN " + grantHeldBy(r, waiter) + " THEN " + r + ".lease_id ELSE " + r + ".queued_grants -> "
                + waiter + " ->> 'l' END";
    }

    /**
     * Row {@code r}'s holder is the grant a release made to {@code waiter}'s queued lease: {@code granted_to} names
     * the waiter and that lease, so it no longer matches once another grant (of any version) replaced it.
     */
    private static String grantHeldBy(String r, String waiter) {
        return "coalesce(" + r + ".granted_to = " + waiter + " || ' ' || " + r + ".lease_id, false)";
    }

    /** Row {@code r}'s name is free for the mutex at {@code now}: no live grant, nothing shared keeps it. */
    private static String free(String r, String now) {
        return "((" + r + ".lease_id IS NULL OR " + r + ".expires_at <= " + now + ") AND " + noSharedHold(r, now) + ")";
    }

    /** Live shared grants or waiters of another kind than the mutex on row {@code r} at {@code now}. */
    private static String otherKind(String r, String now) {
        return "coalesce(" + r + ".shared_until > " + now + " AND " + r + ".shared_kind <> 'EXCLUSIVE', false)";
    }

    /** Nothing shared keeps row {@code r}'s name from the mutex at {@code now}: no live shared grant, nothing of another kind. */
    private static String noSharedHold(String r, String now) {
        return "NOT coalesce(" + r + ".shared_held_until > " + now + ", false) AND NOT " + otherKind(r, now);
    }
}
