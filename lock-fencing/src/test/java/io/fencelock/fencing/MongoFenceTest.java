package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import io.fencelock.testservers.mongo.MongoServer;
import java.util.Map;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link MongoFence} on the MongoDB the fixtures find (the in-JVM server by default, a real one by FENCELOCK_MONGO_URI). */
class MongoFenceTest {
    private static MongoClient client;
    private static MongoCollection<Document> docs;
    private MongoFence fence;
    private String id;

    @BeforeAll
    static void connect() {
        MongoServer server = MongoServer.shared();
        client = MongoClients.create(server.uri());
        docs = client.getDatabase(server.uniqueDatabase("mongo_fence")).getCollection("docs");
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @BeforeEach
    void freshDocument() {
        fence = MongoFence.of(docs);
        id = "doc-" + UUID.randomUUID();
    }

    private Document stored() {
        return docs.find(Filters.eq("_id", id)).first();
    }

    @Test
    void setAcceptsEqualAndHigherTokensAndRefusesALowerOneWritingNothing() {
        fence.set(id, 5, Map.of("body", "a"));
        fence.set(id, 5, Map.of("body", "b"));
        fence.set(id, 6, Map.of("body", "c", "extra", 1));
        StaleTokenException e =
                catchThrowableOfType(StaleTokenException.class, () -> fence.set(id, 4, Map.of("body", "stale")));
        assertThat(e.offeredToken()).isEqualTo(4);
        assertThat(e.currentToken()).isEqualTo(6);
        assertThat(e.resource()).isEqualTo(id);
        assertThat(stored())
                .containsEntry("body", "c")
                .containsEntry("extra", 1)
                .containsEntry("fenceToken", 6L);
        assertThat(fence.currentToken(id)).hasValue(6);
    }

    @Test
    void updateAppliesAnyOperatorsWithTheTokenAndLeavesTheCallersUpdateAsItWas() {
        Document update = new Document("$inc", new Document("views", 1)).append("$set", new Document("body", "x"));
        fence.update(id, 3, update);
        fence.update(id, 3, update);
        fence.update(id, 7, Updates.combine(Updates.inc("views", 10), Updates.unset("body")));
        assertThatThrownBy(() -> fence.update(id, 6, Updates.inc("views", 100)))
                .isInstanceOf(StaleTokenException.class);
        assertThat(stored())
                .containsEntry("views", 12)
                .doesNotContainKey("body")
                .containsEntry("fenceToken", 7L);
        assertThat(update)
                .isEqualTo(new Document("$inc", new Document("views", 1)).append("$set", new Document("body", "x")));
    }

    @Test
    void clearKeepsOnlyTheTokenSoAStaleWriterCannotBringTheDataBack() {
        fence.set(id, 3, Map.of("body", "data"));
        assertThatThrownBy(() -> fence.clear(id, 2)).isInstanceOf(StaleTokenException.class);
        assertThat(stored()).containsEntry("body", "data");
        assertThat(fence.clear(id, 4)).isTrue();
        assertThat(stored()).containsOnlyKeys("_id", "fenceToken").containsEntry("fenceToken", 4L);
        assertThatThrownBy(() -> fence.set(id, 3, Map.of("body", "resurrected")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(stored()).containsOnlyKeys("_id", "fenceToken");
        String never = "never-" + UUID.randomUUID();
        assertThat(fence.clear(never, 9)).isFalse();
        assertThat(fence.currentToken(never)).hasValue(9);
    }

    @Test
    void aDocumentFromBeforeTheFenceTakesAnyPositiveToken() {
        docs.insertOne(new Document("_id", id).append("body", "legacy"));
        assertThat(fence.currentToken(id)).isEmpty();
        fence.set(id, 1, Map.of("body", "fenced"));
        assertThat(stored()).containsEntry("body", "fenced").containsEntry("fenceToken", 1L);
    }

    @Test
    void tokensCompareExactlyOverTheWholeRangeOfLong() {
        long big = (1L << 53) + 1; // as a double it equals 2^53
        fence.set(id, big, Map.of("body", "big"));
        assertThatThrownBy(() -> fence.set(id, big - 1, Map.of("body", "stale")))
                .isInstanceOf(StaleTokenException.class);
        fence.set(id, Long.MAX_VALUE, Map.of("body", "max"));
        assertThatThrownBy(() -> fence.set(id, Long.MAX_VALUE - 1, Map.of("body", "stale")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(stored()).containsEntry("body", "max");
        assertThat(fence.currentToken(id)).hasValue(Long.MAX_VALUE);
    }

    @Test
    void anotherUniqueIndexRefusingTheWriteIsNotAStaleToken() {
        MongoCollection<Document> unique = client.getDatabase(
                        MongoServer.shared().uniqueDatabase("mongo_fence_unique"))
                .getCollection("docs");
        unique.createIndex(Indexes.ascending("email"), new IndexOptions().unique(true));
        MongoFence onUnique = MongoFence.of(unique, "token");
        onUnique.set("a", 1, Map.of("email", "x@example.org"));
        assertThatThrownBy(() -> onUnique.set("b", 1, Map.of("email", "x@example.org")))
                .isInstanceOf(MongoWriteException.class);
        assertThat(onUnique.currentToken("b")).isEmpty();
        assertThat(onUnique.currentToken("a")).hasValue(1);
    }

    @Test
    void aFieldNamedForTheTokenIsUsed() {
        MongoFence custom = MongoFence.of(docs, "lockToken");
        custom.set(id, 8, Map.of("body", "b"));
        assertThat(stored()).containsEntry("lockToken", 8L).doesNotContainKey("fenceToken");
        assertThat(custom.tokenField()).isEqualTo("lockToken");
        assertThat(custom.currentToken(id)).hasValue(8);
    }
}
