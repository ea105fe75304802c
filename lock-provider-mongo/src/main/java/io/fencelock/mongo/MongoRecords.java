package io.fencelock.mongo;

import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * The lock document's fields, and the document as a {@link LockInfo}. Metadata is the subdocument
 * {@code meta: {owner, type, data: [{k, v}, ...]}}: the data as key/value pairs (MongoDB's attribute
 * pattern, what {@code $objectToArray} gives) because its keys may contain dots, which field names
 * cannot carry on every supported server. Values are stored as driver values, never as query text.
 */
final class MongoRecords {
    static final String OWNER = "owner";
    static final String TOKEN = "token";
    static final String GRANTED_AT = "grantedAt";
    static final String TTL_MS = "ttlMs";
    static final String TOKEN_AT = "tokenAt";
    static final String RENEWED_BY = "renewedBy";
    /** The grant's server time ($currentDate of the acquire); renewals keep it, a release removes it. */
    static final String HELD_SINCE = "heldSince";
    /** The grant's owner description, lock type and data; a release removes it. */
    static final String META = "meta";

    private MongoRecords() {}

    /** The {@code meta} subdocument of {@code m}: only the parts it has ({@code {}} for none). */
    static Document meta(LockMetadata m) {
        Document meta = new Document();
        if (m.owner() != null) {
            meta.append("owner", m.owner());
        }
        if (m.type() != null) {
            meta.append("type", m.type());
        }
        if (!m.data().isEmpty()) {
            List<Document> pairs = new ArrayList<>(m.data().size());
            m.data().forEach((k, v) -> pairs.add(new Document("k", k).append("v", v)));
            meta.append("data", pairs);
        }
        return meta;
    }

    /** Reads {@link #meta}; a missing or unreadable subdocument is {@link LockMetadata#NONE}, never a failed inspect. */
    static LockMetadata metadata(Object stored) {
        if (!(stored instanceof Document meta) || meta.isEmpty()) {
            return LockMetadata.NONE;
        }
        try {
            Map<String, String> data = new LinkedHashMap<>();
            if (meta.get("data") instanceof List<?> pairs) {
                for (Object p : pairs) {
                    if (p instanceof Document pair) {
                        data.put(pair.getString("k"), pair.getString("v"));
                    }
                }
            }
            return new LockMetadata(meta.getString("owner"), meta.getString("type"), data);
        } catch (IllegalArgumentException | ClassCastException unreadable) {
            return LockMetadata.NONE;
        }
    }

    /** A document read with the server's {@code $$NOW} as {@code serverNow}. */
    static LockInfo info(Document doc) {
        Instant now = doc.getDate("serverNow").toInstant();
        Instant expiresAt = expiry(doc);
        String owner = doc.getString(OWNER);
        boolean held = owner != null && expiresAt != null && expiresAt.isAfter(now);
        Number token = doc.get(TOKEN, Number.class);
        Date since = held ? doc.getDate(HELD_SINCE) : null;
        return new LockInfo(
                doc.getString("_id"),
                held,
                held ? owner : null,
                token == null ? 0 : token.longValue(),
                held ? expiresAt : null,
                now,
                held ? metadata(doc.get(META)) : LockMetadata.NONE,
                since == null ? null : since.toInstant());
    }

    static Instant expiry(Document doc) {
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
}
