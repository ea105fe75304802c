package io.fencelock.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.tck.spi.HandOverProviderChecks;
import io.fencelock.testservers.mongo.MongoServer;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The hand-over's conditional update on the Mongo fixture's server: the old grant ends and the new one
 * is drawn in one update, only from the lease that holds the name; otherwise the document is untouched.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MongoHandOverTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    private MongoServer server;
    private String database;
    private MongoLockBackend backend;
    private MongoClient raw;
    private MongoCollection<Document> documents;

    @BeforeAll
    void open() {
        server = MongoServer.shared();
        database = server.uniqueDatabase("handover");
        backend = backend();
        raw = MongoClients.create(server.uri());
        documents = raw.getDatabase(database).getCollection("fencelock_locks");
    }

    @AfterAll
    void close() {
        backend.close();
        raw.close();
    }

    /** The TCK checks what inspect shows (handOverGrantsANewerTokenAndEndsTheHolder); here, the document. */
    @Test
    void aHandOverWritesTheAcquiresGrant() {
        String name = name();
        String old = lease();
        long first = backend.tryAcquire(name, old, TTL).token();
        Document granted = document(name);
        String next = lease();

        long token = backend.handOver(
                        name, old, next, Duration.ofSeconds(7), LockMetadata.of("batch", "report", Map.of()))
                .token();

        Document handed = document(name);
        assertThat(handed.getString("owner")).isEqualTo(next);
        assertThat(handed.get("token", Number.class).longValue())
                .isEqualTo(first + 1)
                .isEqualTo(token);
        assertThat(handed.get("ttlMs", Number.class).longValue()).isEqualTo(7000);
        assertThat(handed.get("meta", Document.class))
                .isEqualTo(new Document("owner", "batch").append("type", "report"));
        assertThat(handed.getDate("heldSince"))
                .as("the new grant's time")
                .isAfterOrEqualTo(granted.getDate("heldSince"));
        // both stamped by the hand-over's one $currentDate; the in-JVM server reads its clock per field, so
        // they can differ by a millisecond (seen in CI: 21:24:02.674 against .675)
        assertThat(handed.getDate("tokenAt"))
                .as("the new token's time: the grant's")
                .isCloseTo(handed.getDate("heldSince"), 5);
        assertThat(backend.release(name, next)).isTrue();
    }

    /** The TCK checks that a refused hand-over grants nothing (handOverIsOwnerChecked); here, that it writes nothing. */
    @Test
    void aRefusedHandOverWritesNothing() {
        try (MongoLockBackend other = backend()) {
            HandOverProviderChecks.refusedHandOversWriteNothing(
                    backend, other, MongoHandOverTest::name, this::document);
        }
    }

    @Test
    void anotherClientWaitsForTheNewHolderAndGetsTheNameAfterItsRelease() {
        String name = name();
        String old = lease();
        backend.tryAcquire(name, old, TTL);
        try (MongoLockBackend other = backend()) {
            String next = lease();
            long handed =
                    backend.handOver(name, old, next, TTL, LockMetadata.NONE).token();
            AcquireResult refused = other.tryAcquire(name, lease(), TTL);
            assertThat(refused.acquired()).isFalse();
            assertThat(refused.holderRemaining())
                    .as("its next poll is bounded by the new holder's expiry")
                    .isNotNull()
                    .isPositive();
            assertThat(backend.release(name, next)).isTrue();
            assertThat(other.tryAcquire(name, lease(), TTL).token()).isEqualTo(handed + 1);
        }
    }

    @Test
    void bothLeaseIdsAreRequired() {
        assertThatThrownBy(() -> backend.handOver(name(), null, lease(), TTL, LockMetadata.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease ids");
    }

    private Document document(String name) {
        return documents.find(new Document("_id", name)).first();
    }

    private MongoLockBackend backend() {
        return MongoLockBackend.builder().uri(server.uri()).database(database).build();
    }

    private static String name() {
        return "handover-" + UUID.randomUUID();
    }

    private static String lease() {
        return UUID.randomUUID().toString();
    }
}
