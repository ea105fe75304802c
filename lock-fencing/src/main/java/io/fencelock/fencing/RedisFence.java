package io.fencelock.fencing;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Fenced Redis writes ({@code SET}, {@code HSET}, {@code DEL}): each is one Lua script, one round
 * trip, that compares the write's token with the key's token and applies the write and the new
 * token only if the write's token is at least as high. The key's token lives in a companion key,
 * {@link #tokenKey(String)}, in the same Cluster slot; it outlives a fenced {@code DEL}, so a stale
 * writer cannot recreate a deleted key.
 *
 * <pre>{@code
 * RedisFence fence = RedisFence.of(connection.sync());          // Lettuce, standalone or Cluster
 * fence.set("report:today", lease.fencingToken(), json);       // StaleTokenException if stale
 * }</pre>
 *
 * <p>Tokens are compared as decimal strings, exact over the whole range of {@code long} (Lua's
 * numbers are doubles). Needs {@code io.lettuce:lettuce-core} on the class path. Thread-safe as the
 * Lettuce connection is.
 */
public final class RedisFence {
    /** Appended to a key (wrapped in a hash tag when the key has none) to name its token key. */
    public static final String TOKEN_KEY_SUFFIX = ":fence-token";

    // KEYS[1] the data key, KEYS[2] its token key; ARGV[1] the token, ARGV[2] the operation, then its arguments.
    // Decimal strings without leading zeros compare as numbers by length, then character by character.
    // The token is stored after the write, so a write that fails (WRONGTYPE) leaves everything as it was.
    private static final String SCRIPT = String.join(
            "\n",
            "local offered = ARGV[1]",
            "local current = redis.call('GET', KEYS[2])",
            "if current and (#offered < #current or (#offered == #current and offered < current)) then",
            "  return {0, current}",
            "end",
            "local op = ARGV[2]",
            "local result",
            "if op == 'set' then",
            "  redis.call('SET', KEYS[1], ARGV[3])",
            "  result = 1",
            "elseif op == 'hset' then",
            "  result = redis.call('HSET', KEYS[1], unpack(ARGV, 3))",
            "elseif op == 'del' then",
            "  result = redis.call('DEL', KEYS[1])",
            "else",
            "  return redis.error_reply('unknown fenced operation ' .. op)",
            "end",
            "redis.call('SET', KEYS[2], offered)",
            "return {1, offered, result}");
    /** Lua's unpack takes at most about 8,000 values; HSET gets two per field. */
    static final int MAX_HSET_FIELDS = 3_000;

    private final RedisScriptingCommands<String, String> redis;
    private final String sha;

    private RedisFence(RedisScriptingCommands<String, String> redis) {
        this.redis = redis;
        this.sha = redis.digest(SCRIPT); // computed locally
    }

    /** A fence on a Lettuce connection's synchronous commands ({@code connection.sync()}), standalone or Cluster. */
    public static RedisFence of(RedisScriptingCommands<String, String> redis) {
        return new RedisFence(Checks.notNull("redis commands", redis));
    }

    /** {@code SET key value} if {@code token} is at least the key's token; then the key's token is {@code token}. */
    public void set(String key, long token, String value) {
        run(key, token, "set", Checks.notNull("value", value));
    }

    /**
     * {@code HSET key field value ...} if {@code token} is at least the key's token.
     *
     * @return the number of fields added (as HSET answers)
     */
    public long hset(String key, long token, Map<String, String> fields) {
        Checks.notNull("fields", fields);
        if (fields.isEmpty() || fields.size() > MAX_HSET_FIELDS) {
            throw new IllegalArgumentException("fields: " + fields.size() + " entries breaks the rule: 1 to "
                    + MAX_HSET_FIELDS + " fields per fenced HSET");
        }
        List<String> args = new ArrayList<>(2 * fields.size());
        fields.forEach((field, value) -> {
            args.add(Checks.notNull("field name", field));
            args.add(Checks.notNull("value of field " + Checks.quote(field), value));
        });
        return run(key, token, "hset", args.toArray(String[]::new));
    }

    /**
     * {@code DEL key} if {@code token} is at least the key's token; the key's token stays (as
     * {@code token}), so later writes still need a token at least as high.
     *
     * @return the number of keys deleted (0 or 1)
     */
    public long del(String key, long token) {
        return run(key, token, "del");
    }

    /** The key's token, empty when no fenced write reached it. */
    public OptionalLong currentToken(String key) {
        Checks.key("key", key, Integer.MAX_VALUE);
        String value = redis.eval("return redis.call('GET', KEYS[1])", ScriptOutputType.VALUE, tokenKey(key));
        return value == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(value));
    }

    /**
     * The key that holds {@code key}'s token: {@code key + ":fence-token"} when {@code key} has a
     * Cluster hash tag, else {@code "{" + key + "}:fence-token"}, which hashes to {@code key}'s slot.
     * (A key whose braces make no hash tag but contain a '}' gets the plain suffix; in a Cluster give
     * such keys a hash tag.)
     */
    public static String tokenKey(String key) {
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        boolean hasTag = open >= 0 && close > open + 1;
        return hasTag || key.indexOf('}') >= 0 ? key + TOKEN_KEY_SUFFIX : "{" + key + "}" + TOKEN_KEY_SUFFIX;
    }

    private long run(String key, long token, String op, String... opArgs) {
        Checks.key("key", key, Integer.MAX_VALUE);
        Checks.token(token);
        String[] keys = {key, tokenKey(key)};
        String[] args = new String[2 + opArgs.length];
        args[0] = Long.toString(token);
        args[1] = op;
        System.arraycopy(opArgs, 0, args, 2, opArgs.length);
        List<Object> reply;
        try {
            reply = redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
        } catch (RedisNoScriptException e) {
            reply = redis.eval(SCRIPT, ScriptOutputType.MULTI, keys, args); // loads it for the next call
        }
        if (((Long) reply.get(0)) == 0) {
            throw new StaleTokenException(key, token, Long.parseLong((String) reply.get(1)));
        }
        return (Long) reply.get(2);
    }

    @Override
    public String toString() {
        return "RedisFence[script " + sha + "]";
    }
}
