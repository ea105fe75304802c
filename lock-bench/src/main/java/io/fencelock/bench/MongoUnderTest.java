package io.fencelock.bench;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import io.fencelock.mongo.MongoLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.testservers.mongo.MongoServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.Document;

/** MongoDB from lock-tck's fixture (env URI, Testcontainers, or the in-JVM mongo-java-server). */
final class MongoUnderTest extends BackendUnderTest {
    private static final int FILL_BATCH = 10_000;
    private static final String RAW_COLLECTION = "bench_raw_locks";
    private static final Document EXPIRED =
            new Document("$lte", List.of(new Document("$add", List.of("$grantedAt", "$ttlMs")), "$$NOW"));

    private final MongoServer server;
    private final String database;

    MongoUnderTest() {
        this(MongoServer.shared());
    }

    private MongoUnderTest(MongoServer server) {
        super("mongo", "io.fencelock.mongo", "polling with backoff (no release signal)", server);
        this.server = server;
        this.database = server.uniqueDatabase("bench");
    }

    @Override
    public LockBackend openBackend() {
        return MongoLockBackend.builder().uri(server.uri()).database(database).build();
    }

    MongoClient openClient() {
        return MongoClients.create(server.uri());
    }

    String database() {
        return database;
    }

    @Override
    protected RawPrimitive openRaw() {
        MongoClient client = openClient();
        MongoCollection<Document> locks = client.getDatabase(database).getCollection(RAW_COLLECTION);
        FindOneAndUpdateOptions upsert = new FindOneAndUpdateOptions().upsert(true);
        return new RawPrimitive() {
            @Override
            public boolean tryAcquire(String name, String owner, Duration ttl) {
                try {
                    locks.findOneAndUpdate(
                            new Document("_id", name)
                                    .append(
                                            "$or",
                                            List.of(new Document("owner", null), new Document("$expr", EXPIRED))),
                            new Document("$set", new Document("owner", owner).append("ttlMs", ttl.toMillis()))
                                    .append("$currentDate", new Document("grantedAt", true))
                                    .append("$inc", new Document("token", 1L)),
                            upsert);
                    return true;
                } catch (MongoCommandException | MongoWriteException e) {
                    if (isDuplicateKey(e)) {
                        return false; // the upsert's insert met the held lock's _id
                    }
                    throw e;
                }
            }

            @Override
            public void release(String name, String owner) {
                locks.updateOne(
                        new Document("_id", name).append("owner", owner),
                        new Document("$set", new Document("owner", null)));
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    static boolean isDuplicateKey(RuntimeException e) {
        if (e instanceof MongoWriteException w) {
            return w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        return e instanceof MongoCommandException c && c.getErrorCode() == 11000;
    }

    @Override
    public String rawPrimitiveDescription() {
        return "one findOneAndUpdate upsert (E11000 = held) + one updateOne to release";
    }

    @Override
    protected List<LockContender.Factory> peers() {
        return List.of(ShedLockPeer.mongo(this::openClient, database));
    }

    @Override
    public long maxScaleNames() {
        return server.isRealMongoDb() ? 1_000_000 : 10_000;
    }

    @Override
    public String limitReason() {
        return server.isRealMongoDb()
                ? ""
                : "the in-JVM mongo-java-server answers in time that grows with the collection and the"
                        + " batch: its planner uses an index only for a filter with exactly the index's keys"
                        + " (AbstractUniqueIndex.canHandle), and a conditional write filters on _id plus its"
                        + " condition (the provider's acquire and release, the raw primitive's, ShedLock's"
                        + " acquire), so it scans every document (a real mongod uses its _id index);"
                        + " name a real server with FENCELOCK_MONGO_URI for the full figures";
    }

    /** mongo-java-server renews a batch in time that grows with batch and collection: 10,000 outlive a 3 s TTL. */
    @Override
    public int maxRenewedLeases() {
        return server.isRealMongoDb() ? Integer.MAX_VALUE : 1_000;
    }

    @Override
    public void fill(long from, long to) {
        try (MongoClient client = openClient()) {
            // into the provider's collection and the raw primitive's alike (the raw one ignores tokenAt)
            List<MongoCollection<Document>> both = List.of(
                    client.getDatabase(database).getCollection("fencelock_locks"),
                    client.getDatabase(database).getCollection(RAW_COLLECTION));
            Date now = new Date();
            List<Document> batch = new ArrayList<>();
            for (long i = from; i < to; i++) {
                batch.add(new Document("_id", FILL_PREFIX + i)
                        .append("owner", null)
                        .append("token", 1L)
                        .append("grantedAt", now)
                        .append("ttlMs", 0L)
                        .append("tokenAt", now));
                if (batch.size() == FILL_BATCH || i == to - 1) {
                    for (MongoCollection<Document> locks : both) {
                        locks.insertMany(batch);
                    }
                    batch.clear();
                }
            }
        }
    }

    @Override
    public void close() {}
}
