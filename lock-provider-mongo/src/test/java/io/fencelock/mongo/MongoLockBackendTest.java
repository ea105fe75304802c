package io.fencelock.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.tck.CredentialChecks;
import io.fencelock.tck.spi.LockBackendSpiTemplate;
import io.fencelock.tck.spi.SpiHarness;
import io.fencelock.testservers.mongo.MongoServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The SPI template's tests and the provider's own promises, on the Mongo fixture's server (the in-JVM
 * mongo-java-server on these machines).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MongoLockBackendTest extends LockBackendSpiTemplate {
    private MongoServer server;
    private String database;
    private MongoLockBackend backend;
    private SpiHarness harness;

    @BeforeAll
    void open() {
        server = MongoServer.shared();
        database = server.uniqueDatabase("provider");
        backend =
                MongoLockBackend.builder().uri(server.uri()).database(database).build();
        harness = SpiHarness.builder(backend, "mongo")
                .uri(server.uri(), Map.of("database", database))
                .unreachableUri(password -> "mongodb://app:" + CredentialChecks.encoded(password)
                        + "@127.0.0.1:1/?serverSelectionTimeoutMS=1000")
                .malformedPortUris(secret ->
                        List.of("mongodb://app:" + secret + "@127.0.0.1:notaport", "mongodb://127.0.0.1:70000"))
                .badSettings(Map.of(Map.of("collection", "a;b"), "'a;b'", Map.of("database", "bad.name"), "database"))
                .misspelledProperty("table")
                .build();
    }

    @Override
    protected SpiHarness harness() {
        return harness;
    }

    @AfterAll
    void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private static String name() {
        return "t-" + UUID.randomUUID();
    }

    @Test
    void tokensRiseAcrossReleaseExpiryAndTakeoverAndTheDocumentStays() throws Exception {
        String name = name();
        long last = 0;
        for (int i = 0; i < 3; i++) {
            String id = lease();
            AcquireResult r = backend.tryAcquire(name, id, Duration.ofSeconds(5));
            assertThat(r.acquired()).isTrue();
            assertThat(r.token()).isGreaterThan(last);
            last = r.token();
            assertThat(backend.release(name, id)).isTrue();
            assertThat(backend.release(name, id)).as("second release").isFalse();
            LockInfo released = backend.inspect(name).orElseThrow();
            assertThat(released.held()).isFalse();
            assertThat(released.leaseId()).isNull();
            assertThat(released.token())
                    .as("token kept by the released document")
                    .isEqualTo(last);
        }
        String expiring = lease();
        AcquireResult first = backend.tryAcquire(name, expiring, Duration.ofMillis(150));
        assertThat(backend.tryAcquire(name, lease(), Duration.ofSeconds(5)).acquired())
                .as("taken while live")
                .isFalse();
        Thread.sleep(200); // the TTL is the behaviour under test
        String taker = lease();
        AcquireResult takeover = backend.tryAcquire(name, taker, Duration.ofSeconds(5));
        assertThat(takeover.acquired()).isTrue();
        assertThat(takeover.token()).isEqualTo(first.token() + 1);
        assertThat(backend.release(name, expiring))
                .as("release by the expired holder")
                .isFalse();
        assertThat(backend.inspect(name).orElseThrow().holder()).contains(taker);
    }

    @Test
    void grantAndRefusalReportServerSideTimes() {
        String name = name();
        String holder = lease();
        AcquireResult granted = backend.tryAcquire(name, holder, Duration.ofSeconds(10));
        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(granted.expiresAt()).isEqualTo(info.expiresAt());
        assertThat(Duration.between(info.serverTime(), info.expiresAt()))
                .isBetween(Duration.ofSeconds(9), Duration.ofSeconds(10));

        AcquireResult refused = backend.tryAcquire(name, lease(), Duration.ofSeconds(1));
        assertThat(refused.acquired()).isFalse();
        assertThat(refused.holderRemaining())
                .as("the holder's remaining time, on the server's clock")
                .isBetween(Duration.ofSeconds(8), Duration.ofSeconds(10));
        LockInfo afterRefusal = backend.inspect(name).orElseThrow();
        assertThat(afterRefusal)
                .as("a refusal changes nothing")
                .isEqualTo(new LockInfo(
                        name,
                        true,
                        holder,
                        granted.token(),
                        info.expiresAt(),
                        afterRefusal.serverTime(),
                        LockMetadata.NONE,
                        info.heldSince()));
        assertThat(backend.inspect(name()).isEmpty()).isTrue();
    }

    /**
     * Metadata is stored as driver values (text that looks like an operator or a field path stays
     * text, keys with dots are fine), kept with the grant time by renewals, replaced by a takeover and
     * removed from the document by a release.
     */
    @Test
    void metadataIsStoredAsValuesKeptByRenewalsAndRemovedByRelease() throws Exception {
        String name = name();
        String holder = lease();
        LockMetadata meta = LockMetadata.of(
                "$$NOW {\"$gt\": 1}", "a.b:c", Map.of("a.b", "$token", "x-y", "{\"$where\": \"1\"}", "e", ""));
        backend.tryAcquire(name, holder, Duration.ofMillis(400), meta);
        LockInfo held = backend.inspect(name).orElseThrow();
        assertThat(held.metadata()).isEqualTo(meta);
        assertThat(held.heldSince()).isNotNull().isBeforeOrEqualTo(held.serverTime());
        try (MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> raw = client.getDatabase(database).getCollection("fencelock_locks");
            Document stored = raw.find(new Document("_id", name)).first();
            assertThat(stored.get("meta", Document.class).getString("owner")).isEqualTo(meta.owner());
            assertThat(stored.getDate("heldSince").toInstant()).isEqualTo(held.heldSince());

            Thread.sleep(5); // a later server time for the renewal than for the grant
            assertThat(backend.renew(List.of(new RenewRequest(name, holder, Duration.ofMillis(400), null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            LockInfo renewed = backend.inspect(name).orElseThrow();
            assertThat(renewed.metadata()).isEqualTo(meta);
            assertThat(renewed.heldSince()).as("held since, after a renewal").isEqualTo(held.heldSince());

            Thread.sleep(450); // the TTL is the behaviour under test: a takeover after expiry
            String taker = lease();
            assertThat(backend.tryAcquire(name, taker, Duration.ofSeconds(5)).acquired())
                    .isTrue();
            LockInfo taken = backend.inspect(name).orElseThrow();
            assertThat(taken.metadata())
                    .as("the taker's metadata, not the last holder's")
                    .isEqualTo(LockMetadata.NONE);
            assertThat(taken.heldSince()).isAfter(held.heldSince());

            assertThat(backend.release(name, taker)).isTrue();
            Document released = raw.find(new Document("_id", name)).first();
            assertThat(released).doesNotContainKeys("meta", "heldSince");
            assertThat(backend.inspect(name).orElseThrow().metadata()).isEqualTo(LockMetadata.NONE);
        }
    }

    @Test
    void ttlIsRoundedUpToWholeMilliseconds() {
        assertThat(MongoRecords.millis(Duration.ofNanos(1))).isEqualTo(1);
        assertThat(MongoRecords.millis(Duration.ofMillis(250))).isEqualTo(250);
        assertThat(MongoRecords.millis(Duration.ofMillis(250).plusNanos(1))).isEqualTo(251);
    }

    @Test
    void batchOfAThousandRenewalsIsOneCallAndTellsRenewedFromRejected() throws Exception {
        int n = 1000;
        List<RenewRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = "batch-" + i + "-" + UUID.randomUUID();
            String id = lease();
            assertThat(backend.tryAcquire(name, id, Duration.ofSeconds(30)).acquired())
                    .isTrue();
            requests.add(new RenewRequest(name, id, Duration.ofSeconds(60), null));
        }
        // a foreign lease id, an expired lease, a released lease and a name that never existed are rejected
        String foreign = requests.get(0).name();
        requests.add(new RenewRequest(foreign, lease(), Duration.ofSeconds(60), null));
        String expiredName = name();
        String expiredId = lease();
        backend.tryAcquire(expiredName, expiredId, Duration.ofMillis(50));
        String releasedName = name();
        String releasedId = lease();
        backend.tryAcquire(releasedName, releasedId, Duration.ofSeconds(30));
        backend.release(releasedName, releasedId);
        Thread.sleep(80); // let the 50 ms lease expire
        requests.add(new RenewRequest(expiredName, expiredId, Duration.ofSeconds(60), null));
        requests.add(new RenewRequest(releasedName, releasedId, Duration.ofSeconds(60), null));
        requests.add(new RenewRequest(name(), lease(), Duration.ofSeconds(60), null));

        long started = System.nanoTime();
        List<RenewResult> results = backend.renew(requests);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.println("[mongo] renewal of " + requests.size() + " leases: " + took.toMillis() + " ms");

        assertThat(results).hasSize(n + 4);
        assertThat(results.subList(0, n)).allMatch(RenewResult::renewed);
        assertThat(results.subList(n, n + 4)).noneMatch(RenewResult::renewed);
        LockInfo after = backend.inspect(requests.get(7).name()).orElseThrow();
        assertThat(results.get(7).expiresAt()).isEqualTo(after.expiresAt());
        assertThat(Duration.between(after.serverTime(), after.expiresAt())).isGreaterThan(Duration.ofSeconds(50));
        assertThat(backend.inspect(expiredName).orElseThrow().held())
                .as("an expired lease stays expired")
                .isFalse();
        assertThat(backend.inspect(foreign).orElseThrow().holder())
                .contains(requests.get(0).leaseId());
    }

    @Test
    void eightThreadsRacingForOneNameGetExactlyOneGrantAndCleanRefusals() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<LockBackend> backends = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                backends.add(MongoLockBackend.builder()
                        .uri(server.uri())
                        .database(database)
                        .build());
            }
            for (int round = 0; round < 40; round++) {
                String name = name();
                // odd rounds race for a lock whose holder has just expired (an update), even ones for a new name (an
                // insert)
                long before = 0;
                if (round % 2 == 1) {
                    before = backend.tryAcquire(name, lease(), Duration.ofMillis(20))
                            .token();
                    Thread.sleep(30);
                }
                CyclicBarrier start = new CyclicBarrier(8);
                List<Future<AcquireResult>> attempts = new ArrayList<>();
                for (LockBackend b : backends) {
                    attempts.add(pool.submit(() -> {
                        start.await(5, TimeUnit.SECONDS);
                        return b.tryAcquire(name, lease(), Duration.ofSeconds(10));
                    }));
                }
                List<AcquireResult> results = new ArrayList<>();
                for (Future<AcquireResult> f : attempts) {
                    results.add(f.get(20, TimeUnit.SECONDS)); // an E11000 escaping as an exception fails here
                }
                assertThat(results.stream().filter(AcquireResult::acquired))
                        .as("grants in round " + round)
                        .hasSize(1);
                AcquireResult winner = results.stream()
                        .filter(AcquireResult::acquired)
                        .findFirst()
                        .orElseThrow();
                assertThat(winner.token()).isEqualTo(before + 1);
                assertThat(results.stream().filter(r -> !r.acquired()))
                        .allMatch(r -> r.holderRemaining() == null
                                || !r.holderRemaining().isNegative());
            }
        } finally {
            pool.shutdownNow();
            backends.forEach(LockBackend::close);
        }
    }

    @Test
    void listUsesThePrefixLiterallyAndSortsByName() {
        String base = "lst-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> names = List.of(base + ".b", base + ".a", base + "Xa", base + ".c+d");
        for (String n : names) {
            backend.tryAcquire(n, lease(), Duration.ofSeconds(10));
        }
        String released = base + ".r";
        String id = lease();
        backend.tryAcquire(released, id, Duration.ofSeconds(10));
        backend.release(released, id);
        assertThat(backend.list(base + ".").stream().map(LockInfo::name))
                .containsExactly(base + ".a", base + ".b", base + ".c+d");
        assertThat(backend.list(base + ".c+")).extracting(LockInfo::name).containsExactly(base + ".c+d");
        assertThat(backend.list(base)).hasSize(4).allMatch(LockInfo::held);
        assertThat(MongoRecords.quote("a.b+c*")).isEqualTo("a\\.b\\+c\\*");
    }

    @Test
    void capabilitiesComeFromWhatTheServerSays() {
        assertThat(backend.capabilities())
                .contains(
                        Capability.FENCING,
                        Capability.SERVER_TIME,
                        Capability.BATCH_RENEW,
                        Capability.TOKEN_PERIOD,
                        Capability.LINEARIZABLE)
                .doesNotContain(Capability.WAKE_ON_RELEASE, Capability.PURGE_FREE);
        if (server.isRealMongoDb()) {
            assertThat(backend.capabilities().contains(Capability.DURABLE_TOKENS))
                    .isEqualTo(server.isPersistent());
        } else {
            assertThat(backend.serverDescription())
                    .startsWith("mongo-java-server")
                    .contains("nothing survives a restart");
            assertThat(backend.capabilities()).doesNotContain(Capability.DURABLE_TOKENS);
        }
        // the rule itself
        assertThat(new MongoServerFacts("MongoDB 7.0.14", "replica set rs0", true, false).durable())
                .isTrue();
        assertThat(new MongoServerFacts("MongoDB 7.0.14", "standalone", true, false).durable())
                .isTrue();
        assertThat(new MongoServerFacts("MongoDB 7.0.14", "standalone", false, false).durable())
                .as("inMemory storage engine")
                .isFalse();
        assertThat(new MongoServerFacts("MongoDB 7.0.14", "standalone", null, false).durable())
                .as("serverStatus not allowed")
                .isFalse();
        assertThat(new MongoServerFacts("mongo-java-server", "standalone", null, true).durable())
                .isFalse();
    }

    @Test
    void theInJvmServerLosesTokensOnRestartWhichIsWhyDurableTokensIsNotClaimed() {
        if (server.isRealMongoDb()) {
            return; // a real server is not restarted by these tests
        }
        try (MongoServer own = MongoServer.start(MongoServer.Source.EMBEDDED);
                MongoLockBackend b = MongoLockBackend.builder()
                        .uri(own.uri())
                        .timeout(Duration.ofSeconds(3))
                        .build()) {
            assertThat(b.capabilities()).doesNotContain(Capability.DURABLE_TOKENS);
            String name = name();
            String id = lease();
            b.tryAcquire(name, id, Duration.ofSeconds(5));
            b.release(name, id);
            assertThat(b.tryAcquire(name, lease(), Duration.ofSeconds(5)).token())
                    .isEqualTo(2);
            own.restartLosingData();
            // the pooled connection died with the old server: the first call fails, retryably (the engine retries)
            AcquireResult after;
            try {
                after = b.tryAcquire(name, lease(), Duration.ofSeconds(5));
            } catch (LockBackendException e) {
                assertThat(e.isRetryable())
                        .as("failure after the restart: " + e.getMessage())
                        .isTrue();
                after = b.tryAcquire(name, lease(), Duration.ofSeconds(5));
            }
            assertThat(after.token())
                    .as("the token after a restart of the in-memory server: back to 1")
                    .isEqualTo(1);
        }
    }

    @Test
    void aTtlIndexOnTheLockCollectionIsRefused() {
        String collection = "with_ttl_" + UUID.randomUUID().toString().substring(0, 8);
        try (MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> c = client.getDatabase(database).getCollection(collection);
            c.createIndex(new Document("grantedAt", 1), new IndexOptions().expireAfter(60L, TimeUnit.SECONDS));
        }
        assertThatThrownBy(() -> MongoLockBackend.builder()
                        .uri(server.uri())
                        .database(database)
                        .collection(collection)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("TTL index")
                .hasMessageContaining("reset");
    }

    @Test
    void badSettingsAreRejectedBeforeAnyIo() {
        // nothing listens on port 1: a connection attempt would fail differently, and later
        MongoLockBackend.Builder offline = MongoLockBackend.builder().uri("mongodb://127.0.0.1:1");
        for (String bad : List.of("", "a.b", "x$y", "has space", "dash-ed", "1starts", "é", "d".repeat(64))) {
            assertThatThrownBy(() -> offline.database(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("database")
                    .hasMessageContaining("[A-Za-z_][A-Za-z0-9_]*");
        }
        for (String bad : List.of("", "locks.x", "$cmd", "c".repeat(121), "sp ace")) {
            assertThatThrownBy(() -> offline.collection(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("collection")
                    .hasMessageContaining("1 to 120");
        }
        assertThatThrownBy(() -> offline.database(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> offline.timeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MongoLockBackend.builder()
                        .uri("mongodb://127.0.0.1:1/bad-db")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("database");
        assertThatThrownBy(() -> MongoLockBackend.builder().uri("postgres://x"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MongoLockBackend.builder().build()).isInstanceOf(IllegalArgumentException.class);

        LockBackendProvider provider = new MongoLockBackendProvider();
        assertThatThrownBy(() -> provider.open("mongodb://127.0.0.1:1", Map.of("collection", "a;b")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a;b'");
        assertThatThrownBy(() -> provider.open("mongodb://127.0.0.1:1", Map.of("table", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown")
                .hasMessageContaining("table");
        assertThatThrownBy(() -> provider.open("jdbc:mysql://x", Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void messagesNeverCarryCredentials() {
        String secret = "s3cretPassw0rd";
        String user = "aliceUser";
        // credentials twice, a malformed URI, an authentication the server cannot do: none may echo them
        Throwable twice = catchThrowable(() -> MongoLockBackend.builder()
                .uri("mongodb://" + user + ":" + secret + "@127.0.0.1:1")
                .user(user)
                .password(secret)
                .build());
        Throwable malformed = catchThrowable(() -> MongoLockBackend.builder()
                .uri("mongodb://" + user + ":" + secret + "@")
                .build());
        Throwable auth = catchThrowable(() -> MongoLockBackend.builder()
                .uri(server.uri().replace("mongodb://", "mongodb://" + user + ":" + secret + "@"))
                .timeout(Duration.ofSeconds(2))
                .build());
        Throwable viaProvider = catchThrowable(() -> new MongoLockBackendProvider()
                .open(server.uri(), Map.of("user", user, "password", secret, "database", "bad.name")));
        for (Throwable t : List.of(twice, malformed, auth, viaProvider)) {
            assertThat(t).isNotNull();
            assertThat(fullText(t)).doesNotContain(secret);
            assertThat(t.getMessage()).doesNotContain(user + ":");
        }
        assertThat(twice).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("once");
        assertThat(malformed).isInstanceOf(IllegalArgumentException.class);
        assertThat(auth).isInstanceOf(LockBackendException.class);
        System.out.println("[mongo] authentication failure as reported: " + auth.getMessage());
    }

    @Test
    void specialAndEncodedPasswordsStayOutWhileTheDriversWordsArriveIntact() {
        String user = "u";
        String secret = CredentialChecks.special("mongo");
        String hostPort = server.uri().substring("mongodb://".length()).split("[/?]")[0];
        // raw: the driver refuses the user-info in its own words ("...must be urlencoded"), not a letter of them lost
        Throwable raw = catchThrowable(() -> MongoLockBackend.builder()
                .uri("mongodb://" + user + ":p@ss@" + hostPort)
                .build());
        assertThat(raw)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("invalid user information")
                .hasMessageContaining("must be urlencoded");
        assertThat(raw.getMessage()).doesNotContain("p@ss");
        // raw with '/', '?', '#': the driver splits it elsewhere and quotes pieces of it; those never show
        for (String uri : List.of(
                "mongodb://" + user + ":" + secret + "@" + hostPort,
                "mongodb://" + user + ":" + secret + "@" + hostPort + "/db?authSource=admin",
                "mongodb://" + user + ":" + CredentialChecks.encoded(secret) + "@" + hostPort + "/?password1="
                        + CredentialChecks.encoded(secret)
                        + "&password2=x&password3=y&serverSelectionTimeoutMS=2000")) {
            Throwable failed = catchThrowable(() -> MongoLockBackend.builder()
                    .uri(uri)
                    .timeout(Duration.ofSeconds(2))
                    .build()
                    .close());
            assertThat(failed).as("no such credentials on the server").isNotNull();
            CredentialChecks.assertNoSecret(failed, secret);
            for (String piece : secret.split("[@:/?#&=;,%]")) {
                if (piece.length() > 3) {
                    assertThat(fullText(failed)).doesNotContain(piece);
                }
            }
        }
        // a port that is no port: refused before any I/O, naming it
        assertThatThrownBy(() -> MongoLockBackend.builder()
                        .uri("mongodb://" + user + ":" + secret + "@127.0.0.1:notaport")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port 'notaport'")
                .hasMessageNotContaining(secret)
                .hasMessageNotContaining(CredentialChecks.encoded(secret));
    }

    private static String fullText(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append('\n');
        }
        return sb.toString();
    }

    @Test
    void serviceLoaderFindsTheProviderByUri() {
        LockBackendProvider found = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.accepts(server.uri()))
                .findFirst()
                .orElseThrow();
        assertThat(found.name()).isEqualTo("mongo");
        assertThat(found.accepts("mongodb+srv://cluster0.example.net/app")).isTrue();
        assertThat(found.accepts("jdbc:postgresql://x")).isFalse();
        try (LockBackend b = found.open(server.uri(), Map.of("database", database, "collection", "via_loader"))) {
            String name = name();
            assertThat(b.tryAcquire(name, lease(), Duration.ofSeconds(5)).token())
                    .isEqualTo(1);
            assertThat(b.inspect(name)).map(LockInfo::held).contains(true);
            assertThat(Duration.between(b.inspect(name).orElseThrow().serverTime(), Instant.now())
                            .abs())
                    .isLessThan(Duration.ofSeconds(5));
        }
    }
}
