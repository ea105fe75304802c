package io.fencelock.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The storage of shared grants (semaphores, read-write locks, the fair mutex) beside a lock table:
 * a companion table with one row per grant or waiter, and four PL/pgSQL functions, one per shared
 * operation, so that each is one round trip.
 *
 * <p>Why functions: a single statement at READ COMMITTED reads every table but the row it locks
 * from the snapshot it started with, so a statement that waited for the name's row lock would decide
 * on grants it cannot see. Each statement inside a function takes a new snapshot, so a function
 * that first locks the name's row of the lock table sees everything committed by the operations
 * before it. Every shared operation of a name holds that row lock; the row also keeps a summary of
 * the name's live shared rows (kind, limit, the last expiry of any row and of any grant), written
 * under the same lock, which is all the single-statement mutex acquire needs to read.
 */
final class SharedFunctions {
    /** The companion table's columns, for the start-up check. */
    private static final List<String> COLUMNS = List.of(
            "name",
            "id",
            "waiter",
            "mode",
            "permits",
            "kind",
            "permit_limit",
            "queued",
            "arrival",
            "token",
            "token_issued_at",
            "expires_at",
            "granted_at",
            "lock_owner",
            "lock_type",
            "lock_data");

    /** The summary of one name's live shared rows on its lock-table row; {more}: further SET items. */
    private static final String SUMMARY = """
            UPDATE {table} AS l SET shared_kind = a.kind, shared_limit = a.lim, shared_until = a.until,
                    shared_held_until = a.held_until{more}
                FROM (SELECT max(s.kind) AS kind, max(s.permit_limit) AS lim, max(s.expires_at) AS until,
                        max(s.expires_at) FILTER (WHERE NOT s.waiter) AS held_until
                    FROM {shared} s WHERE s.name = p_name AND s.expires_at > v_now) a
                WHERE l.name = p_name""";

    /** Locks the name's row: every shared operation of one name runs after the one before it. */
    private static final String LOCK_ROW = "PERFORM 1 FROM {table} l WHERE l.name = p_name FOR UPDATE";

    private static final String ACQUIRE = """
            DECLARE
                v_kind text := CASE WHEN p_mode = 'WRITE' THEN 'READ' ELSE p_mode END;
                v_now timestamptz;
                v_lease text;
                v_expires timestamptz;
                v_mutex boolean;
                v_mine bigint;
                v_room boolean;
            BEGIN
                -- the name's guard, shared, as the mutex acquire takes it: no purge deletes the name's rows meanwhile
                PERFORM pg_advisory_xact_lock_shared('{table}'::regclass::oid::int, hashtext(p_name));
                SELECT l.lease_id, l.expires_at INTO v_lease, v_expires FROM {table} l WHERE l.name = p_name FOR UPDATE;
                IF NOT FOUND THEN
                    -- token 0: the row only anchors the lock; every token comes from the sequence, drawn below
                    INSERT INTO {table} (name, token, token_issued_at, expires_at)
                        VALUES (p_name, 0, clock_timestamp(), clock_timestamp()) ON CONFLICT (name) DO NOTHING;
                    SELECT l.lease_id, l.expires_at INTO v_lease, v_expires FROM {table} l WHERE l.name = p_name FOR UPDATE;
                END IF;
                -- read after the lock: later than every operation of this name decided before this one
                v_now := clock_timestamp();
                DELETE FROM {shared} s WHERE s.name = p_name AND s.expires_at <= v_now;
                v_mutex := v_lease IS NOT NULL AND v_expires > v_now;
                IF v_mutex AND v_kind <> 'EXCLUSIVE' THEN
                    o_granted := false; o_kind := 'EXCLUSIVE'; o_limit := 0;
                    RETURN;
                END IF;
                SELECT s.kind, s.permit_limit INTO o_kind, o_limit FROM {shared} s WHERE s.name = p_name LIMIT 1;
                IF FOUND AND (o_kind <> v_kind OR o_limit <> p_limit) THEN
                    o_granted := false;
                    RETURN;
                END IF;
                o_kind := NULL; o_limit := NULL;
                SELECT s.arrival INTO v_mine FROM {shared} s WHERE s.name = p_name AND s.id = p_waiter AND s.waiter;
                v_room := NOT v_mutex AND CASE p_mode
                    WHEN 'PERMITS' THEN (SELECT coalesce(sum(s.permits), 0) FROM {shared} s
                        WHERE s.name = p_name AND NOT s.waiter) + p_permits <= p_limit
                    -- no writer holds, and no writer's intent stands but one queued after this reader's own place
                    WHEN 'READ' THEN NOT EXISTS (SELECT 1 FROM {shared} s WHERE s.name = p_name AND s.mode = 'WRITE'
                        AND (NOT s.waiter OR s.id <> p_waiter AND NOT (s.queued AND coalesce(s.arrival > v_mine, false))))
                    ELSE NOT EXISTS (SELECT 1 FROM {shared} s WHERE s.name = p_name AND NOT s.waiter)
                END;
                IF v_room AND p_fair THEN
                    -- no live queue place of another waiter before this one's (or at all, when it has none)
                    v_room := NOT EXISTS (SELECT 1 FROM {shared} s WHERE s.name = p_name AND s.waiter AND s.queued
                        AND s.id <> p_waiter AND (v_mine IS NULL OR s.arrival < v_mine));
                END IF;
                o_granted := v_room;
                IF v_room THEN
                    o_token := nextval('{sequence}'::regclass);
                    o_expires_at := v_now + p_ttl_us * interval '1 microsecond';
                    DELETE FROM {shared} s WHERE s.name = p_name AND s.id IN (p_waiter, p_lease);
                    INSERT INTO {shared} (name, id, waiter, mode, permits, kind, permit_limit, token, token_issued_at,
                            expires_at, granted_at, lock_owner, lock_type, lock_data)
                        VALUES (p_name, p_lease, false, p_mode, p_permits, v_kind, p_limit, o_token, v_now,
                            o_expires_at, v_now, p_owner, p_type, p_data);
                ELSIF p_waits AND (p_mode = 'WRITE' OR p_fair) THEN
                    -- a writer's intent and/or a queue place; a waiter that comes again keeps its first arrival
                    INSERT INTO {shared} AS s (name, id, waiter, mode, permits, kind, permit_limit, queued, arrival, expires_at)
                        VALUES (p_name, p_waiter, true, p_mode, p_permits, v_kind, p_limit, p_fair,
                            (SELECT coalesce(max(x.arrival), 0) + 1 FROM {shared} x WHERE x.name = p_name),
                            v_now + p_ttl_us * interval '1 microsecond')
                        ON CONFLICT (name, id) DO UPDATE SET mode = EXCLUDED.mode, queued = s.queued OR EXCLUDED.queued,
                            expires_at = EXCLUDED.expires_at;
                END IF;
                IF v_room OR p_waits AND (p_mode = 'WRITE' OR p_fair) THEN
                    -- a grant ends an expired mutex holder's claim (so its late renewal fails, as after a takeover);
                    -- a fair mutex waiting behind an ordinary holder needs that holder's release to notify
                    {summary};
                END IF;
                IF NOT v_room THEN
                    o_remaining_us := (extract(epoch FROM least(CASE WHEN v_mutex THEN v_expires END,
                        (SELECT min(s.expires_at) FROM {shared} s WHERE s.name = p_name)) - v_now) * 1000000)::bigint;
                END IF;
            END""";

    private static final String RELEASE = """
            DECLARE
                v_now timestamptz;
                v_waiter boolean;
                v_live boolean;
            BEGIN
                {lock};
                v_now := clock_timestamp();
                DELETE FROM {shared} s WHERE s.name = p_name AND s.id = p_id
                    RETURNING s.waiter, s.expires_at > v_now INTO v_waiter, v_live;
                IF NOT FOUND OR NOT v_live THEN
                    RETURN false;
                END IF;
                {summary};
                -- a freed grant, a withdrawn intent or queue place: waiters may get in now
                PERFORM pg_notify(p_channel, p_name);
                RETURN NOT v_waiter;
            END""";

    private static final String DOWNGRADE = """
            DECLARE
                v_now timestamptz;
            BEGIN
                {lock};
                v_now := clock_timestamp();
                -- one step: the name is never free, so no writer slips in; a reader's downgrade is a renewal
                UPDATE {shared} s SET mode = 'READ', expires_at = v_now + p_ttl_us * interval '1 microsecond'
                    WHERE s.name = p_name AND s.id = p_lease AND NOT s.waiter AND s.mode IN ('WRITE', 'READ')
                        AND s.expires_at > v_now
                    RETURNING s.token, s.expires_at INTO o_token, o_expires_at;
                IF FOUND THEN
                    {summary};
                    PERFORM pg_notify(p_channel, p_name);
                END IF;
            END""";

    private static final String RENEW = """
            DECLARE
                v_now timestamptz;
            BEGIN
                -- the rows of the names with a shared grant among the requests, in one order for every caller
                PERFORM 1 FROM {table} l WHERE l.name IN (SELECT s.name FROM {shared} s
                        JOIN unnest(p_names, p_leases) AS r(name, lease_id) ON s.name = r.name AND s.id = r.lease_id
                        WHERE NOT s.waiter)
                    ORDER BY l.name FOR UPDATE;
                v_now := clock_timestamp();
                RETURN QUERY WITH u AS (UPDATE {shared} s SET expires_at = v_now + r.ttl_us * interval '1 microsecond',
                        token = CASE WHEN {due} THEN nextval('{sequence}'::regclass) ELSE s.token END,
                        token_issued_at = CASE WHEN {due} THEN v_now ELSE s.token_issued_at END
                    FROM unnest(p_names, p_leases, p_ttls, p_periods) AS r(name, lease_id, ttl_us, period_us)
                    WHERE s.name = r.name AND s.id = r.lease_id AND NOT s.waiter AND s.expires_at > v_now
                    RETURNING s.name, s.id, s.token, s.expires_at)
                    SELECT * FROM u;
                -- the renewed names' summaries (a renewal may also shorten a grant) and their last token
                UPDATE {table} AS l SET shared_until = a.until, shared_held_until = a.held_until,
                        token = greatest(l.token, a.token)
                    FROM (SELECT s.name, max(s.expires_at) AS until, max(s.expires_at) FILTER (WHERE NOT s.waiter)
                            AS held_until, max(s.token) AS token
                        FROM {shared} s WHERE s.expires_at > v_now AND s.name IN (SELECT h.name FROM {shared} h
                            JOIN unnest(p_names, p_leases) AS r(name, lease_id) ON h.name = r.name AND h.id = r.lease_id
                            WHERE NOT h.waiter AND h.expires_at > v_now)
                        GROUP BY s.name) a
                    WHERE l.name = a.name;
            END""";

    final String qualifiedShared;
    final String acquireFunction;
    final String releaseFunction;
    final String downgradeFunction;
    final String renewFunction;

    private final LockTable table;
    private final String sharedName;
    /** Each function's signature (for to_regprocedure), its full definition and its body. */
    private final List<Function> functions = new ArrayList<>();

    private record Function(String signature, String definition, String body) {}

    SharedFunctions(LockTable table) {
        this.table = table;
        this.sharedName = table.table + "_shared";
        this.qualifiedShared = LockTable.quote(table.schema) + "." + LockTable.quote(sharedName);
        this.acquireFunction = name("_sh_acq");
        this.releaseFunction = name("_sh_rel");
        this.downgradeFunction = name("_sh_down");
        this.renewFunction = name("_sh_renew");
        String summary = SUMMARY.replace(
                "{more}",
                ",\n"
                        + "        token = CASE WHEN v_room THEN o_token ELSE l.token END,\n"
                        + "        lease_id = CASE WHEN v_room THEN NULL ELSE l.lease_id END,\n"
                        + "        lock_owner = CASE WHEN v_room THEN NULL ELSE l.lock_owner END,\n"
                        + "        lock_type = CASE WHEN v_room THEN NULL ELSE l.lock_type END,\n"
                        + "        lock_data = CASE WHEN v_room THEN NULL ELSE l.lock_data END,\n"
                        + "        granted_at = CASE WHEN v_room THEN NULL ELSE l.granted_at END,\n"
                        + "        contended = l.contended OR v_mutex");
        add(
                acquireFunction,
                "p_name text, p_lease text, p_ttl_us bigint, p_mode text, p_permits integer, p_limit integer,"
                        + " p_waiter text, p_waits boolean, p_fair boolean, p_owner text, p_type text, p_data jsonb",
                "text,text,bigint,text,integer,integer,text,boolean,boolean,text,text,jsonb",
                "OUT o_granted boolean, OUT o_token bigint, OUT o_expires_at timestamptz, OUT o_remaining_us bigint,"
                        + " OUT o_kind text, OUT o_limit integer",
                null,
                ACQUIRE.replace("{summary}", summary));
        String plainSummary = SUMMARY.replace("{more}", "");
        add(
                releaseFunction,
                "p_name text, p_id text, p_channel text",
                "text,text,text",
                null,
                "boolean",
                RELEASE.replace("{lock}", LOCK_ROW).replace("{summary}", plainSummary));
        add(
                downgradeFunction,
                "p_name text, p_lease text, p_ttl_us bigint, p_channel text",
                "text,text,bigint,text",
                "OUT o_token bigint, OUT o_expires_at timestamptz",
                null,
                DOWNGRADE.replace("{lock}", LOCK_ROW).replace("{summary}", plainSummary));
        add(
                renewFunction,
                "p_names text[], p_leases text[], p_ttls bigint[], p_periods bigint[]",
                "text[],text[],bigint[],bigint[]",
                null,
                "TABLE (o_name text, o_lease_id text, o_token bigint, o_expires_at timestamptz)",
                RENEW.replace(
                        "{due}",
                        "r.period_us > 0 AND s.token_issued_at + r.period_us * interval '1 microsecond'"
                                + " <= v_now"));
    }

    private String name(String suffix) {
        // the table's name is at most 53 characters: every suffix here fits PostgreSQL's 63
        return LockTable.quote(table.schema) + "." + LockTable.quote(table.table + suffix);
    }

    private void add(String name, String parameters, String types, String out, String returns, String body) {
        String resolved = "\n"
                + body.replace("{table}", table.qualifiedTable)
                        .replace("{shared}", qualifiedShared)
                        .replace("{sequence}", table.qualifiedSequence)
                + "\n";
        String definition = "CREATE OR REPLACE FUNCTION " + name + "(" + parameters + (out == null ? "" : ", " + out)
                + ")" + (returns == null ? "" : " RETURNS " + returns) + " LANGUAGE plpgsql AS $fn$" + resolved
                + "$fn$";
        functions.add(new Function(name + "(" + types + ")", definition, resolved));
    }

    /** The companion table's DDL, then each function's, in the order to run them. */
    List<String> ddl() {
        List<String> ddl = new ArrayList<>();
        ddl.add("CREATE TABLE IF NOT EXISTS " + qualifiedShared + " (\n"
                + "    name            text        NOT NULL,\n"
                + "    id              text        NOT NULL, -- a grant's lease id, or a waiter's id\n"
                + "    waiter          boolean     NOT NULL,\n"
                + "    mode            text        NOT NULL,\n"
                + "    permits         integer     NOT NULL,\n"
                + "    kind            text        NOT NULL,\n"
                + "    permit_limit    integer     NOT NULL,\n"
                + "    queued          boolean     NOT NULL DEFAULT false,\n"
                + "    arrival         bigint      NOT NULL DEFAULT 0,\n"
                + "    token           bigint      NOT NULL DEFAULT 0,\n"
                + "    token_issued_at timestamptz,\n"
                + "    expires_at      timestamptz NOT NULL,\n"
                + "    granted_at      timestamptz,\n"
                + "    lock_owner      text,\n"
                + "    lock_type       text,\n"
                + "    lock_data       jsonb,\n"
                + "    PRIMARY KEY (name, id)\n"
                + ")");
        functions.forEach(f -> ddl.add(f.definition()));
        return ddl;
    }

    /** What a table of an older version lacks or has of another version: empty when all is current. */
    List<String> problems(Connection c) throws SQLException {
        List<String> problems = new ArrayList<>();
        Set<String> columns = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT attname FROM pg_catalog.pg_attribute"
                + " WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped")) {
            ps.setString(1, qualifiedShared);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    columns.add(rs.getString(1));
                }
            }
        }
        if (columns.isEmpty()) {
            problems.add("the table of shared grants " + qualifiedShared + " is missing");
        } else if (!columns.containsAll(COLUMNS)) {
            List<String> missing = new ArrayList<>(COLUMNS);
            missing.removeAll(columns);
            problems.add("the table of shared grants " + qualifiedShared + " lacks columns " + missing);
        }
        for (Function f : functions) {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure(?)")) {
                ps.setString(1, f.signature());
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        problems.add("function " + f.signature() + " is missing");
                    } else if (!f.body().equals(rs.getString(1))) {
                        problems.add("function " + f.signature() + " is of another version");
                    }
                }
            }
        }
        return problems;
    }

    /**
     * Creates the companion table and (re)creates every function that is missing or of another
     * version, dropping the older one first (a function's result columns cannot be replaced).
     */
    void create(Connection c, Statement ddl) throws SQLException {
        List<String> statements = ddl();
        ddl.execute(statements.get(0));
        for (int i = 0; i < functions.size(); i++) {
            Function f = functions.get(i);
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = to_regprocedure(?)")) {
                ps.setString(1, f.signature());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && f.body().equals(rs.getString(1))) {
                        continue;
                    }
                }
            }
            ddl.execute("DROP FUNCTION IF EXISTS " + f.signature());
            ddl.execute(statements.get(i + 1));
        }
    }
}
