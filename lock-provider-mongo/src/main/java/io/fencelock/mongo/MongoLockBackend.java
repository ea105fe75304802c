package io.fencelock.mongo;

import static io.fencelock.mongo.MongoRecords.GRANTED_AT;
import static io.fencelock.mongo.MongoRecords.HELD_SINCE;
import static io.fencelock.mongo.MongoRecords.META;
import static io.fencelock.mongo.MongoRecords.OWNER;
import static io.fencelock.mongo.MongoRecords.RENEWED_BY;
import static io.fencelock.mongo.MongoRecords.TOKEN;
import static io.fencelock.mongo.MongoRecords.TOKEN_AT;
import static io.fencelock.mongo.MongoRecords.TTL_MS;
import static io.fencelock.mongo.MongoRecords.expiry;
import static io.fencelock.mongo.MongoRecords.millis;
import static io.fencelock.mongo.MongoRecords.quote;

import com.mongodb.MongoException;
import com.mongodb.MongoServerException;
import com.mongodb.ReadConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MongoDB primitive: one document per lock name, {@code _id} = the name, in one collection.
 * Every decision is taken by the server's clock: a document stores {@code grantedAt} (written with
 * {@code $currentDate}) and {@code ttlMs}, and "expired" is the filter
 * {@code $expr: {$lte: [{$add: ['$grantedAt', '$ttlMs']}, '$$NOW']}}. An acquire is one
 * {@code findOneAndUpdate} with upsert whose filter matches the lock only when it is free, expired or
 * already ours; when it does not match, the upsert's insert collides with the existing {@code _id}
 * (E11000) and that is the refusal. The token is {@code $inc}-ed in the same document, which is never
 * deleted (release clears the owner and keeps the token), so it rises across release, expiry and
 * takeover. The same update stores the grant's metadata and grant time ({@link MongoRecords}); a
 * release removes them. There is no release signal and no purge: waiters poll, never past the holder's expiry.
 * Semaphores, read-write locks and fair waiting keep their holders and waiters in the same document
 * ({@link MongoShared}); the mutex's acquire also requires that none of them lives.
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
    private static final String NOW = "$$NOW";
    private static final Document EXPIRY = new Document("$add", List.of("$" + GRANTED_AT, "$" + TTL_MS));
    /** Held by someone: not expired on the server's clock. */
    private static final Document LIVE = new Document("$gt", List.of(EXPIRY, NOW));

    private static final Document EXPIRED = new Document("$lte", List.of(EXPIRY, NOW));
    private static final Document PROJECTION = new Document(OWNER, 1)
            .append(TOKEN, 1)
            .append(GRANTED_AT, 1)
            .append(TTL_MS, 1)
            .append(RENEWED_BY, 1);
    /** A grant's findOneAndUpdate returns the document after the update, only what the answer needs (read-only once built). */
    private static final FindOneAndUpdateOptions GRANT =
            new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).projection(PROJECTION);
    /** An acquire's: the same, inserting the name's document when it has none. */
    private static final FindOneAndUpdateOptions GRANT_OR_INSERT = new FindOneAndUpdateOptions()
            .upsert(true)
            .returnDocument(ReturnDocument.AFTER)
            .projection(PROJECTION);

    private static final Document RENEWAL_PROJECTION =
            new Document(PROJECTION).append(MongoSharedState.HOLDERS, 1).append(MongoSharedState.VER, 1);

    private final MongoClient ownClient; // null when the application's client is used: theirs to close
    private final MongoCollection<Document> locks;
    private final String where;
    private final MongoServerFacts facts;
    private final Set<Capability> capabilities;
    private final MongoShared shared;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MongoLockBackend(
            MongoClient ownClient, MongoCollection<Document> locks, String where, MongoServerFacts facts) {
        this.ownClient = ownClient;
        this.locks = locks;
        this.where = where;
        this.facts = facts;
        this.capabilities = facts.capabilities();
        this.shared = new MongoShared(locks, where);
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
        return tryAcquire(name, leaseId, ttl, LockMetadata.NONE);
    }

    /** The grant, its metadata and its grant time ({@code heldSince}, the server's clock) in one update. */
    @Override
    public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
        // free (released), already ours (an idempotent retry), or expired on the server's clock
        Document filter = new Document("_id", name)
                .append(
                        "$or",
                        List.of(
                                new Document(OWNER, null),
                                new Document(OWNER, leaseId),
                                new Document("$expr", EXPIRED)))
                .append("$expr", MongoShared.SHARED_FREE);
        try {
            Document doc = locks.findOneAndUpdate(filter, grant(leaseId, ttl, metadata), GRANT_OR_INSERT);
            if (doc == null) {
                throw new LockBackendException(
                        "MongoDB tryAcquire of '" + name + "' on " + where + ": the upsert returned no document",
                        false);
            }
            return AcquireResult.granted(doc.get(TOKEN, Number.class).longValue(), expiry(doc));
        } catch (MongoServerException e) {
            if (e.getCode() != DUPLICATE_KEY) {
                throw failure("tryAcquire of '" + name + "'", e);
            }
            // The filter did not match the existing document (a live holder), so the upsert tried to
            // insert a second one with the same _id: a definite refusal that changed nothing.
            return shared.mutexRefused(name);
        } catch (MongoException e) {
            throw failure("tryAcquire of '" + name + "'", e);
        }
    }

    /**
     * One {@code findOneAndUpdate} without upsert: the document is updated to {@code leaseId}'s grant, as
     * {@link #tryAcquire} writes it (token {@code $inc}-ed, times from the server's clock), only when
     * {@code fromLeaseId} is its owner and the grant is live on the server's clock, under the same
     * condition on shared entries as an acquire; the owner field is never empty in between. When nothing
     * matched, nothing was written, and the refusal says no more (held with no remaining time): the
     * engine's waiter attempts next and learns it then.
     */
    @Override
    public AcquireResult handOver(
            String name, String fromLeaseId, String leaseId, Duration ttl, LockMetadata metadata) {
        if (fromLeaseId == null || leaseId == null) {
            // a null owner would match a free document's
            throw new IllegalArgumentException("hand-over of '" + name + "' from lease " + fromLeaseId + " to "
                    + leaseId + ": both lease ids are required");
        }
        Document filter = new Document("_id", name)
                .append(OWNER, fromLeaseId)
                .append("$expr", new Document("$and", List.of(LIVE, MongoShared.SHARED_FREE)));
        try {
            Document doc = locks.findOneAndUpdate(filter, grant(leaseId, ttl, metadata), GRANT);
            return doc == null
                    ? AcquireResult.held(null)
                    : AcquireResult.granted(doc.get(TOKEN, Number.class).longValue(), expiry(doc));
        } catch (MongoException e) {
            throw failure("handOver of '" + name + "'", e);
        }
    }

    /** The update of a mutex grant: owner, TTL and metadata; grant, token and hold times from the server; the next token. */
    private static Document grant(String leaseId, Duration ttl, LockMetadata metadata) {
        return new Document(
                        "$set",
                        new Document(OWNER, leaseId)
                                .append(TTL_MS, millis(ttl))
                                .append(META, MongoRecords.meta(metadata)))
                .append(
                        "$currentDate",
                        new Document(GRANTED_AT, true).append(TOKEN_AT, true).append(HELD_SINCE, true))
                .append("$inc", new Document(TOKEN, 1L));
    }

    /** A semaphore's permits, a reader, a writer or a fair mutex: see {@link MongoShared#acquire}. */
    @Override
    public AcquireResult tryAcquireShared(
            String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        return shared.acquire(name, leaseId, ttl, request, metadata);
    }

    @Override
    public RenewResult downgrade(String name, String leaseId, Duration ttl) {
        return shared.downgrade(name, leaseId, ttl);
    }

    /**
     * One unordered bulk write (per mutex lease one {@code updateOne} filtered on owner and not expired,
     * and one for the token bump when it has a token period; per shared grant one for its holder entry;
     * both for a lease whose grant is not said), then one read of the documents: two round trips per
     * batch, whatever its size (plus one per shared holder whose token period has passed). Each batch
     * stamps the documents (or holders) it renewed with a fresh id, so the read tells this batch's
     * renewals from anything else. Writing only where the grant lives halves the writes of a batch: each
     * is an index lookup on a real server, and a scan of the collection on the in-JVM one.
     */
    @Override
    public List<RenewResult> renew(List<RenewRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        String batch = UUID.randomUUID().toString();
        List<WriteModel<Document>> writes = new ArrayList<>(requests.size() * 3);
        for (RenewRequest r : requests) {
            if (r.grant().mayBeShared()) {
                writes.add(MongoShared.renewal(r, batch));
            }
            if (!r.grant().mayBeMutex()) {
                continue;
            }
            Document set = new Document(TTL_MS, millis(r.ttl())).append(RENEWED_BY, batch);
            if (r.tokenPeriod() != null) {
                // the token rises when the current one is at least a period old; whichever of the two
                // updates runs first, the result is the same (both extend, only this one bumps)
                Document due = new Document(
                        "$lte", List.of(new Document("$add", List.of("$" + TOKEN_AT, millis(r.tokenPeriod()))), NOW));
                writes.add(new UpdateOneModel<>(
                        new Document("_id", r.name())
                                .append(OWNER, r.leaseId())
                                .append("$expr", new Document("$and", List.of(LIVE, due))),
                        new Document("$set", set)
                                .append("$inc", new Document(TOKEN, 1L))
                                .append("$currentDate", new Document(GRANTED_AT, true).append(TOKEN_AT, true))));
            }
            writes.add(new UpdateOneModel<>(
                    new Document("_id", r.name()).append(OWNER, r.leaseId()).append("$expr", LIVE),
                    new Document("$set", set).append("$currentDate", new Document(GRANTED_AT, true))));
        }
        List<String> names = new ArrayList<>(
                new LinkedHashSet<>(requests.stream().map(RenewRequest::name).toList()));
        Map<String, Document> docs = new HashMap<>();
        try {
            locks.bulkWrite(writes, new BulkWriteOptions().ordered(false));
            // local read concern: our own acknowledged (majority) writes, without waiting for the majority snapshot
            for (Document doc : locks.withReadConcern(ReadConcern.LOCAL)
                    .find(new Document("_id", new Document("$in", names)))
                    .projection(RENEWAL_PROJECTION)) {
                docs.put(doc.getString("_id"), doc);
            }
        } catch (MongoException e) {
            throw failure("renew of " + requests.size() + " lease(s)", e);
        }
        List<RenewResult> results = new ArrayList<>(requests.size());
        for (RenewRequest r : requests) {
            Document doc = docs.get(r.name());
            boolean renewed = r.grant().mayBeMutex()
                    && doc != null
                    && r.leaseId().equals(doc.getString(OWNER))
                    && batch.equals(doc.getString(RENEWED_BY));
            results.add(
                    renewed
                            ? RenewResult.renewed(doc.get(TOKEN, Number.class).longValue(), expiry(doc))
                            : MongoShared.renewed(doc, r, batch));
        }
        shared.raiseDueTokens(requests, docs, batch, results);
        return results;
    }

    @Override
    public boolean release(String name, String leaseId) {
        return release(name, leaseId, GrantKind.EITHER);
    }

    /**
     * The mutex's release, else (a second round trip) a shared grant's or a waiter's ({@link MongoShared#release});
     * a lease whose grant is known is released in its one place, in one round trip.
     */
    @Override
    public boolean release(String name, String leaseId, GrantKind grant) {
        try {
            if (!grant.mayBeMutex()) {
                return shared.release(name, leaseId);
            }
            // the document stays: it carries the name's token
            return locks.updateOne(
                                            new Document("_id", name)
                                                    .append(OWNER, leaseId)
                                                    .append("$expr", LIVE),
                                            new Document("$set", new Document(OWNER, null).append(TTL_MS, 0L))
                                                    .append("$currentDate", new Document(GRANTED_AT, true))
                                                    .append("$unset", new Document(META, "").append(HELD_SINCE, "")))
                                    .getMatchedCount()
                            > 0
                    || (grant.mayBeShared() && shared.release(name, leaseId));
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
        Document match = new Document(
                "$or",
                List.of(
                        new Document(OWNER, new Document("$ne", null)).append("$expr", LIVE),
                        new Document("$expr", MongoShared.ANY_LIVE_HOLDER)));
        if (!prefix.isEmpty()) {
            match.append("_id", new Document("$regex", "^" + quote(prefix)));
        }
        return read("list of '" + prefix + "'", match);
    }

    /** One aggregation: the matching documents by _id (binary order: Java's, for ASCII names) with the server's $$NOW. */
    private List<LockInfo> read(String operation, Document match) {
        List<LockInfo> out = new ArrayList<>();
        try {
            for (Document doc : locks.aggregate(List.of(
                    new Document("$match", match),
                    new Document("$sort", new Document("_id", 1)),
                    new Document("$addFields", new Document("serverNow", NOW))))) {
                out.add(MongoSharedState.info(doc));
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

    private LockBackendException failure(String operation, MongoException e) {
        return MongoFailures.failure(operation, e, where);
    }

    /**
     * Configures a {@link MongoLockBackend}: either {@link #uri(String)} (the backend opens and closes
     * its own client) or {@link #client(MongoClient)} (the application's, never closed here).
     */
    public static final class Builder {
        private final MongoSettings settings = new MongoSettings();

        private Builder() {}

        /** A {@code mongodb://} or {@code mongodb+srv://} connection string; its database, if any, is the default database. */
        public Builder uri(String uri) {
            settings.uri(uri);
            return this;
        }

        /** The application's client instead of a URI; its write and read concerns are overridden for the lock collection only. */
        public Builder client(MongoClient client) {
            settings.client(client);
            return this;
        }

        /** The user, when the URI names none. */
        public Builder user(String user) {
            settings.user(user);
            return this;
        }

        public Builder password(String password) {
            settings.password(password);
            return this;
        }

        /** The database of the lock collection: default the URI's, else {@code fencelock}. Letters, digits, underscore; 1 to 63. */
        public Builder database(String database) {
            settings.database(database);
            return this;
        }

        /**
         * The lock collection (default {@code fencelock_locks}); one per namespace (a tenant, a kind of
         * job) if wanted. Letters, digits, underscore, not starting with a digit; 1 to 120 characters.
         */
        public Builder collection(String collection) {
            settings.collection(collection);
            return this;
        }

        /** Connect, server selection and socket read timeout, and the majority write's wtimeout (default 10 s). */
        public Builder timeout(Duration timeout) {
            settings.timeout(timeout);
            return this;
        }

        /**
         * Validates the settings, connects, learns what the server is (and so its capabilities), and
         * refuses a lock collection with a TTL index, which would delete lock documents and reset tokens.
         */
        public MongoLockBackend build() {
            settings.validate();
            MongoClient own = settings.openOwnClient();
            MongoClient use = own != null ? own : settings.client;
            try {
                MongoServerFacts facts = MongoServerFacts.of(use.getDatabase("admin"));
                MongoCollection<Document> locks = settings.lockCollection(use, facts);
                if (!facts.durable()) {
                    log.info(
                            "fencelock: {} ({}) does not keep tokens across a restart for sure: DURABLE_TOKENS is not declared",
                            settings.where,
                            facts.describe());
                }
                return new MongoLockBackend(own, locks, settings.where, facts);
            } catch (MongoException e) {
                MongoSettings.closeQuietly(own);
                throw MongoFailures.failure(
                        "start-up check of " + settings.databaseName + "." + settings.collection,
                        e,
                        settings.where,
                        settings.uri);
            } catch (RuntimeException e) {
                MongoSettings.closeQuietly(own);
                throw e;
            }
        }
    }
}
