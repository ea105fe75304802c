package io.fencelock.redis;

import io.fencelock.Capability;
import io.fencelock.redis.RedisLockBackend.Deployment;
import io.fencelock.spi.Redaction;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the server says about itself at start-up, and so the capabilities: its version ({@code PXAT}
 * needs 6.2), on a single server its replication (a replica is refused; a master with replicas is a
 * replicated deployment) and persistence settings (AOF {@code always} makes tokens durable), and its
 * eviction policy (one that may evict any key is refused, one that evicts keys with an expiry gets a warning).
 *
 * @param capabilities what the backend declares
 * @param persistence  the persistence settings in words, for {@code toString()}
 */
record RedisServerFacts(Set<Capability> capabilities, String persistence) {
    private static final Logger log = LoggerFactory.getLogger(RedisServerFacts.class);

    /**
     * Reads them in one pipelined round trip: {@code INFO server}, {@code INFO replication}, {@code CONFIG
     * GET append*} and {@code CONFIG GET maxmemory*}. Throws {@link IllegalStateException} for a server that
     * is too old, for a single server that is a replica, and for one that may evict any key (token records too).
     */
    static RedisServerFacts read(CommandConnection connection, Deployment deployment, String where) {
        CommandConnection.Link link = connection.current();
        var info = new CommandConnection.Call<>(
                link, link.commands().info("server").toCompletableFuture());
        var replication = new CommandConnection.Call<>(
                link, link.commands().info("replication").toCompletableFuture());
        var append = new CommandConnection.Call<>(link, configGet(link, deployment, "append*", where));
        var memory = new CommandConnection.Call<>(link, configGet(link, deployment, "maxmemory*", where));
        String version = versionOf(connection.await("start-up check", "", info));
        int[] parsed = parseVersion(version);
        if (parsed != null && Arrays.compare(parsed, Scripts.MIN_VERSION) < 0) {
            throw new IllegalStateException("Redis " + version + " on " + where + " is too old: fencelock needs Redis "
                    + Scripts.MIN_VERSION[0] + "." + Scripts.MIN_VERSION[1] + " or later (SET ... PXAT)");
        }
        Map<String, String> replicationInfo = fields(connection.await("start-up check", "", replication));
        if (deployment == Deployment.STANDALONE && "slave".equals(replicationInfo.get("role"))) {
            // a read-only replica refuses every grant; a writable one (replica-read-only no) would take grants that
            // its master never sees and its next resynchronisation discards: locks and tokens lost
            throw new IllegalStateException("Redis on " + where + " is a replica: fencelock writes its locks on a "
                    + "master (name the master's address, or the Sentinel's with redis-sentinel://)");
        }
        int replicas = parseCount(replicationInfo.get("connected_slaves"));
        Map<String, String> aof = connection.await("start-up check", "", append);
        Map<String, String> eviction = connection.await("start-up check", "", memory);
        EnumSet<Capability> declared = EnumSet.of(
                Capability.FENCING,
                Capability.SERVER_TIME,
                Capability.WAKE_ON_RELEASE,
                Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD,
                Capability.METADATA,
                Capability.EXTENDABLE_TTL,
                Capability.SHARED_LOCKS, // one script reads and writes all of a name's keys, in one slot
                Capability.FAIR_ORDER, // queue places from the name's own sequence, in that script
                Capability.HAND_OVER); // one script checks the holder and overwrites its grant
        if (deployment != Deployment.CLUSTER) {
            // the release script grants the first queued waiter subscribed on the server that runs it: a single
            // server, or the master Sentinel names, where every client of that deployment subscribes; a
            // Cluster client subscribes on one node, so a release on the others could only wake it
            declared.add(Capability.GRANT_ON_RELEASE);
        }
        String persistence;
        if (deployment == Deployment.STANDALONE && replicas > 0) {
            // replication is asynchronous: a replica promoted by any failover (Sentinel's, an operator's, a
            // platform's) may lack the last grants, as in a Sentinel deployment
            persistence = "a master with " + replicas + " replica(s) at start-up: a failover can lose locks and tokens";
            log.warn(
                    "fencelock: Redis at {} has {} replica(s): a failover to one of them can lose the last grants and "
                            + "tokens, so LINEARIZABLE and DURABLE_TOKENS are not declared. A server without replicas "
                            + "(AOF appendfsync always for durable tokens) declares them.",
                    where,
                    replicas);
        } else if (deployment == Deployment.STANDALONE) {
            declared.add(Capability.LINEARIZABLE); // one server executes one script at a time
            if (aof == null) {
                persistence = "persistence unknown (CONFIG GET refused), so tokens are not durable";
            } else {
                persistence = "appendonly=" + aof.get("appendonly") + " appendfsync=" + aof.get("appendfsync");
                if ("yes".equals(aof.get("appendonly")) && "always".equals(aof.get("appendfsync"))) {
                    declared.add(Capability.DURABLE_TOKENS); // every grant is in the fsynced AOF before the reply
                }
            }
        } else {
            persistence = "replicated: a failover can lose locks and tokens";
        }
        String policy = eviction == null ? null : eviction.get("maxmemory-policy");
        boolean evicts = eviction != null
                && !"0".equals(eviction.getOrDefault("maxmemory", "0"))
                && !"noeviction".equals(policy);
        if (evicts && policy != null && policy.startsWith("allkeys-")) {
            // a token record has no expiry, so only an allkeys policy evicts it: the name's tokens would start again
            throw new IllegalStateException("Redis on " + where
                    + " evicts any key under memory pressure (maxmemory-policy "
                    + policy + "): an evicted token record starts its name's tokens again, so a token could be issued"
                    + " twice and a fenced resource take a stale holder's writes. Use maxmemory-policy noeviction for"
                    + " the locks' keys (a volatile-* policy evicts only keys with an expiry: a lock may then be lost"
                    + " early, a token never)");
        }
        if (evicts) {
            log.warn(
                    "fencelock: Redis at {} evicts keys with an expiry under memory pressure (maxmemory-policy {}): an"
                            + " evicted lock is lost before its TTL, and its holder learns it at its next renewal (its"
                            + " token, which is never evicted, still fences it). Use maxmemory-policy noeviction for locks.",
                    where,
                    policy);
        }
        log.debug(
                "fencelock: Redis {} at {} ({}, {}): capabilities {}",
                version,
                where,
                deployment,
                persistence,
                declared);
        return new RedisServerFacts(Collections.unmodifiableSet(declared), persistence);
    }

    /** CONFIG GET, or null when the server refuses it (renamed, ACL, managed services). */
    private static CompletableFuture<Map<String, String>> configGet(
            CommandConnection.Link link, Deployment deployment, String pattern, String where) {
        if (deployment != Deployment.STANDALONE && !pattern.startsWith("maxmemory")) {
            return CompletableFuture.completedFuture(null);
        }
        return link.commands().configGet(pattern).toCompletableFuture().exceptionally(e -> {
            if (RedisFailures.unwrap(e) instanceof RedisCommandExecutionException refused) {
                log.info(
                        "fencelock: CONFIG GET {} refused by {} ({}); assuming the least",
                        pattern,
                        where,
                        Redaction.message(refused.getMessage()));
                return null;
            }
            throw new CompletionException(RedisFailures.unwrap(e));
        });
    }

    private static String versionOf(String info) {
        return fields(info).getOrDefault("redis_version", "(unknown version)");
    }

    /** The {@code field:value} lines of an {@code INFO} section. */
    private static Map<String, String> fields(String info) {
        Map<String, String> fields = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    /** A count INFO gives; 0 when it gives none. */
    private static int parseCount(String value) {
        try {
            return value == null ? 0 : Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static int[] parseVersion(String version) {
        String[] parts = version.split("\\.");
        try {
            return new int[] {Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : 0};
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
