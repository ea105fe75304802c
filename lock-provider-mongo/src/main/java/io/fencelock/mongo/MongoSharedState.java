package io.fencelock.mongo;

import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.spi.SharedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Date;
import java.util.List;
import org.bson.Document;

/**
 * A name's shared grants as one read of its document saw them at the server's time {@code now}:
 * the holders (semaphore permits, readers, a writer, a fair mutex) and the waiters (a waiting
 * writer's intent, a fair waiter's queue place) still live at {@code now}, the waiters in the order
 * they first arrived. The grant rules are those of the in-memory backend's {@code SharedGrants};
 * the decision is taken here, on the client, and written back by {@link MongoShared} only if the
 * document has not changed since the read (its {@code ver} and {@code token}).
 *
 * <p>Entries of both arrays carry {@code at} (a server time) and {@code ttlMs}: an entry is live
 * while {@code at + ttlMs > $$NOW}, the same rule the server applies in its filters.
 */
final class MongoSharedState {
    static final String HOLDERS = "holders";
    static final String WAITERS = "waiters";
    /** The name's kind while anything shared lives: PERMITS (with {@link #LIMIT}), READ (read-write) or EXCLUSIVE. */
    static final String KIND = "kind";

    static final String LIMIT = "limit";
    /** Raised by every change of the holders or waiters: what a conditional write compares. */
    static final String VER = "ver";
    /** The document's own server time, written when a shared request creates it. */
    static final String TOUCHED_AT = "touchedAt";

    static final String SERVER_NOW = "serverNow";
    // fields of a holder or a waiter
    static final String ID = "id";
    static final String MODE = "mode";
    static final String PERMITS = "permits";
    static final String AT = "at";
    static final String SINCE = "since";
    static final String QUEUED = "queued";

    /** The outcome of a request: the new holder, or the time until the earliest expiry that may change it; whether to write. */
    record Outcome(Document granted, Duration remaining, boolean changes) {}

    private final Document doc;
    private final Date now;
    private final List<Document> holders = new ArrayList<>();
    private final List<Document> waiters = new ArrayList<>();
    private final LockMode kind;
    private final int limit;

    /** {@code doc} as read with the server's {@code $$NOW} in {@link #SERVER_NOW}. */
    MongoSharedState(Document doc) {
        this.doc = doc;
        this.now = doc.getDate(SERVER_NOW);
        liveEntries(doc, HOLDERS, now.getTime(), holders);
        liveEntries(doc, WAITERS, now.getTime(), waiters);
        LockMode k;
        try {
            k = doc.getString(KIND) == null ? LockMode.EXCLUSIVE : LockMode.valueOf(doc.getString(KIND));
        } catch (IllegalArgumentException unknown) {
            k = LockMode.EXCLUSIVE;
        }
        this.kind = k;
        this.limit = number(doc.get(LIMIT));
    }

    private static void liveEntries(Document doc, String field, long now, List<Document> out) {
        if (doc.get(field) instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof Document e && expiry(e) > now) {
                    out.add(e);
                }
            }
        }
    }

    static long expiry(Document entry) {
        Date at = entry.getDate(AT);
        return at == null ? Long.MIN_VALUE : at.getTime() + number(entry.get(MongoRecords.TTL_MS));
    }

    static int number(Object value) {
        return value instanceof Number n ? n.intValue() : 0;
    }

    static long token(Document d) {
        return d.get(MongoRecords.TOKEN) instanceof Number n ? n.longValue() : 0;
    }

    /** The kind a request asks the name to be. */
    static LockMode kindOf(LockMode mode) {
        return mode == LockMode.WRITE ? LockMode.READ : mode;
    }

    static String describe(LockMode kind, int limit) {
        return switch (kind) {
            case PERMITS -> "a semaphore of " + limit + " permits";
            case READ, WRITE -> "a read-write lock";
            case EXCLUSIVE -> "a mutex";
        };
    }

    /** Refuses a request of another kind (or another N) while anything shared of this name lives. */
    void requireKind(String name, LockMode requestedKind, int requestedLimit) {
        if ((!holders.isEmpty() || !waiters.isEmpty()) && (kind != requestedKind || limit != requestedLimit)) {
            throw new IllegalArgumentException("lock '" + name + "' is " + describe(kind, limit) + "; a request for "
                    + describe(requestedKind, requestedLimit) + " is refused");
        }
    }

    /** The ordinary mutex holder's remaining time, or null when none holds. */
    Duration mutexRemaining() {
        Instant expiry = MongoRecords.expiry(doc);
        if (doc.getString(MongoRecords.OWNER) == null || expiry == null || !expiry.isAfter(now.toInstant())) {
            return null;
        }
        return Duration.between(now.toInstant(), expiry);
    }

    /** The time until the earliest live shared holder's expiry, or null when none holds. */
    Duration holdersRemaining() {
        return holders.stream()
                .map(h -> Duration.ofMillis(expiry(h) - now.getTime()))
                .min(Duration::compareTo)
                .orElse(null);
    }

    /**
     * Grants {@code request} when the mutex is free, the holders leave room, no writer's intent holds
     * back a reader, and (fair) no live queue place comes before the request's; else records the
     * waiter (when it waits). Changes this state to what the document is to become.
     */
    Outcome decide(String name, String leaseId, long ttlMs, SharedRequest request, LockMetadata md) {
        LockMode mode = request.mode();
        LockMode requested = kindOf(mode);
        Duration mutexHeld = mutexRemaining();
        if (mutexHeld != null && requested != LockMode.EXCLUSIVE) {
            throw new IllegalArgumentException("lock '" + name + "' is a mutex; a request for "
                    + describe(requested, request.limit()) + " is refused");
        }
        requireKind(name, requested, request.limit());
        String me = request.waiterId();
        boolean room = mutexHeld == null
                && switch (mode) {
                    case PERMITS -> permitsHeld() + request.permits() <= request.limit();
                    case READ -> holders.stream().noneMatch(h -> is(h, LockMode.WRITE)) && !writerIntentAhead(me);
                    case WRITE, EXCLUSIVE -> holders.isEmpty();
                };
        if (room && request.fair()) {
            room = !queuedAhead(me);
        }
        int mine = indexOf(waiters, me);
        if (room) {
            if (mine >= 0) {
                waiters.remove(mine);
            }
            Document h = new Document(ID, leaseId)
                    .append(MODE, mode.name())
                    .append(PERMITS, request.permits())
                    .append(MongoRecords.TOKEN, token(doc) + 1)
                    .append(MongoRecords.TOKEN_AT, now)
                    .append(AT, now)
                    .append(MongoRecords.TTL_MS, ttlMs)
                    .append(SINCE, now)
                    .append(MongoRecords.META, MongoRecords.meta(md));
            holders.add(h);
            return new Outcome(h, null, true);
        }
        boolean changes = request.waits() && (mode == LockMode.WRITE || request.fair());
        if (changes) {
            boolean queued = request.fair()
                    || mine >= 0 && Boolean.TRUE.equals(waiters.get(mine).getBoolean(QUEUED));
            Document w = new Document(ID, me)
                    .append(MODE, mode.name())
                    .append(QUEUED, queued)
                    .append(AT, now)
                    .append(MongoRecords.TTL_MS, ttlMs);
            if (mine >= 0) {
                waiters.set(mine, w); // a waiter keeps its place when it comes again
            } else {
                waiters.add(w);
            }
        }
        long soonest = mutexHeld == null ? Long.MAX_VALUE : mutexHeld.toMillis();
        for (Document e : holders) {
            soonest = Math.min(soonest, expiry(e) - now.getTime());
        }
        for (Document e : waiters) {
            soonest = Math.min(soonest, expiry(e) - now.getTime());
        }
        return new Outcome(null, soonest == Long.MAX_VALUE ? null : Duration.ofMillis(soonest), changes);
    }

    /** What {@link #decide} made of the document: its live holders and waiters, kind and limit (and token, after a grant). */
    Document changes(SharedRequest request, Outcome outcome) {
        Document set = new Document(HOLDERS, holders)
                .append(WAITERS, waiters)
                .append(KIND, kindOf(request.mode()).name())
                .append(LIMIT, request.limit());
        if (outcome.granted() != null) {
            set.append(MongoRecords.TOKEN, outcome.granted().get(MongoRecords.TOKEN));
        }
        return set;
    }

    private static boolean is(Document entry, LockMode mode) {
        return mode.name().equals(entry.getString(MODE));
    }

    private static int indexOf(List<Document> entries, String id) {
        for (int i = 0; i < entries.size(); i++) {
            if (id.equals(entries.get(i).getString(ID))) {
                return i;
            }
        }
        return -1;
    }

    private int permitsHeld() {
        return holders.stream().mapToInt(h -> number(h.get(PERMITS))).sum();
    }

    /** A live writer's intent that a reader must wait behind: any but one queued after the reader's own place. */
    private boolean writerIntentAhead(String me) {
        boolean passedMe = false;
        for (Document w : waiters) {
            if (me.equals(w.getString(ID))) {
                passedMe = true;
            } else if (is(w, LockMode.WRITE) && !(passedMe && Boolean.TRUE.equals(w.getBoolean(QUEUED)))) {
                return true;
            }
        }
        return false;
    }

    /** Whether a live queue place of another waiter comes before {@code me}'s (or exists, when {@code me} has none). */
    private boolean queuedAhead(String me) {
        for (Document w : waiters) {
            if (me.equals(w.getString(ID))) {
                return false;
            }
            if (Boolean.TRUE.equals(w.getBoolean(QUEUED))) {
                return true;
            }
        }
        return false;
    }

    /** The document as a {@link LockInfo}: every live shared holder, or else the mutex record. */
    static LockInfo info(Document doc) {
        MongoSharedState s = new MongoSharedState(doc);
        if (s.holders.isEmpty()) {
            return MongoRecords.info(doc);
        }
        List<LockHolder> shown = new ArrayList<>(s.holders.size());
        for (Document h : s.holders) {
            LockMode mode;
            try {
                mode = LockMode.valueOf(h.getString(MODE));
            } catch (IllegalArgumentException | NullPointerException unknown) {
                continue; // not a holder this provider wrote
            }
            Date since = h.getDate(SINCE);
            shown.add(new LockHolder(
                    h.getString(ID),
                    mode,
                    Math.max(1, number(h.get(PERMITS))),
                    token(h),
                    Instant.ofEpochMilli(expiry(h)),
                    MongoRecords.metadata(h.get(MongoRecords.META)),
                    since == null ? null : since.toInstant()));
        }
        LockHolder latest =
                shown.stream().max(Comparator.comparingLong(LockHolder::token)).orElse(null);
        if (latest == null) {
            return MongoRecords.info(doc);
        }
        return new LockInfo(
                doc.getString("_id"),
                true,
                latest.leaseId(),
                token(doc),
                latest.expiresAt(),
                s.now.toInstant(),
                latest.metadata(),
                latest.heldSince(),
                s.kind,
                s.kind == LockMode.PERMITS ? s.limit : 0,
                shown);
    }
}
