package io.fencelock.redis;

import io.fencelock.Capability;
import io.fencelock.redis.RedisLockBackend.Deployment;
import io.fencelock.spi.Redaction;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the server says about itself at start-up, and so the capabilities: its version ({@code PXAT}
 * needs 6.2), on a single server its persistence settings (AOF {@code always} makes tokens durable),
 * and its eviction policy (one that evicts keys gets a warning).
 *
 * @param capabilities what the backend declares
 * @param persistence  the persistence settings in words, for {@code toString()}
 */
record RedisServerFacts(Set<Capability> capabilities, String persistence) {
    private static final Logger log = LoggerFactory.getLogger(RedisServerFacts.class);

    /**
     * Reads them in one pipelined round trip: {@code INFO server}, {@code CONFIG GET append*} and
     * {@code CONFIG GET maxmemory*}. Throws {@link IllegalStateException} for a server that is too old.
     */
    static RedisServerFacts read(CommandConnection connection, Deployment deployment, String where) {
        CommandConnection.Link link = connection.current();
        var info = new CommandConnection.Call<>(
                link, link.commands().info("server").toCompletableFuture());
        var append = new CommandConnection.Call<>(link, configGet(link, deployment, "append*", where));
        var memory = new CommandConnection.Call<>(link, configGet(link, deployment, "maxmemory*", where));
        String version = versionOf(connection.await("start-up check", "", info));
        int[] parsed = parseVersion(version);
        if (parsed != null && Arrays.compare(parsed, Scripts.MIN_VERSION) < 0) {
            throw new IllegalStateException("Redis " + version + " on " + where + " is too old: fencelock needs Redis "
                    + Scripts.MIN_VERSION[0] + "." + Scripts.MIN_VERSION[1] + " or later (SET ... PXAT)");
        }
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
        if (deployment == Deployment.STANDALONE) {
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
        if (eviction != null
                && !"0".equals(eviction.getOrDefault("maxmemory", "0"))
                && !"noeviction".equals(eviction.get("maxmemory-policy"))) {
            log.warn(
                    "fencelock: Redis at {} evicts keys under memory pressure (maxmemory-policy {}): an evicted lock is "
                            + "lost early and an evicted token record restarts its tokens. Use maxmemory-policy noeviction for locks.",
                    where,
                    eviction.get("maxmemory-policy"));
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
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length()).trim();
            }
        }
        return "(unknown version)";
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
