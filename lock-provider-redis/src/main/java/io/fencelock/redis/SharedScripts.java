package io.fencelock.redis;

import io.fencelock.redis.Scripts.Script;

/**
 * The Lua of shared grants (semaphores, read-write locks, fair waiting), beside the mutex's
 * {@link Scripts}. A name's shared grants and waiters live in one hash, its shared record
 * ({@link KeyLayout#sharedKey}):
 * <ul>
 *   <li>{@code h:<lease id>} a grant: {@code MODE permits token expiry grantMs issuedUs LF metadata}
 *       (expiry and grant time in server milliseconds, the token's issue time in microseconds);</li>
 *   <li>{@code w:<waiter id>} a waiter: {@code MODE place expiry}, its place in the fair queue (0 when
 *       not queued: a waiting writer's intent alone); places come from {@code q}, the record's sequence,
 *       so the order of places is the order of first arrival;</li>
 *   <li>{@code k}, {@code l}: the kind (EXCLUSIVE, PERMITS or READ) and the semaphore's N of what lives;
 *       {@code x}: the latest expiry of a live entry, which is also the record's Redis expiry.</li>
 * </ul>
 * While anything of the record lives, the lock key holds the marker, a lone line feed (no mutex value
 * is one), with the same expiry, unless an ordinary mutex holds it (then only fair mutex waiters
 * live). So the mutex's {@code SET NX} refuses a shared name by itself and looks at the record only
 * after a refusal: the mutex's grant path costs no extra command. Entries past their expiry count
 * as gone and are dropped when a script meets them; a record without live entries is deleted, and
 * the expiries delete what a crashed client leaves.
 */
final class SharedScripts {
    /**
     * The functions the scripts share: reading the record (live entries only), writing a grant back,
     * and moving the record's and the marker's expiry to the latest live entry's.
     */
    static final String LIB = """
            local MARK = '\\n'
            local function fmt(n) return string.format('%.0f', n) end
            local function holder(v)
              local mode, permits, token, expiry, granted, issued, meta =
                string.match(v, '^(%u+) (%d+) (%d+) (%d+) (%d+) (%d+)\\n(.*)$')
              if not mode then return nil end
              return {mode = mode, permits = tonumber(permits), token = tonumber(token), expiry = tonumber(expiry),
                granted = granted, issued = tonumber(issued), meta = meta, raw = v}
            end
            local function holderValue(h)
              return h.mode .. ' ' .. h.permits .. ' ' .. fmt(h.token) .. ' ' .. fmt(h.expiry) .. ' ' .. h.granted
                .. ' ' .. fmt(h.issued) .. '\\n' .. h.meta
            end
            local function load(key, nowMs, prune)
              local all = redis.call('HGETALL', key)
              local s = {holders = {}, held = 0, waiters = {}, kind = 'EXCLUSIVE', limit = 0, live = false}
              for i = 1, #all, 2 do
                local f, v = all[i], all[i + 1]
                local tag, e = string.sub(f, 1, 2), nil
                if tag == 'h:' then
                  e = holder(v)
                elseif tag == 'w:' then
                  local mode, place, expiry = string.match(v, '^(%u+) (%d+) (%d+)$')
                  if mode then e = {mode = mode, place = tonumber(place), expiry = tonumber(expiry)} end
                elseif f == 'k' then
                  s.kind = v
                elseif f == 'l' then
                  s.limit = tonumber(v)
                end
                if e and e.expiry > nowMs then
                  s.live = true
                  if tag == 'h:' then
                    s.holders[string.sub(f, 3)] = e
                    s.held = s.held + 1
                  else
                    s.waiters[string.sub(f, 3)] = e
                  end
                elseif (tag == 'h:' or tag == 'w:') and prune then
                  redis.call('HDEL', key, f)
                end
              end
              return s
            end
            local function settle(lock, key, lockValue, s)
              local x = 0
              for _, e in pairs(s.holders) do if e.expiry > x then x = e.expiry end end
              for _, e in pairs(s.waiters) do if e.expiry > x then x = e.expiry end end
              if x == 0 then
                redis.call('DEL', key)
                if lockValue == MARK then redis.call('DEL', lock) end
                return false
              end
              x = fmt(x)
              redis.call('HSET', key, 'x', x)
              redis.call('PEXPIREAT', key, x)
              if not lockValue or lockValue == MARK then redis.call('SET', lock, MARK, 'PXAT', x) end
              return true
            end
            local function raise(lock, key, expiry)
              if expiry > tonumber(redis.call('HGET', key, 'x') or 0) then
                local at = fmt(expiry)
                redis.call('HSET', key, 'x', at)
                redis.call('PEXPIREAT', key, at)
                redis.call('PEXPIREAT', lock, at)
              end
            end
            """;

    /**
     * KEYS: lock, token record, shared record. ARGV: lease id, ttl (ms), mode, permits, limit, waiter
     * id, waits (0/1), fair (0/1), metadata JSON. Returns {1, token, expiry ms} when granted, {0, time
     * until the earliest expiry that may change the answer (ms, -1 if none), now ms} when refused, and
     * {2, recorded kind, recorded limit} when the name is another kind of lock (nothing changed).
     * As SharedGrants of the in-memory backend: a reader waits behind any writer's intent but one
     * queued after its own place; a fair request waits behind every live place taken before its own.
     * A refusal marks the token record ({@code w} = 1), so that releases publish.
     */
    static final Script ACQUIRE = new Script("acquireShared", Scripts.NOW + LIB + """
            local lease, ttl, mode, permits, limit, me = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]),
              tonumber(ARGV[5]), ARGV[6]
            local fair = ARGV[8] == '1'
            local kind = mode == 'WRITE' and 'READ' or mode
            local lockValue = redis.call('GET', KEYS[1])
            local mutexLeft
            if lockValue and lockValue ~= MARK then
              if kind ~= 'EXCLUSIVE' then return {2, 'EXCLUSIVE', 0} end
              mutexLeft = redis.call('PTTL', KEYS[1]) -- a fair mutex request still takes its place
            end
            local s = load(KEYS[3], nowMs, true)
            if s.live and (s.kind ~= kind or s.limit ~= limit) then return {2, s.kind, s.limit} end
            local mine = s.waiters[me]
            local myPlace = mine and mine.place or 0
            local room = mutexLeft == nil
            if room and mode == 'PERMITS' then
              local sum = permits
              for _, h in pairs(s.holders) do sum = sum + h.permits end
              room = sum <= limit
            elseif room and mode == 'READ' then
              for _, h in pairs(s.holders) do if h.mode == 'WRITE' then room = false end end
              for id, w in pairs(s.waiters) do
                if id ~= me and w.mode == 'WRITE' and (w.place == 0 or myPlace == 0 or w.place < myPlace) then
                  room = false
                end
              end
            elseif room then
              room = s.held == 0
            end
            if room and fair then
              for id, w in pairs(s.waiters) do
                if id ~= me and w.place > 0 and (myPlace == 0 or w.place < myPlace) then room = false end
              end
            end
            if room then
              local token = redis.call('HINCRBY', KEYS[2], 'n', 1)
              local h = {mode = mode, permits = permits, token = token, expiry = nowMs + ttl, granted = fmt(nowMs),
                issued = nowUs, meta = ARGV[9]}
              redis.call('HSET', KEYS[3], 'h:' .. lease, holderValue(h), 'k', kind, 'l', ARGV[5])
              if mine then
                redis.call('HDEL', KEYS[3], 'w:' .. me)
                s.waiters[me] = nil
              end
              s.holders[lease] = h
              settle(KEYS[1], KEYS[3], lockValue, s)
              return {1, token, h.expiry}
            end
            if ARGV[7] == '1' and (mode == 'WRITE' or fair) then
              if fair and myPlace == 0 then myPlace = redis.call('HINCRBY', KEYS[3], 'q', 1) end
              local w = {mode = mode, place = myPlace, expiry = nowMs + ttl}
              redis.call('HSET', KEYS[3], 'w:' .. me, mode .. ' ' .. myPlace .. ' ' .. fmt(w.expiry), 'k', kind,
                'l', ARGV[5])
              s.waiters[me] = w
              settle(KEYS[1], KEYS[3], lockValue, s)
            end
            if redis.call('HGET', KEYS[2], 'w') ~= '1' then
              redis.call('HSET', KEYS[2], 'w', '1')
            end
            local soonest = mutexLeft and mutexLeft >= 0 and mutexLeft or nil
            for _, h in pairs(s.holders) do
              if not soonest or h.expiry - nowMs < soonest then soonest = h.expiry - nowMs end
            end
            for _, w in pairs(s.waiters) do
              if not soonest or w.expiry - nowMs < soonest then soonest = w.expiry - nowMs end
            end
            return {0, soonest or -1, nowMs}
            """);

    /**
     * KEYS: lock, token record, shared record. ARGV: lease id, ttl (ms), channel, name. Turns the
     * lease's live write grant (or read grant: a retried downgrade) into a read grant expiring ttl
     * from now, keeping its token, in one step: the name is never free in between. Publishes when
     * someone was refused (readers may enter now). Returns {1, token, expiry ms}, or {0} when the
     * lease holds no such grant (nothing changes).
     */
    static final Script DOWNGRADE = new Script("downgrade", Scripts.NOW + LIB + """
            if redis.call('GET', KEYS[1]) ~= MARK then return {0} end
            local h = holder(redis.call('HGET', KEYS[3], 'h:' .. ARGV[1]) or '')
            if not h or h.expiry <= nowMs or (h.mode ~= 'WRITE' and h.mode ~= 'READ') then return {0} end
            h.mode = 'READ'
            h.expiry = nowMs + tonumber(ARGV[2])
            redis.call('HSET', KEYS[3], 'h:' .. ARGV[1], holderValue(h))
            raise(KEYS[1], KEYS[3], h.expiry)
            if redis.call('HGET', KEYS[2], 'w') == '1' then
              redis.call('PUBLISH', ARGV[3], ARGV[4])
            end
            return {1, h.token, h.expiry}
            """);

    /**
     * The part of the release script for an id that is not the mutex's holder (KEYS and ARGV as
     * there; {@code v} is the lock's value): frees that shared grant, or withdraws that waiter's intent
     * and queue place, and publishes when someone was refused. Returns 1 when a live grant was freed.
     */
    static final String RELEASE = """
            local found = redis.call('HMGET', KEYS[3], 'h:' .. ARGV[1], 'w:' .. ARGV[1])
            if not found[1] and not found[2] then return 0 end
            """ + Scripts.NOW + LIB + """
            local s = load(KEYS[3], nowMs, true)
            local freed = s.holders[ARGV[1]] and 1 or 0
            s.holders[ARGV[1]] = nil
            s.waiters[ARGV[1]] = nil
            redis.call('HDEL', KEYS[3], 'h:' .. ARGV[1], 'w:' .. ARGV[1])
            local live = settle(KEYS[1], KEYS[3], v, s)
            if redis.call('HGET', KEYS[2], 'w') == '1' then
              redis.call('PUBLISH', ARGV[2], ARGV[3])
              if not live and (not v or v == MARK) then redis.call('HSET', KEYS[2], 'w', '0') end
            end
            return freed
            """;

    private SharedScripts() {}
}
