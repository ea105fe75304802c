package io.fencelock.fencing;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * Fenced MongoDB writes: the document carries its token in a field ({@value #DEFAULT_TOKEN_FIELD} by
 * default), and each write is one conditional {@code updateOne} on {@code _id} that applies the update and
 * sets the token only if the write's token is at least the document's. A document that does not exist yet
 * is created by the same write (an upsert); one written before the fence, without a token, takes any
 * positive one. MongoDB applies an update to one document atomically, so the check and the write cannot be
 * split by another writer.
 *
 * <pre>{@code
 * MongoFence fence = MongoFence.of(database.getCollection("reports"));
 * fence.set("today", lease.fencingToken(), new Document("body", json));   // StaleTokenException if stale
 * fence.update("today", lease.fencingToken(), Updates.inc("views", 1));   // any update operators
 * fence.clear("today", lease.fencingToken());                             // keeps only _id and the token
 * }</pre>
 *
 * <p>A refused write changes nothing and costs three round trips (the upsert meets the document's {@code _id},
 * the update without upsert matches nothing, the token is read for the exception); an accepted one costs one.
 * There is no fenced delete: the token lives in the document, so a stale writer's later write would create a
 * deleted document again. {@link #clear} keeps the document with its token only; delete it when no former
 * holder can come back. Writes that do not go through the fence are not checked. Needs
 * {@code org.mongodb:mongodb-driver-sync} on the class path. Thread-safe as the collection is.
 */
public final class MongoFence {
    /** The field that holds a document's token unless another is named. */
    public static final String DEFAULT_TOKEN_FIELD = "fenceToken";

    private static final int MAX_FIELD_LENGTH = 64;

    private final MongoCollection<Document> collection;
    private final String tokenField;

    private MongoFence(MongoCollection<Document> collection, String tokenField) {
        this.collection = collection;
        this.tokenField = tokenField;
    }

    /** A fence on {@code collection}'s documents, their token in {@value #DEFAULT_TOKEN_FIELD}. */
    public static MongoFence of(MongoCollection<Document> collection) {
        return of(collection, DEFAULT_TOKEN_FIELD);
    }

    /**
     * A fence on {@code collection}'s documents, their token in {@code tokenField}: 1 to 64 characters, not
     * {@code _id}, not starting with {@code $}, no {@code .} and no NUL.
     */
    public static MongoFence of(MongoCollection<Document> collection, String tokenField) {
        Checks.notNull("collection", collection);
        Checks.notNull("tokenField", tokenField);
        if (tokenField.isEmpty()
                || tokenField.length() > MAX_FIELD_LENGTH
                || tokenField.equals("_id")
                || tokenField.startsWith("$")
                || tokenField.indexOf('.') >= 0
                || tokenField.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("tokenField " + Checks.quote(tokenField) + " breaks the rule: 1 to "
                    + MAX_FIELD_LENGTH + " characters, not _id, not starting with $, no '.' and no NUL");
        }
        return new MongoFence(collection, tokenField);
    }

    /**
     * {@code $set} of {@code fields} on the document {@code id} (created if missing) if {@code token} is at
     * least the document's token; the document's token is then {@code token}.
     *
     * @throws StaleTokenException when the document has accepted a higher token; nothing was written
     */
    public void set(Object id, long token, Map<String, ?> fields) {
        Checks.notNull("fields", fields);
        if (fields.isEmpty()) {
            throw new IllegalArgumentException(
                    "fields: 0 entries breaks the rule: a fenced $set names at least one field");
        }
        update(id, token, new Document("$set", new Document(fields)));
    }

    /**
     * {@code update} (update operators such as {@code $set}, {@code $inc}, {@code $unset}; not a replacement
     * and not a pipeline) on the document {@code id} (created if missing) if {@code token} is at least the
     * document's token; the same write sets the document's token to {@code token}. The update may not name the
     * token field.
     *
     * @return the driver's result of the write that was applied
     * @throws StaleTokenException when the document has accepted a higher token; nothing was written
     */
    public UpdateResult update(Object id, long token, Bson update) {
        Checks.notNull("id", id);
        Checks.token(token);
        BsonDocument fenced = withToken(Checks.notNull("update", update), token);
        return fenced(
                id,
                token,
                (filter, upsert) -> collection.updateOne(filter, fenced, new UpdateOptions().upsert(upsert)));
    }

    /**
     * Clears the document {@code id} if {@code token} is at least its token: it keeps only its {@code _id} and
     * its token ({@code token}), so that a stale writer cannot bring its data back, as {@link RedisFence#del}
     * leaves the key's token. Delete the document yourself when the resource is gone for good.
     *
     * @return whether the document existed
     * @throws StaleTokenException when the document has accepted a higher token; nothing was written
     */
    public boolean clear(Object id, long token) {
        Checks.notNull("id", id);
        Checks.token(token);
        Document tokenOnly = new Document(tokenField, token);
        UpdateResult cleared = fenced(
                id,
                token,
                (filter, upsert) -> collection.replaceOne(filter, tokenOnly, new ReplaceOptions().upsert(upsert)));
        return cleared.getMatchedCount() > 0;
    }

    /**
     * One fenced write: with upsert first, which creates a missing document. A duplicate key then means that
     * the document exists and its token did not pass, or that another writer created it a moment ago, so the
     * write is asked again without upsert; when that matches nothing either, the document's token is read for
     * the refusal. A document that is not there at all after a duplicate key was refused by another unique
     * index (or deleted meanwhile, not through the fence): that error is the caller's.
     */
    private UpdateResult fenced(Object id, long token, BiFunction<Bson, Boolean, UpdateResult> write) {
        Bson filter = Filters.and(
                Filters.eq("_id", id), Filters.or(Filters.lte(tokenField, token), Filters.exists(tokenField, false)));
        MongoWriteException duplicate;
        try {
            return write.apply(filter, true);
        } catch (MongoWriteException e) {
            if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
            duplicate = e;
        }
        UpdateResult existing = write.apply(filter, false);
        if (existing.getMatchedCount() > 0) {
            return existing;
        }
        Document d = tokenOf(id);
        if (d == null) {
            throw duplicate;
        }
        throw new StaleTokenException(String.valueOf(id), token, tokenIn(d).orElse(0));
    }

    /** The document's token, empty when the document does not exist or no fenced write reached it. */
    public OptionalLong currentToken(Object id) {
        Checks.notNull("id", id);
        Document d = tokenOf(id);
        return d == null ? OptionalLong.empty() : tokenIn(d);
    }

    /** The document {@code id} with its token field only; null when there is none. */
    private Document tokenOf(Object id) {
        return collection
                .find(Filters.eq("_id", id))
                .projection(Projections.include(tokenField))
                .first();
    }

    private OptionalLong tokenIn(Document d) {
        return d.get(tokenField) instanceof Number n ? OptionalLong.of(n.longValue()) : OptionalLong.empty();
    }

    /** The field that holds each document's token. */
    public String tokenField() {
        return tokenField;
    }

    /** {@code update} as a document of operators, with {@code $set} of the token added; refused before any I/O when malformed. */
    private BsonDocument withToken(Bson update, long token) {
        BsonDocument given = update.toBsonDocument(Document.class, collection.getCodecRegistry());
        BsonDocument operators = new BsonDocument(); // a copy: the caller's update is left as it was
        given.forEach((op, fields) ->
                operators.put(op, fields.isDocument() ? fields.asDocument().clone() : fields));
        if (operators.isEmpty()) {
            throw new IllegalArgumentException("update {} breaks the rule: a fenced update has at least one operator");
        }
        for (Map.Entry<String, BsonValue> op : operators.entrySet()) {
            if (!op.getKey().startsWith("$") || !op.getValue().isDocument()) {
                throw new IllegalArgumentException("update field " + Checks.quote(op.getKey())
                        + " breaks the rule: a fenced update is update operators ($set, $inc, ...) each with a"
                        + " document of fields, not a replacement document");
            }
            for (String path : op.getValue().asDocument().keySet()) {
                if (path.equals(tokenField) || path.startsWith(tokenField + ".")) {
                    throw new IllegalArgumentException("update " + op.getKey() + " of " + Checks.quote(path)
                            + " breaks the rule: the token field " + Checks.quote(tokenField)
                            + " is the fence's to write");
                }
            }
        }
        BsonValue set = operators.get("$set");
        BsonDocument setFields = set == null ? new BsonDocument() : set.asDocument();
        setFields.put(tokenField, new BsonInt64(token));
        operators.put("$set", setFields);
        return operators;
    }

    @Override
    public String toString() {
        return "MongoFence[" + collection.getNamespace() + ", token field " + tokenField + "]";
    }
}
