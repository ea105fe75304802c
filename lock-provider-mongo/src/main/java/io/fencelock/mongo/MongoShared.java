package io.fencelock.mongo;

import static io.fencelock.mongo.MongoRecords.TOKEN;
import static io.fencelock.mongo.MongoRecords.TOKEN_AT;
import static io.fencelock.mongo.MongoRecords.TTL_MS;
import static io.fencelock.mongo.MongoSharedState.AT;
import static io.fencelock.mongo.MongoSharedState.HOLDERS;
import static io.fencelock.mongo.MongoSharedState.SERVER_NOW;
import static io.fencelock.mongo.MongoSharedState.TOUCHED_AT;
import static io.fencelock.mongo.MongoSharedState.VER;
import static io.fencelock.mongo.MongoSharedState.WAITERS;
import static io.fencelock.mongo.MongoSharedState.expiry;
import static io.fencelock.mongo.MongoSharedState.token;

import com.mongodb.MongoException;
import com.mongodb.MongoServerException;
import com.mongodb.ReadConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import io.fencelock.LockBackendException;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Semaphores, read-write locks and fair waiting on the name's one document, beside the mutex's
 * fields: arrays {@code holders} and {@code waiters} (see {@link MongoSharedState}), the name's
 * {@code kind} and {@code limit}, and {@code ver}, raised by every change of the arrays.
 *
 * <p>A grant needs the server's time written into the new holder, and MongoDB cannot compute a value
 * into a new array element with update operators alone (an update pipeline could, but
 * mongo-java-server cannot evaluate {@code $$NOW} in one). So a shared acquire reads the document with
 * {@code $$NOW} (one aggregation), decides on the client by the in-memory backend's rules, and writes
 * the new arrays with an {@code updateOne} that applies only if {@code ver} and {@code token} are still
 * those it read (another client's write in between: read and decide again). The holder's expiry is
 * the read's {@code $$NOW} plus the TTL: that time is taken after the engine sent the request, so the
 * server never expires a holder before its local deadline. Renewal, downgrade and release of a holder
 * find it by lease id with the positional operator and stamp it with {@code $currentDate}: one round
 * trip each, no read first.
 */
final class MongoShared {
    private static final Logger log = LoggerFactory.getLogger(MongoShared.class);
    /** Conditional writes lost to other clients' writes before an acquire gives up (each loss is another's success). */
    static final int ATTEMPTS = 32;

    /** An element of holders or waiters that has not expired on the server's clock. */
    private static final Document LIVE_ENTRY =
            new Document("$gt", List.of(new Document("$add", List.of("$$this." + AT, "$$this." + TTL_MS)), "$$NOW"));
    /** For the ordinary mutex's acquire: no live shared holder, and no live waiter unless the name is a (fair) mutex. */
    static final Document SHARED_FREE = new Document(
            "$and",
            List.of(
                    new Document("$eq", List.of(liveCount(HOLDERS, LIVE_ENTRY), 0)),
                    new Document(
                            "$or",
                            List.of(
                                    new Document(
                                            "$eq",
                                            List.of(
                                                    new Document(
                                                            "$ifNull",
                                                            List.of(
                                                                    "$" + MongoSharedState.KIND,
                                                                    LockMode.EXCLUSIVE.name())),
                                                    LockMode.EXCLUSIVE.name())),
                                    new Document("$eq", List.of(liveCount(WAITERS, LIVE_ENTRY), 0))))));
    /** For list: a live shared holder. */
    static final Document ANY_LIVE_HOLDER = new Document("$gt", List.of(liveCount(HOLDERS, LIVE_ENTRY), 0));

    private final MongoCollection<Document> locks;
    private final String where;

    /** Reads with local read concern: the primary's latest, which a conditional write then confirms. */
    MongoShared(MongoCollection<Document> locks, String where) {
        this.locks = locks.withReadConcern(ReadConcern.LOCAL);
        this.where = where;
    }

    private static Document liveCount(String array, Document cond) {
        return new Document(
                "$size",
                new Document(
                        "$filter",
                        new Document("input", new Document("$ifNull", List.of("$" + array, List.of())))
                                .append("cond", cond)));
    }

    /** The lease id's live holder exists ({@code also}: further conditions on it); the id as a literal, never a path. */
    private static Document liveHolder(String leaseId, Document... also) {
        List<Object> all = new ArrayList<>(List.of(
                new Document("$eq", List.of("$$this." + MongoSharedState.ID, new Document("$literal", leaseId))),
                LIVE_ENTRY));
        all.addAll(List.of(also));
        return new Document("$gt", List.of(liveCount(HOLDERS, new Document("$and", all)), 0));
    }

    /**
     * Two round trips when the name's document exists (the read with {@code $$NOW}, the conditional
     * write), one for a refusal that leaves nothing behind, three for a name never used before (the
     * document is created first, with {@code $currentDate} as the read's time); more only while other
     * clients' writes win the race.
     */
    AcquireResult acquire(String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
        long ttlMs = MongoRecords.millis(ttl);
        String operation = "tryAcquireShared of '" + name + "'";
        try {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                Document doc = readOrCreate(name);
                if (doc == null) {
                    continue; // another client created it at the same moment
                }
                MongoSharedState state = new MongoSharedState(doc);
                MongoSharedState.Outcome out = state.decide(name, leaseId, ttlMs, request, metadata);
                if (!out.changes()) {
                    return AcquireResult.held(out.remaining());
                }
                Document unchanged =
                        new Document("_id", name).append(VER, doc.get(VER)).append(TOKEN, doc.get(TOKEN));
                Document update =
                        new Document("$set", state.changes(request, out)).append("$inc", new Document(VER, 1L));
                if (locks.updateOne(unchanged, update).getMatchedCount() > 0) {
                    Document h = out.granted();
                    return h == null
                            ? AcquireResult.held(out.remaining())
                            : AcquireResult.granted(token(h), Instant.ofEpochMilli(expiry(h)));
                }
            }
        } catch (MongoException e) {
            throw MongoFailures.failure(operation, e, where);
        }
        throw new LockBackendException(
                "MongoDB " + operation + " on " + where + ": the document changed before each of " + ATTEMPTS
                        + " conditional writes",
                true);
    }

    /** The document with the server's {@code $$NOW}, or null when there is none. */
    private Document read(String name) {
        return locks.aggregate(List.of(
                        new Document("$match", new Document("_id", name)),
                        new Document("$addFields", new Document(SERVER_NOW, "$$NOW"))))
                .first();
    }

    /** {@link #read}, creating an empty document (token 0) if there is none; null when a concurrent creation collided. */
    private Document readOrCreate(String name) {
        Document doc = read(name);
        if (doc != null) {
            return doc;
        }
        try {
            doc = locks.findOneAndUpdate(
                    new Document("_id", name),
                    new Document("$setOnInsert", new Document(TOKEN, 0L))
                            .append("$currentDate", new Document(TOUCHED_AT, true)),
                    new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
        } catch (MongoServerException e) {
            if (e.getCode() == MongoLockBackend.DUPLICATE_KEY) {
                return null;
            }
            throw e;
        }
        doc.put(SERVER_NOW, doc.getDate(TOUCHED_AT));
        return doc;
    }

    /**
     * After the ordinary mutex's acquire was refused: a read of why. Another kind of lock holds the
     * name (an {@link IllegalArgumentException}), or a holder whose remaining time bounds the next poll
     * (null when the read fails: it only bounds a poll).
     */
    AcquireResult mutexRefused(String name) {
        Document doc;
        try {
            doc = read(name);
        } catch (MongoException e) {
            log.debug("fencelock: reading the holder's expiry of '{}' on {} failed: {}", name, where, e.toString());
            return AcquireResult.held(null);
        }
        if (doc == null) {
            return AcquireResult.held(Duration.ZERO);
        }
        MongoSharedState state = new MongoSharedState(doc);
        Duration mutex = state.mutexRemaining();
        if (mutex != null) {
            return AcquireResult.held(mutex);
        }
        state.requireKind(name, LockMode.EXCLUSIVE, 0);
        Duration fair = state.holdersRemaining(); // a fair mutex's holder: the same kind, held
        return AcquireResult.held(fair == null ? Duration.ZERO : fair);
    }

    /** One findOneAndUpdate: the live write (or read) grant becomes a read grant, stamped with the server's now. */
    RenewResult downgrade(String name, String leaseId, Duration ttl) {
        Document readOrWrite = new Document(
                "$or",
                List.of(
                        new Document("$eq", List.of("$$this." + MongoSharedState.MODE, LockMode.WRITE.name())),
                        new Document("$eq", List.of("$$this." + MongoSharedState.MODE, LockMode.READ.name()))));
        try {
            Document after = locks.findOneAndUpdate(
                    new Document("_id", name)
                            .append(HOLDERS + "." + MongoSharedState.ID, leaseId)
                            .append("$expr", liveHolder(leaseId, readOrWrite)),
                    new Document(
                                    "$set",
                                    new Document(HOLDERS + ".$." + MongoSharedState.MODE, LockMode.READ.name())
                                            .append(HOLDERS + ".$." + TTL_MS, MongoRecords.millis(ttl)))
                            .append("$currentDate", new Document(HOLDERS + ".$." + AT, true))
                            .append("$inc", new Document(VER, 1L)),
                    new FindOneAndUpdateOptions()
                            .returnDocument(ReturnDocument.AFTER)
                            .projection(new Document(
                                    HOLDERS, new Document("$elemMatch", new Document(MongoSharedState.ID, leaseId)))));
            Document h = after == null ? null : holder(after, leaseId, null);
            return h == null ? RenewResult.rejected() : RenewResult.renewed(token(h), Instant.ofEpochMilli(expiry(h)));
        } catch (MongoException e) {
            throw MongoFailures.failure("downgrade of '" + name + "'", e, where);
        }
    }

    /**
     * One findOneAndUpdate: pulls {@code id} from the holders and the waiters. True when it was a live
     * holder (the document before the update shows it, and an id is never both a holder and a waiter).
     */
    boolean release(String name, String id) {
        try {
            Document before = locks.findOneAndUpdate(
                    new Document("_id", name)
                            .append(
                                    "$or",
                                    List.of(
                                            new Document("$expr", liveHolder(id)),
                                            new Document(WAITERS + "." + MongoSharedState.ID, id))),
                    new Document(
                                    "$pull",
                                    new Document(HOLDERS, new Document(MongoSharedState.ID, id))
                                            .append(WAITERS, new Document(MongoSharedState.ID, id)))
                            .append("$inc", new Document(VER, 1L)),
                    new FindOneAndUpdateOptions()
                            .returnDocument(ReturnDocument.BEFORE)
                            .projection(new Document(
                                    HOLDERS, new Document("$elemMatch", new Document(MongoSharedState.ID, id)))));
            return before != null && holder(before, id, null) != null;
        } catch (MongoException e) {
            throw MongoFailures.failure("release of '" + name + "'", e, where);
        }
    }

    /** The renewal of a shared holder, for the batch's bulk write: its {@code at} stamped with the server's now. */
    static UpdateOneModel<Document> renewal(RenewRequest r, String batch) {
        return new UpdateOneModel<>(
                new Document("_id", r.name())
                        .append(HOLDERS + "." + MongoSharedState.ID, r.leaseId())
                        .append("$expr", liveHolder(r.leaseId())),
                new Document(
                                "$set",
                                new Document(HOLDERS + ".$." + TTL_MS, MongoRecords.millis(r.ttl()))
                                        .append(HOLDERS + ".$." + MongoRecords.RENEWED_BY, batch))
                        .append("$currentDate", new Document(HOLDERS + ".$." + AT, true))
                        .append("$inc", new Document(VER, 1L)));
    }

    /** The holder {@code leaseId} of {@code doc} (renewed by {@code batch}, when given), or null. */
    static Document holder(Document doc, String leaseId, String batch) {
        if (doc != null && doc.get(HOLDERS) instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof Document h
                        && leaseId.equals(h.getString(MongoSharedState.ID))
                        && (batch == null || batch.equals(h.getString(MongoRecords.RENEWED_BY)))) {
                    return h;
                }
            }
        }
        return null;
    }

    /** A shared holder's result of the batch: renewed iff its entry carries the batch's id. */
    static RenewResult renewed(Document doc, RenewRequest r, String batch) {
        Document h = holder(doc, r.leaseId(), batch);
        return h == null ? RenewResult.rejected() : RenewResult.renewed(token(h), Instant.ofEpochMilli(expiry(h)));
    }

    /**
     * The token-period rule for shared holders: a holder this batch renewed whose token was issued at
     * least a period before the renewal's server time gets the name's next token, one conditional
     * {@code updateOne} each (on the name's token, so no other grant took that number meanwhile). Its
     * value must come from the document's counter, which update operators cannot copy into an array
     * element: hence a round trip of its own, at most once per period. A holder whose raise loses to
     * another grant keeps its token until its next renewal.
     */
    void raiseDueTokens(
            List<RenewRequest> requests, Map<String, Document> docs, String batch, List<RenewResult> results) {
        Map<String, Long> tokens = new HashMap<>();
        for (int i = 0; i < requests.size(); i++) {
            RenewRequest r = requests.get(i);
            Document h = r.tokenPeriod() == null ? null : holder(docs.get(r.name()), r.leaseId(), batch);
            Date issued = h == null ? null : h.getDate(TOKEN_AT);
            if (issued == null || h.getDate(AT).getTime() - issued.getTime() < MongoRecords.millis(r.tokenPeriod())) {
                continue;
            }
            long current = tokens.computeIfAbsent(r.name(), n -> token(docs.get(n)));
            String path = HOLDERS + ".$.";
            try {
                boolean raised = locks.updateOne(
                                        new Document("_id", r.name())
                                                .append(TOKEN, current)
                                                .append(HOLDERS + "." + MongoSharedState.ID, r.leaseId())
                                                .append("$expr", liveHolder(r.leaseId())),
                                        new Document(
                                                        "$set",
                                                        new Document(TOKEN, current + 1)
                                                                .append(path + TOKEN, current + 1)
                                                                .append(path + TOKEN_AT, h.getDate(AT)))
                                                .append("$inc", new Document(VER, 1L)))
                                .getMatchedCount()
                        > 0;
                if (raised) {
                    tokens.put(r.name(), current + 1);
                    results.set(i, RenewResult.renewed(current + 1, Instant.ofEpochMilli(expiry(h))));
                }
            } catch (MongoException e) {
                throw MongoFailures.failure("token raise of '" + r.name() + "'", e, where);
            }
        }
    }
}
