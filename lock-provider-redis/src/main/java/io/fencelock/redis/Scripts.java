package io.fencelock.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/**
 * The Lua scripts, one per operation. Redis runs a script atomically, so each is one indivisible
 * step on the server and one round trip for the client. Every key a script touches is passed in
 * KEYS (Cluster routes by them), and the keys of one call share a slot.
 *
 * <p>Time is the server's: {@code TIME} inside the script. The expiry is set as an absolute
 * millisecond time ({@code PXAT}, {@code PEXPIREAT}) computed from that same reading, so the
 * expiry reported to the client is exactly the one Redis enforces. Numbers go back to Redis through
 * {@code string.format('%.0f')}: Lua 5.1 would print a 16-digit number in exponent notation.
 */
final class Scripts {
    /** Redis 6.2 added {@code SET ... PXAT}. */
    static final int[] MIN_VERSION = {6, 2};

    static final String NOW = """
            local t = redis.call('TIME')
            local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
            """;

    /**
     * A grant's value, read: whether a lock's value is a grant of {@code lease}. The value is {@code lease
     * LF grant ms LF metadata} (HeldValue), and lease ids hold no line feed, so this prefix test is exact.
     */
    private static final String HOLDS = """
            local function holds(value, lease)
              return value and string.byte(value, #lease + 1) == 10 and string.sub(value, 1, #lease) == lease
            end
            """;

    /**
     * When a holder's token was issued (server µs), for RENEW's token period: at the grant (its millisecond
     * rounded up, so a token period never ends early), or at the record's {@code t} when a renewal replaced
     * the token since.
     */
    private static final String ISSUED_AT = """
            local function issuedAt(value, renewed)
              local granted = string.match(value, '^[^\\n]*\\n(%d+)')
              local at = granted and (tonumber(granted) + 1) * 1000 - 1 or 0
              renewed = tonumber(renewed or 0)
              return renewed > at and renewed or at
            end
            """;

    /**
     * A grant's value, written: a new grant of {@code lease} for {@code ttl} ms gives its value, its {@code
     * PXAT} expiry, the grant's time (ms, as a string) and its expiry as a number. The time is cut from
     * {@code TIME}'s strings (seconds, then the first three of the six microsecond digits), so there is no
     * number formatting on the grant path but the expiry's.
     */
    private static final String GRANT_OF = """
            local function grantOf(lease, ttl, metadata)
              local t = redis.call('TIME')
              local ms = t[1] .. string.sub('00000' .. t[2], -6, -4)
              local expiry = tonumber(ms) + tonumber(ttl)
              return lease .. '\\n' .. ms .. '\\n' .. metadata, string.format('%.0f', expiry), ms, expiry
            end
            """;

    /**
     * How long a name's wake-up queue outlives its holder's expiry after the last refusal that
     * refreshed it: a waiter refreshes it at every refused poll, so only a queue nobody waits in expires.
     */
    static final long QUEUE_SLACK_MS = 60_000;

    /** Wake-ups tried per release: each dead waiter (no subscriber left) costs one, so a crowd of crashed clients cannot make a release slow. */
    static final int WAKE_TRIES = 8;

    /**
     * Wakes the first waiter of a name's queue that is still listening: takes it out of the queue and
     * publishes the name on its own channel ({@code prefix .. waiter id}); a waiter whose channel has no
     * subscriber (its client is gone) is dropped and the next one tried. The queue only decides whom
     * to wake: it grants nothing.
     */
    private static final String WAKE_NEXT = """
            local function wakeNext(queue, prefix, name)
              for _ = 1, WAKE_TRIES do
                local head = redis.call('ZPOPMIN', queue)
                if not head[1] then return end
                if redis.call('PUBLISH', prefix .. head[1], name) > 0 then return end
              end
            end
            """.replace("WAKE_TRIES", Integer.toString(WAKE_TRIES));

    /**
     * KEYS: lock, wake-up queue, queued grants. ARGV: waiter id, wake channel prefix, name. A waiter stops
     * waiting (or heard a wake-up it no longer wants): leaves the queue (and its grant request) and, when the
     * lock is free, wakes the next waiter in its place, so that a wake-up is never lost with a waiter that left.
     */
    static final Script LEAVE = new Script("leave", WAKE_NEXT + """
            redis.call('ZREM', KEYS[2], ARGV[1])
            redis.call('HDEL', KEYS[3], ARGV[1])
            if redis.call('EXISTS', KEYS[1]) == 0 then wakeNext(KEYS[2], ARGV[2], ARGV[3]) end
            return 1
            """);

    /**
     * Grants the name to the first waiter of its queue that asked for a grant and listens on this server
     * ({@code GRANT_ON_RELEASE}): takes it out of the queue and its request ({@code lease LF ttl ms LF
     * metadata}, written by ACQUIRE) out of the grants, and, when its channel has a subscriber here ({@code
     * PUBSUB NUMSUB}), draws the next token, sets the lock to that lease's grant (value and expiry as ACQUIRE
     * writes them, from this TIME) and then publishes {@code name LF lease LF token LF expiry ms} on the
     * waiter's own channel. Written first, told after: a {@code PUBLISH} also reaches the subscribers of a
     * replica (a client still attached to a demoted master after a Sentinel failover) and of a Cluster's
     * other nodes, which its count leaves out, so a grant written on the count of a publish could be told to
     * a client that it was never written for. A waiter that asked no grant (an older client) is woken as
     * WAKE_NEXT wakes it, which ends the search. A waiter nobody listens for here (its client is gone) costs
     * one of {@link #WAKE_TRIES} tries. Returns the lease granted, or nil.
     */
    private static final String GRANT_NEXT = """
            local function grantNext(lock, record, queue, grants, prefix, name)
              for _ = 1, WAKE_TRIES do
                local head = redis.call('ZPOPMIN', queue)
                if not head[1] then return nil end
                local channel = prefix .. head[1]
                local ask = redis.call('HGET', grants, head[1])
                if ask then
                  redis.call('HDEL', grants, head[1])
                  if redis.call('PUBSUB', 'NUMSUB', channel)[2] > 0 then
                    local a = string.find(ask, '\\n', 1, true)
                    local b = string.find(ask, '\\n', a + 1, true)
                    local lease = string.sub(ask, 1, a - 1)
                    local value, px = grantOf(lease, string.sub(ask, a + 1, b - 1), string.sub(ask, b + 1))
                    local token = redis.call('HINCRBY', record, 'n', 1)
                    redis.call('SET', lock, value, 'PXAT', px)
                    redis.call('PUBLISH', channel, name .. '\\n' .. lease .. '\\n' .. token .. '\\n' .. px)
                    return lease
                  end
                elseif redis.call('PUBLISH', channel, name) > 0 then
                  return nil
                end
              end
              return nil
            end
            """.replace("WAKE_TRIES", Integer.toString(WAKE_TRIES));

    /** The grant ACQUIRE and HAND_OVER write (GRANT_OF; ARGV: lease id, ttl ms, metadata JSON). */
    private static final String GRANT_VALUE = """
            local value, px, ms, expiry = grantOf(ARGV[1], ARGV[2], ARGV[3])
            local nowMs = tonumber(ms)
            """;

    /**
     * KEYS: lock, token record, shared record, wake-up queue, queued grants. ARGV: lease id, ttl (ms), metadata
     * JSON ('' for none), waiter id ('' when the client has no waiter for the name), the waiter's place in the
     * queue ('' when it has none yet), queue slack (ms, {@link #QUEUE_SLACK_MS}), '1' when a waiter's refusal
     * is to (re)write its grant request with this lease ('' otherwise), the lease the waiter's request was
     * last written with ('' when none).
     * Returns {1, token, expiry ms} when granted, else {0, the holder's PTTL (ms, negative if unknown), now ms}
     * followed, for a waiter, by 1 when its grant request was written with this lease or 2 when the one
     * written before stands; {3, token, expiry ms} when the lock is held by the lease of the waiter's request
     * (a release granted it: GRANT_NEXT); or {2, kind, limit} when live shared grants or waiters make the
     * name another kind of lock.
     * The lock's value is the lease id, the grant's time (now ms) and the metadata (HeldValue), so
     * metadata and grant time live and die with the grant and cost no command of their own; the grant's
     * time is also the token's issue time (RENEW). A grant is two commands, {@code SET NX} and, only if
     * that succeeded, {@code HINCRBY}: a refused attempt never consumes a token, and the grant writes
     * nothing else. The time is cut from {@code TIME}'s strings (seconds, then the first three of the six
     * microsecond digits): no number formatting on the grant path but the expiry's.
     * A refusal of a waiter puts it in the name's wake-up queue (a sorted set of waiter ids, ordered by
     * the place the waiter keeps from its first refusal, so a woken waiter that lost the race keeps its
     * place), and its grant takes it out; the release then wakes only the first waiter ({@code
     * WAKE_NEXT}). Any other refusal marks the record with the holder's lease id ({@code w}: someone may wait, so that
     * holder's release publishes); a later holder's release sees another id there, so a grant need not
     * clear the mark. The refusal writes only when the mark is not that already. A name with live shared
     * entries holds the marker in the lock key (SharedScripts), so SET NX refuses it and the grant path
     * reads nothing more; only a refusal by the marker reads the shared record (and marks {@code w} =
     * 1, which shared releases look for), and where only fair mutex waiters live, the mutex takes the
     * name (it does not wait in their queue).
     */
    static final Script ACQUIRE = new Script("acquire", HOLDS + GRANT_OF + GRANT_VALUE + """
            if redis.call('SET', KEYS[1], value, 'NX', 'PXAT', px) then
              if ARGV[5] ~= '' then
                redis.call('ZREM', KEYS[4], ARGV[4])
                redis.call('HDEL', KEYS[5], ARGV[4])
              end
              return {1, redis.call('HINCRBY', KEYS[2], 'n', 1), expiry}
            end
            local left
            local mark = '1'
            local held = redis.call('GET', KEYS[1])
            if held == '\\n' then
            """ + SharedScripts.LIB + """
              local s = load(KEYS[3], nowMs, false)
              if s.live and s.kind ~= 'EXCLUSIVE' then return {2, s.kind, s.limit} end
              for _, h in pairs(s.holders) do
                if not left or h.expiry - nowMs < left then left = h.expiry - nowMs end
              end
              if not left then
                redis.call('SET', KEYS[1], value, 'PXAT', px)
                if ARGV[5] ~= '' then
                  redis.call('ZREM', KEYS[4], ARGV[4])
                  redis.call('HDEL', KEYS[5], ARGV[4])
                end
                return {1, redis.call('HINCRBY', KEYS[2], 'n', 1), expiry}
              end
            else
              left = redis.call('PTTL', KEYS[1])
              if ARGV[4] ~= '' then
                if ARGV[8] ~= '' and holds(held, ARGV[8]) then
                  return {3, tonumber(redis.call('HGET', KEYS[2], 'n')), nowMs + (left > 0 and left or 0)}
                end
                local keep = (left > 0 and left or 0) + tonumber(ARGV[6])
                redis.call('ZADD', KEYS[4], 'NX', ARGV[5] ~= '' and ARGV[5] or ms, ARGV[4])
                redis.call('PEXPIRE', KEYS[4], keep)
                if ARGV[7] ~= '' then
                  redis.call('HSET', KEYS[5], ARGV[4], ARGV[1] .. '\\n' .. ARGV[2] .. '\\n' .. ARGV[3])
                  redis.call('PEXPIRE', KEYS[5], keep)
                  return {0, left, nowMs, 1}
                end
                if redis.call('PEXPIRE', KEYS[5], keep) == 1 then return {0, left, nowMs, 2} end
                return {0, left, nowMs}
              end
              if held then mark = string.sub(held, 1, (string.find(held, '\\n', 1, true) or (#held + 1)) - 1) end
            end
            if redis.call('HGET', KEYS[2], 'w') ~= mark then
              redis.call('HSET', KEYS[2], 'w', mark)
            end
            return {0, left, nowMs}
            """);

    /**
     * KEYS: lock, token record, shared record (unused), wake-up queue, queued grants. ARGV: the new lease id, ttl (ms),
     * metadata JSON, waiter id, the waiter's place ('' when none), as ACQUIRE's, then the lease id handing
     * over. Only when the lock's value is a grant of that lease (HOLDS: a key past its expiry reads as
     * absent, and the shared marker holds no lease) is it overwritten with the new lease's grant, as
     * ACQUIRE writes it, and the token drawn: the key is never absent in between, so nobody else can take
     * the name. A contention mark naming the old lease moves to the new one, so that the new holder's
     * release publishes to the waiters that refused attempts saw; the wake-up queue stays for that release
     * too, less this client (its waiter is the one granted, as in ACQUIRE). Nothing is published: nothing
     * was freed. Returns ACQUIRE's {1, token, expiry ms}, or, writing nothing, {0, the holder's PTTL (ms;
     * -1 when free or shared)}.
     */
    static final Script HAND_OVER = new Script("handOver", HOLDS + GRANT_OF + """
            local held = redis.call('GET', KEYS[1])
            if not holds(held, ARGV[6]) then
              return {0, (held and held ~= '\\n') and redis.call('PTTL', KEYS[1]) or -1}
            end
            """ + GRANT_VALUE + """
            redis.call('SET', KEYS[1], value, 'PXAT', px)
            if ARGV[5] ~= '' then
              redis.call('ZREM', KEYS[4], ARGV[4])
              redis.call('HDEL', KEYS[5], ARGV[4])
            end
            if redis.call('HGET', KEYS[2], 'w') == ARGV[6] then redis.call('HSET', KEYS[2], 'w', ARGV[1]) end
            return {1, redis.call('HINCRBY', KEYS[2], 'n', 1), expiry}
            """);

    /**
     * KEYS: lock 1, token record 1, shared record 1, lock 2, ... ARGV: lease id, ttl (ms), token period
     * (µs, 0 for none), for each lease in the order of KEYS. Returns {now ms, token 1, token 2, ...}
     * where a token of 0 means rejected. A lease is renewed only if GET of its lock holds its lease
     * id (HOLDS; PEXPIREAT keeps the value, so metadata and grant time stay): a key past its expiry
     * reads as absent, so an expired lease is rejected even when nobody took the lock. With a token
     * period, a token at least that old is replaced by the next one. Where the lock holds the shared
     * marker, the lease is looked up among the live shared grants instead, and renewed there.
     */
    static final Script RENEW = new Script("renew", NOW + HOLDS + ISSUED_AT + SharedScripts.LIB + """
            local result = {nowMs}
            local expiries = {}
            for i = 1, #KEYS / 3 do
              local lock, record = KEYS[3 * i - 2], KEYS[3 * i - 1]
              local token = 0
              local value = redis.call('GET', lock)
              if holds(value, ARGV[3 * i - 2]) then
                local period = tonumber(ARGV[3 * i])
                local issued
                if period > 0 then
                  issued = redis.call('HMGET', record, 'n', 't')
                else
                  issued = {redis.call('HGET', record, 'n')}
                end
                if issued[1] then
                  token = tonumber(issued[1])
                  local ttl = ARGV[3 * i - 1]
                  local expiry = expiries[ttl]
                  if not expiry then
                    expiry = string.format('%.0f', nowMs + tonumber(ttl))
                    expiries[ttl] = expiry
                  end
                  redis.call('PEXPIREAT', lock, expiry)
                  if period > 0 and nowUs - issuedAt(value, issued[2]) >= period then
                    token = redis.call('HINCRBY', record, 'n', 1)
                    redis.call('HSET', record, 't', string.format('%.0f', nowUs))
                  end
                end
              elseif value == MARK then
                local shared, field = KEYS[3 * i], 'h:' .. ARGV[3 * i - 2]
                local h = holder(redis.call('HGET', shared, field) or '')
                if h and h.expiry > nowMs then
                  h.expiry = nowMs + tonumber(ARGV[3 * i - 1])
                  local period = tonumber(ARGV[3 * i])
                  if period > 0 and nowUs - h.issued >= period then
                    h.token = redis.call('HINCRBY', record, 'n', 1)
                    h.issued = nowUs
                  end
                  token = h.token
                  redis.call('HSET', shared, field, holderValue(h))
                  raise(lock, shared, h.expiry)
                end
              end
              result[i + 1] = token
            end
            return result
            """);

    /**
     * KEYS: lock, token record, shared record, wake-up queue, queued grants. ARGV: lease id, channel, name,
     * wake channel prefix, the releasing client's waiter id. Deletes the lock only if the lease holds it,
     * then grants the name to the first queued waiter that asked for a grant and still listens
     * ({@code GRANT_NEXT}: the name is held again before the script ends, so it is never free, and a mark
     * naming this lease moves to the new holder's, whose release then publishes), or wakes the first
     * waiter that asked none; and, when nothing was granted and an attempt was refused during this grant
     * (the record's mark is this lease id, or 1 from a shared refusal), publishes the name so that waiters
     * wake: every client's subscription hears every message on the channel, so an uncontended release
     * publishes nothing. Returns 1 when this call freed it. The record stays; the metadata goes with the
     * lock's value. A lease that holds nothing and is the one the releasing client's grant request was
     * written with withdraws that request and the client's place (its waiter stopped waiting); an id that
     * does not hold the mutex may also be a shared grant's or a waiter's (SharedScripts.RELEASE).
     */
    static final Script RELEASE = new Script("release", HOLDS + GRANT_OF + GRANT_NEXT + """
            local v = redis.call('GET', KEYS[1])
            if holds(v, ARGV[1]) then
              redis.call('DEL', KEYS[1])
              local granted = grantNext(KEYS[1], KEYS[2], KEYS[4], KEYS[5], ARGV[4], ARGV[3])
              local w = redis.call('HGET', KEYS[2], 'w')
              if granted then
                if w == ARGV[1] then redis.call('HSET', KEYS[2], 'w', granted) end
              elseif w == ARGV[1] or w == '1' then
                redis.call('PUBLISH', ARGV[2], ARGV[3])
                -- a shared refusal's mark outlives mutex grants: drop it once no shared entry lives
                if w == '1' and redis.call('EXISTS', KEYS[3]) == 0 then redis.call('HSET', KEYS[2], 'w', '0') end
              end
              return 1
            end
            if ARGV[5] ~= '' and holds(redis.call('HGET', KEYS[5], ARGV[5]), ARGV[1]) then
              redis.call('HDEL', KEYS[5], ARGV[5])
              redis.call('ZREM', KEYS[4], ARGV[5])
            end
            """ + SharedScripts.RELEASE);

    /**
     * KEYS: lock 1, token record 1, shared record 1, ... Returns {now ms, then for each name: the lock's
     * value ('' when free), expiry ms (0 when free, -1 when the key has no expiry), last token (0 when
     * none), whether a record exists (0/1), and the shared grants: {} for a mutex, else {kind, limit,
     * then lease id and value of each live grant}}. PEXPIRETIME (Redis 7) reads the exact expiry;
     * older servers get now + PTTL. Reads only: expired shared entries are skipped, not dropped.
     */
    static final Script INSPECT = new Script("inspect", NOW + SharedScripts.LIB + """
            local result = {nowMs}
            for i = 1, #KEYS / 3 do
              local lock = KEYS[3 * i - 2]
              local lease = redis.call('GET', lock)
              local expiry = 0
              local shared = {}
              if lease == MARK then
                local s = load(KEYS[3 * i], nowMs, false)
                shared = {s.kind, s.limit}
                for id, h in pairs(s.holders) do
                  shared[#shared + 1] = id
                  shared[#shared + 1] = h.raw
                end
              elseif lease then
                expiry = redis.pcall('PEXPIRETIME', lock)
                if type(expiry) ~= 'number' then
                  local pttl = redis.call('PTTL', lock)
                  expiry = pttl >= 0 and nowMs + pttl or -1
                end
              else
                lease = ''
              end
              local token = redis.call('HGET', KEYS[3 * i - 1], 'n')
              local known = (lease ~= '' or token) and 1 or 0
              result[#result + 1] = lease
              result[#result + 1] = expiry
              result[#result + 1] = tonumber(token or 0)
              result[#result + 1] = known
              result[#result + 1] = shared
            end
            return result
            """);

    /** A number in a script's reply. */
    static long number(List<Object> reply, int index) {
        Object value = reply.get(index);
        if (value instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected script reply " + reply + " at " + index);
    }

    /** Milliseconds, rounded up: Redis expiries have millisecond resolution, and a lease may outlive its TTL on the server, never the reverse. */
    static long millis(Duration d) {
        long ms = d.toMillis();
        return Math.max(1, d.minusMillis(ms).isZero() ? ms : ms + 1);
    }

    static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }

    private Scripts() {}

    /** A script and its SHA-1, the name {@code EVALSHA} knows it by. */
    record Script(String name, String source, String sha1) {
        Script(String name, String source) {
            this(name, source, sha1(source));
        }

        private static String sha1(String source) {
            try {
                return HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-1 is missing from this JVM", e);
            }
        }
    }
}
