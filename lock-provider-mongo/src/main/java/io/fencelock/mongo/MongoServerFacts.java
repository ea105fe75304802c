package io.fencelock.mongo;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoDatabase;
import io.fencelock.Capability;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the server says about itself at start-up.
 *
 * @param product    e.g. "MongoDB 7.0.14" or "mongo-java-server (reports 5.0.0)"
 * @param topology   "replica set rs0", "standalone", "mongos"
 * @param persistent whether serverStatus reports persistent storage (null when it cannot be read)
 * @param inJvm      whether this is the in-JVM mongo-java-server, which keeps nothing across a restart
 */
record MongoServerFacts(String product, String topology, Boolean persistent, boolean inJvm) {
    private static final Logger log = LoggerFactory.getLogger(MongoServerFacts.class);

    /** The DURABLE_TOKENS rule: a real server on persistent storage, written with w:majority, j:true. */
    boolean durable() {
        return !inJvm && Boolean.TRUE.equals(persistent);
    }

    /** What a backend on this server declares. */
    Set<Capability> capabilities() {
        EnumSet<Capability> caps = EnumSet.of(
                Capability.FENCING,
                Capability.SERVER_TIME,
                Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD,
                Capability.LINEARIZABLE,
                Capability.METADATA,
                Capability.EXTENDABLE_TTL,
                Capability.SHARED_LOCKS,
                Capability.FAIR_ORDER,
                Capability.HAND_OVER);
        if (durable()) {
            caps.add(Capability.DURABLE_TOKENS);
        }
        return Collections.unmodifiableSet(caps);
    }

    String describe() {
        return product + ", " + topology + ", "
                + (inJvm
                        ? "in memory (nothing survives a restart)"
                        : persistent == null
                                ? "storage persistence unknown"
                                : persistent ? "persistent storage" : "in-memory storage");
    }

    static MongoServerFacts of(MongoDatabase admin) {
        Document hello;
        try {
            hello = admin.runCommand(new Document("hello", 1));
        } catch (MongoServerException e) {
            hello = admin.runCommand(new Document("isMaster", 1)); // servers before 4.4.2, and mongo-java-server
        }
        String version =
                String.valueOf(admin.runCommand(new Document("buildInfo", 1)).get("version"));
        Document status = null;
        try {
            status = admin.runCommand(
                    new Document("serverStatus", 1).append("repl", 0).append("metrics", 0));
        } catch (MongoServerException e) {
            log.warn(
                    "fencelock: serverStatus is not allowed ({}): storage persistence unknown, so DURABLE_TOKENS is"
                            + " not declared (grant the clusterMonitor role to see it)",
                    e.getCode());
        }
        // mongo-java-server answers serverStatus as process "java", without a storage engine
        boolean inJvm = status != null && "java".equals(status.getString("process"));
        Boolean persistent = null;
        if (status != null && status.get("storageEngine") instanceof Document engine) {
            persistent = engine.getBoolean("persistent");
        }
        String topology = hello.getString("setName") != null
                ? "replica set " + hello.getString("setName")
                : "isdbgrid".equals(hello.getString("msg")) ? "mongos" : "standalone";
        String product = inJvm ? "mongo-java-server (reports " + version + ")" : "MongoDB " + version;
        return new MongoServerFacts(product, topology, persistent, inJvm);
    }
}
