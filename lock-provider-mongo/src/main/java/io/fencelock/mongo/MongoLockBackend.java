package io.fencelock.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.Redaction;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * The MongoDB primitive: one document per lock name, {@code _id} = the name, in one collection.
 * Every decision is taken by the server's clock: a document stores {@code grantedAt} (written with
 * {@code $currentDate}) and {@code ttlMs}, and "expired" is the filter
 * {@code $expr: {$lte: [{$add: ['$grantedAt', '$ttlMs']}, '$$NOW']}}. An acquire is one
 * {@code findOneAndUpdate} with upsert whose filter matches the lock only when it is free, expired or
 * already ours; when it does not match, the upsert's insert collides with the existing {@code _id}
 * (E11000) and that is the refusal. The token is {@code $inc}-ed in the same document, which is never
 * deleted (release clears the owner and keeps the token), so it rises across release, expiry and
 * takeover. There is no release signal and no purge: waiters poll, never past the holder's expiry.
 *
 * <pre>{@code
 * LockBackend backend = MongoLockBackend.builder()
 *         .uri("mongodb://db1,db2,db3/?replicaSet=rs0").user("app").password(secret)
 *         .database("app").collection("fencelock_locks")
 *         .build();
 * }</pre>
 */
public final class MongoLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(MongoLockBackend.class);
    static final int DUPLICATE_KEY = 11000;
    static final String OWNER = "owner";
    static final String TOKEN = "token";
    static final String GRANTED_AT = "grantedAt";
    static final String TTL_MS = "ttlMs";
    static final String TOKEN_AT = "tokenAt";
    static final String RENEWED_BY = "renewedBy";
    private static final String NOW = "$$NOW";
    private static final Document EXPIRY = new Document("$add", List.of("$" + GRANTED_AT, "$" + TTL_MS));
    /** Held by someone: not expired on the server's clock. */
    private static final Document LIVE = new Document("$gt", List.of(EXPIRY, NOW));
    private static final Document EXPIRED = new Document("$lte", List.of(EXPIRY, NOW));
    private static final Document PROJECTION = new Document(OWNER, 1).append(TOKEN, 1).append(GRANTED_AT, 1)
            .append(TTL_MS, 1).append(RENEWED_BY, 1);

    private final MongoClient ownClient; // null when the application's client is used: theirs to close
    private final MongoCollection<Document> locks;
    private final String where;
    private final ServerFacts facts;
    private final Set<Capability> capabilities;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MongoLockBackend(MongoClient ownClient, MongoCollection<Document> locks, String where, ServerFacts facts) {
        this.ownClient = ownClient;
        this.locks = locks;
        this.where = where;
        this.facts = facts;
        EnumSet<Capability> caps = EnumSet.of(Capability.FENCING, Capability.SERVER_TIME, Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD, Capability.LINEARIZABLE);
        if (facts.durable()) {
            caps.add(Capability.DURABLE_TOKENS);
        }
        this.capabilities = Collections.unmodifiableSet(caps);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** What the start-up check learned about the server, e.g. "MongoDB 7.0.14 replica set rs0, persistent storage". */
    public String serverDescription() {
        return facts.describe();
    }

    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
        // free (released), already ours (an idempotent retry), or expired on the server's clock
        Document filter = new Document("_id", name).append("$or", List.of(new Document(OWNER, null),
                new Document(OWNER, leaseId), new Document("$expr", EXPIRED)));
        Document update = new Document("$set", new Document(OWNER, leaseId).append(TTL_MS, millis(ttl)))
                .append("$currentDate", new Document(GRANTED_AT, true).append(TOKEN_AT, true))
                .append("$inc", new Document(TOKEN, 1L));
        try {
            Document doc = locks.findOneAndUpdate(filter, update, new FindOneAndUpdateOptions()
                    .upsert(true).returnDocument(ReturnDocument.AFTER).projection(PROJECTION));
            if (doc == null) {
                throw new LockBackendException("MongoDB tryAcquire of '" + name + "' on " + where
                        + ": the upsert returned no document", false);
            }
            return AcquireResult.granted(doc.get(TOKEN, Number.class).longValue(), expiry(doc));
        } catch (MongoServerException e) {
            if (e.getCode() != DUPLICATE_KEY) {
                throw failure("tryAcquire of '" + name + "'", e);
            }
            // The filter did not match the existing document (a live holder), so the upsert tried to
            // insert a second one with the same _id: a definite refusal that changed nothing.
            return AcquireResult.held(holderRemaining(name));
        } catch (MongoException e) {
            throw failure("tryAcquire of '" + name + "'", e);
        }
    }

    /**
     * The holder's remaining time on the server's clock, read after a refusal (the refusal itself
     * carries no document); null when it cannot be read. It only bounds a waiter's next poll.
     */
    private Duration holderRemaining(String name) {
        try {
            Document doc = locks.withReadConcern(ReadConcern.LOCAL).aggregate(List.of(new Document("$match", new Document("_id", name)),
                    new Document("$project", new Document("remaining", new Document("$subtract", List.of(EXPIRY, NOW)))
                            .append(OWNER, 1)))).first();
            if (doc == null || doc.get(OWNER) == null || !(doc.get("remaining") instanceof Number remaining)) {
                return Duration.ZERO; // freed meanwhile: poll again at once
            }
            return Duration.ofMillis(Math.max(0, remaining.longValue()));
        } catch (MongoException e) {
            log.debug("fencelock: reading the holder's expiry of '{}' on {} failed: {}", name, where, e.toString());
            return null;
        }
    }

    /**
     * One unordered bulk write (one {@code updateOne} per lease, filtered on owner and not expired,
     * plus one for the token bump of leases with a token period), then one read of the documents:
     * two round trips per batch, whatever its size. Each batch stamps the documents it renewed with a
     * fresh id, so the read tells this batch's renewals from anything else.
     */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        String batch = UUID.randomUUID().toString();
        List<WriteModel<Document>> writes = new ArrayList<>(requests.size() * 2);
        for (RenewRequest r : requests) {
            Document set = new Document(TTL_MS, millis(r.ttl())).append(RENEWED_BY, batch);
            if (r.tokenPeriod() != null) {
                // the token rises when the current one is at least a period old; whichever of the two
                // updates runs first, the result is the same (both extend, only this one bumps)
                Document due = new Document("$lte", List.of(new Document("$add", List.of("$" + TOKEN_AT,
                        millis(r.tokenPeriod()))), NOW));
                writes.add(new UpdateOneModel<>(new Document("_id", r.name()).append(OWNER, r.leaseId())
                        .append("$expr", new Document("$and", List.of(LIVE, due))),
                        new Document("$set", set).append("$inc", new Document(TOKEN, 1L))
                                .append("$currentDate", new Document(GRANTED_AT, true).append(TOKEN_AT, true))));
            }
            writes.add(new UpdateOneModel<>(new Document("_id", r.name()).append(OWNER, r.leaseId())
                    .append("$expr", LIVE),
                    new Document("$set", set).append("$currentDate", new Document(GRANTED_AT, true))));
        }
        List<String> names = new ArrayList<>(new LinkedHashSet<>(requests.stream().map(RenewRequest::name).toList()));
        Map<String, Document> docs = new HashMap<>();
        try {
            locks.bulkWrite(writes, new BulkWriteOptions().ordered(false));
            // local read concern: our own acknowledged (majority) writes, without waiting for the majority snapshot
            for (Document doc : locks.withReadConcern(ReadConcern.LOCAL).find(new Document("_id", new Document("$in", names)))
                    .projection(PROJECTION)) {
                docs.put(doc.getString("_id"), doc);
            }
        } catch (MongoException e) {
            throw failure("renew of " + requests.size() + " lease(s)", e);
        }
        List<RenewResult> results = new ArrayList<>(requests.size());
        for (RenewRequest r : requests) {
            Document doc = docs.get(r.name());
            boolean renewed = doc != null && r.leaseId().equals(doc.getString(OWNER)) && batch.equals(doc.getString(RENEWED_BY));
            results.add(renewed ? RenewResult.renewed(doc.get(TOKEN, Number.class).longValue(), expiry(doc))
                    : RenewResult.rejected());
        }
        return results;
    }

    @Override
    public boolean release(String name, String leaseId) {
        try {
            // the document stays: it carries the name's token
            return locks.updateOne(new Document("_id", name).append(OWNER, leaseId).append("$expr", LIVE),
                    new Document("$set", new Document(OWNER, null).append(TTL_MS, 0L))
                            .append("$currentDate", new Document(GRANTED_AT, true))).getMatchedCount() > 0;
        } catch (MongoException e) {
            throw failure("release of '" + name + "'", e);
        }
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        List<LockInfo> found = read("inspect of '" + name + "'", new Document("_id", name));
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    @Override
    public List<LockInfo> list(String prefix) {
        Document match = new Document(OWNER, new Document("$ne", null)).append("$expr", LIVE);
        if (!prefix.isEmpty()) {
            match.append("_id", new Document("$regex", "^" + quote(prefix)));
        }
        return read("list of '" + prefix + "'", match);
    }

    /** One aggregation: the matching documents by _id (binary order: Java's, for ASCII names) with the server's $$NOW. */
    private List<LockInfo> read(String operation, Document match) {
        List<LockInfo> out = new ArrayList<>();
        try {
            for (Document doc : locks.aggregate(List.of(new Document("$match", match),
                    new Document("$sort", new Document("_id", 1)),
                    new Document("$addFields", new Document("serverNow", NOW))))) {
                Instant now = doc.getDate("serverNow").toInstant();
                Instant expiresAt = expiry(doc);
                String owner = doc.getString(OWNER);
                boolean held = owner != null && expiresAt != null && expiresAt.isAfter(now);
                Number token = doc.get(TOKEN, Number.class);
                out.add(new LockInfo(doc.getString("_id"), held, held ? owner : null, token == null ? 0 : token.longValue(),
                        held ? expiresAt : null, now));
            }
        } catch (MongoException e) {
            throw failure(operation, e);
        }
        return out;
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && ownClient != null) {
            ownClient.close();
        }
    }

    @Override
    public String toString() {
        return "MongoLockBackend[" + where + ", " + locks.getNamespace().getFullName() + ", " + facts.describe() + "]";
    }

    private static Instant expiry(Document doc) {
        Date granted = doc.getDate(GRANTED_AT);
        Number ttl = doc.get(TTL_MS, Number.class);
        return granted == null || ttl == null ? null : granted.toInstant().plusMillis(ttl.longValue());
    }

    /** Whole milliseconds (the resolution of BSON dates), rounded up: the server never expires a lease early. */
    static long millis(Duration d) {
        long ms = d.toMillis();
        return d.minusMillis(ms).isZero() ? ms : ms + 1;
    }

    /** Every character that is not a letter or digit escaped: a literal prefix in PCRE and Java regex alike. */
    static String quote(String literal) {
        StringBuilder sb = new StringBuilder(literal.length() * 2);
        for (char c : literal.toCharArray()) {
            if (!Character.isLetterOrDigit(c)) {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    private LockBackendException failure(String operation, MongoException e) {
        return failure(operation, e, where);
    }

    static LockBackendException failure(String operation, MongoException e, String where) {
        return failure(operation, e, where, null);
    }

    /** With the raw {@code uri} the client was made with, whose echoes in the driver's message are redacted. */
    static LockBackendException failure(String operation, MongoException e, String where, String uri) {
        return new LockBackendException("MongoDB " + operation + " failed on " + where + ": "
                + (e.getCode() == -1 ? "" : "[" + e.getCode() + "] ") + Redaction.message(e.getMessage(), uri), e, isRetryable(e));
    }

    /** Whether the same call may succeed later: the network, an election or a timeout, not a bug or bad credentials. */
    static boolean isRetryable(MongoException e) {
        return e instanceof MongoSocketException || e instanceof MongoTimeoutException
                || e instanceof MongoExecutionTimeoutException || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException || e instanceof MongoWriteConcernException
                || e instanceof MongoInterruptedException
                || e instanceof MongoBulkWriteException bulk && bulk.getWriteConcernError() != null
                || e.hasErrorLabel("RetryableWriteError")
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
    }

    /**
     * What the server says about itself at start-up.
     *
     * @param product    e.g. "MongoDB 7.0.14" or "mongo-java-server (reports 5.0.0)"
     * @param topology   "replica set rs0", "standalone", "mongos"
     * @param persistent whether serverStatus reports persistent storage (null when it cannot be read)
     * @param inJvm      whether this is the in-JVM mongo-java-server, which keeps nothing across a restart
     */
    record ServerFacts(String product, String topology, Boolean persistent, boolean inJvm) {
        /** The DURABLE_TOKENS rule: a real server on persistent storage, written with w:majority, j:true. */
        boolean durable() {
            return !inJvm && Boolean.TRUE.equals(persistent);
        }

        String describe() {
            return product + ", " + topology + ", " + (inJvm ? "in memory (nothing survives a restart)"
                    : persistent == null ? "storage persistence unknown" : persistent ? "persistent storage" : "in-memory storage");
        }

        static ServerFacts of(MongoDatabase admin) {
            Document hello;
            try {
                hello = admin.runCommand(new Document("hello", 1));
            } catch (MongoServerException e) {
                hello = admin.runCommand(new Document("isMaster", 1)); // servers before 4.4.2, and mongo-java-server
            }
            String version = String.valueOf(admin.runCommand(new Document("buildInfo", 1)).get("version"));
            Document status = null;
            try {
                status = admin.runCommand(new Document("serverStatus", 1).append("repl", 0).append("metrics", 0));
            } catch (MongoServerException e) {
                log.warn("fencelock: serverStatus is not allowed ({}): storage persistence unknown, so DURABLE_TOKENS is"
                        + " not declared (grant the clusterMonitor role to see it)", e.getCode());
            }
            // mongo-java-server answers serverStatus as process "java", without a storage engine
            boolean inJvm = status != null && "java".equals(status.getString("process"));
            Boolean persistent = null;
            if (status != null && status.get("storageEngine") instanceof Document engine) {
                persistent = engine.getBoolean("persistent");
            }
            String topology = hello.getString("setName") != null ? "replica set " + hello.getString("setName")
                    : "isdbgrid".equals(hello.getString("msg")) ? "mongos" : "standalone";
            String product = inJvm ? "mongo-java-server (reports " + version + ")" : "MongoDB " + version;
            return new ServerFacts(product, topology, persistent, inJvm);
        }
    }

    /**
     * Configures a {@link MongoLockBackend}: either {@link #uri(String)} (the backend opens and closes
     * its own client) or {@link #client(MongoClient)} (the application's, never closed here).
     */
    public static final class Builder {
        static final String DEFAULT_DATABASE = "fencelock";
        static final String DEFAULT_COLLECTION = "fencelock_locks";
        private static final Pattern DATABASE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
        private static final Pattern COLLECTION = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,119}");
        private String uri;
        private MongoClient client;
        private String user;
        private String password;
        private String database;
        private String collection = DEFAULT_COLLECTION;
        private Duration timeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /** A {@code mongodb://} or {@code mongodb+srv://} connection string; its database, if any, is the default database. */
        public Builder uri(String uri) {
            Objects.requireNonNull(uri, "uri");
            if (!uri.regionMatches(true, 0, "mongodb://", 0, 10) && !uri.regionMatches(true, 0, "mongodb+srv://", 0, 14)) {
                throw new IllegalArgumentException("uri must start with mongodb:// or mongodb+srv://, got " + Redaction.uri(uri));
            }
            this.uri = uri;
            return this;
        }

        /** The application's client instead of a URI; its write and read concerns are overridden for the lock collection only. */
        public Builder client(MongoClient client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /** The user, when the URI names none. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** The database of the lock collection: default the URI's, else {@code fencelock}. Letters, digits, underscore; 1 to 63. */
        public Builder database(String database) {
            this.database = requireName("database", database, DATABASE, 63);
            return this;
        }

        /**
         * The lock collection (default {@code fencelock_locks}); one per namespace (the Mongo elector design's bizType) if
         * wanted. Letters, digits, underscore, not starting with a digit; 1 to 120 characters.
         */
        public Builder collection(String collection) {
            this.collection = requireName("collection", collection, COLLECTION, 120);
            return this;
        }

        /** Connect, server selection and socket read timeout, and the majority write's wtimeout (default 10 s). */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        static String requireName(String what, String value, Pattern rule, int max) {
            if (value == null || !rule.matcher(value).matches()) {
                throw new IllegalArgumentException("MongoDB " + what + " " + (value == null ? "null" : "'" + value + "'")
                        + " is invalid: it must match [A-Za-z_][A-Za-z0-9_]* (no '$', dots, spaces or dashes) and be 1 to "
                        + max + " characters");
            }
            return value;
        }

        /**
         * Validates the settings, connects, learns what the server is (and so its capabilities), and
         * refuses a lock collection with a TTL index, which would delete lock documents and reset tokens.
         */
        public MongoLockBackend build() {
            if ((uri == null) == (client == null)) {
                throw new IllegalArgumentException("set exactly one of uri and client");
            }
            ConnectionString connection = null;
            String where = "a MongoClient of the application";
            if (uri != null) {
                connection = connectionString(uri);
                where = Redaction.uri(uri);
                if ((user != null || password != null) && connection.getCredential() != null) {
                    throw new IllegalArgumentException("credentials are given both in the URI and as user/password: give them once ("
                            + where + ")");
                }
                if (password != null && user == null) {
                    throw new IllegalArgumentException("a password without a user");
                }
            } else if (user != null || password != null) {
                throw new IllegalArgumentException("user/password go with uri(), not with client()");
            }
            String db = database != null ? database
                    : connection != null && connection.getDatabase() != null
                    ? requireName("database (from the URI)", connection.getDatabase(), DATABASE, 63) : DEFAULT_DATABASE;
            MongoClient own = connection == null ? null : open(connection);
            MongoClient use = own != null ? own : client;
            try {
                ServerFacts facts = ServerFacts.of(use.getDatabase("admin"));
                MongoCollection<Document> locks = use.getDatabase(db).getCollection(collection)
                        .withWriteConcern(WriteConcern.MAJORITY.withJournal(facts.durable()).withWTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                        .withReadConcern(ReadConcern.MAJORITY)
                        .withReadPreference(ReadPreference.primary());
                refuseTtlIndexes(locks);
                if (!facts.durable()) {
                    log.info("fencelock: {} ({}) does not keep tokens across a restart for sure: DURABLE_TOKENS is not declared",
                            where, facts.describe());
                }
                return new MongoLockBackend(own, locks, where, facts);
            } catch (MongoException e) {
                closeQuietly(own);
                throw failure("start-up check of " + db + "." + collection, e, where, uri);
            } catch (RuntimeException e) {
                closeQuietly(own);
                throw e;
            }
        }

        private static void refuseTtlIndexes(MongoCollection<Document> locks) {
            for (Document index : locks.listIndexes()) {
                if (index.containsKey("expireAfterSeconds")) {
                    throw new IllegalStateException("the lock collection " + locks.getNamespace().getFullName()
                            + " has a TTL index '" + index.getString("name") + "': it would delete lock documents and so"
                            + " reset their fencing tokens. Drop it (db." + locks.getNamespace().getCollectionName()
                            + ".dropIndex('" + index.getString("name") + "'))");
                }
            }
        }

        private static ConnectionString connectionString(String uri) {
            io.fencelock.spi.ConnectionString.parse(uri).requireValidPorts();
            try {
                return new ConnectionString(uri);
            } catch (IllegalArgumentException e) {
                // no cause: the driver's message may quote pieces of the URI; Redaction withholds it if so
                throw new IllegalArgumentException("invalid MongoDB connection string " + Redaction.uri(uri) + ": "
                        + Redaction.message(e.getMessage(), uri));
            }
        }

        private MongoClient open(ConnectionString connection) {
            int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
            MongoClientSettings.Builder settings = MongoClientSettings.builder().applyConnectionString(connection)
                    .applicationName("fencelock")
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(ms, TimeUnit.MILLISECONDS))
                    .applyToSocketSettings(s -> s.connectTimeout(ms, TimeUnit.MILLISECONDS).readTimeout(ms, TimeUnit.MILLISECONDS));
            if (user != null) {
                String source = connection.getDatabase() != null ? connection.getDatabase() : "admin";
                settings.credential(MongoCredential.createCredential(user, source,
                        password == null ? new char[0] : password.toCharArray()));
            }
            return MongoClients.create(settings.build());
        }

        private static void closeQuietly(MongoClient client) {
            if (client != null) {
                try {
                    client.close();
                } catch (RuntimeException e) {
                    log.debug("fencelock: closing the MongoDB client failed", e);
                }
            }
        }
    }
}
