package io.fencelock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fencelock.Capability;
import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.MetadataCodec;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.WakeUpSubscription;
import io.fencelock.tck.CredentialChecks;
import io.fencelock.tck.SpiChecks;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.tck.spi.LockBackendSpiTemplate;
import io.fencelock.tck.spi.SpiHarness;
import io.fencelock.testservers.redis.LettuceClients;
import io.fencelock.testservers.redis.RedisServer;
import io.fencelock.testservers.redis.RedisServer.Persistence;
import io.fencelock.testservers.redis.RedisServer.Source;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SPI template's tests, and what is Redis's own: keys and hash tags, Pub/Sub, persistence, scripts, ACLs. */
class RedisLockBackendTest extends LockBackendSpiTemplate {
    /** The shortest lease Redis can keep: one millisecond. Tests sleep past it on purpose. */
    private static final Duration ONE_MS = Duration.ofMillis(1);

    private static final Duration SHORT_COMMAND_TIMEOUT = Duration.ofMillis(500);

    private static RedisServer server;
    private static RedisLockBackend backend;
    private static SpiHarness harness;

    @BeforeAll
    static void openBackend() {
        server = RedisServer.shared();
        backend = RedisLockBackend.builder().uri(server.uri()).build();
        harness = SpiHarness.builder(backend, "redis")
                .uri(server.uri(), Map.of("keyPrefix", "fencelock:"))
                .unreachableUri(password -> "redis://app:" + password + "@127.0.0.1:1")
                // a port that is no port is bad input, not a host name for DNS
                .malformedPortUris(secret -> List.of(
                        "redis://app:" + secret + "@127.0.0.1:notaport",
                        "rediss://127.0.0.1:0/1",
                        "redis-sentinel://" + secret + "@127.0.0.1:26379,127.0.0.1:x#m",
                        "redis-cluster://127.0.0.1:7000,127.0.0.1:65536"))
                .badSettings(Map.of(Map.of("keyPrefix", "bad{"), "bad{", Map.of("keyPrefix", "sp ace"), "keyPrefix"))
                .misspelledProperty("keyprefix")
                // the server's count of EVAL and EVALSHA calls; someone else's server may be busy with other clients
                .renewCalls(() -> server.source() == Source.ENV ? OptionalLong.empty() : OptionalLong.of(scriptCalls()))
                .build();
    }

    @Override
    protected SpiHarness harness() {
        return harness;
    }

    @AfterAll
    static void closeBackend() {
        if (backend != null) {
            backend.close();
        }
    }

    private static String name() {
        return "test/" + UUID.randomUUID();
    }

    @Test
    void keysShareAHashTagAndOnlyTheLockExpires() {
        String name = name();
        String holder = lease();
        LockMetadata metadata = LockMetadata.of("ops", "job", Map.of("run", "7"));
        long before = withRedis(server, redis -> Long.parseLong(redis.time().get(0))) * 1000;
        backend.tryAcquire(name, holder, TTL, metadata);
        long after = withRedis(server, redis -> Long.parseLong(redis.time().get(0))) * 1000 + 1000;
        assertThat(backend.renew(List.of(new RenewRequest(name, holder, TTL, null)))
                        .get(0)
                        .renewed())
                .isTrue();
        withRedis(server, redis -> {
            String lock = "fencelock:{" + name + "}";
            String record = lock + ":token";
            String[] value = redis.get(lock).split("\n", 3);
            assertThat(value[0]).as("the lock's value starts with the lease id").isEqualTo(holder);
            assertThat(Long.parseLong(value[1]))
                    .as("then the grant's time, from the server's TIME, kept by the renewal")
                    .isBetween(before, after);
            assertThat(value[2]).as("then the metadata").isEqualTo(MetadataCodec.encode(metadata));
            // a lease id with a line feed could pass the prefix test for another's value: refused before any I/O
            assertThatThrownBy(() -> backend.release(name, holder + "\n" + value[1]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("line feed");
            assertThat(redis.pttl(lock)).isPositive().isLessThanOrEqualTo(TTL.toMillis());
            assertThat(redis.hget(record, "n")).isEqualTo("1");
            assertThat(redis.pttl(record)).as("the token record never expires").isEqualTo(-1);
            assertThat(SlotHash.getSlot(lock)).as("one Cluster slot").isEqualTo(SlotHash.getSlot(record));
            return null;
        });
        backend.release(name, holder);
        withRedis(server, redis -> {
            assertThat(redis.exists("fencelock:{" + name + "}"))
                    .as("a free lock has no key")
                    .isZero();
            assertThat(redis.exists("fencelock:{" + name + "}:token")).isOne();
            return null;
        });
    }

    @Test
    void renewsTenThousandLeasesInOneCall() {
        String prefix = "batch10k-" + UUID.randomUUID() + "/";
        List<RenewRequest> requests = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            String holder = lease();
            backend.tryAcquire(prefix + i, holder, TTL);
            requests.add(new RenewRequest(prefix + i, holder, TTL, null));
        }
        long start = System.nanoTime();
        List<RenewResult> results = backend.renew(requests);
        long micros = (System.nanoTime() - start) / 1000;
        assertThat(results).hasSize(10_000).allMatch(RenewResult::renewed);
        System.out.println("[redis] renew of 10,000 leases in one call: " + micros + " us");
    }

    @Test
    void anotherKeyPrefixSeesNoneOfTheLocks() {
        String name = name();
        backend.tryAcquire(name, lease(), TTL);
        try (RedisLockBackend otherPrefix = RedisLockBackend.builder()
                .uri(server.uri())
                .keyPrefix("elsewhere:")
                .build()) {
            assertThat(otherPrefix.list("test/"))
                    .extracting(LockInfo::name)
                    .as("another key prefix lists none of them")
                    .doesNotContain(name);
            assertThat(otherPrefix.tryAcquire(name, lease(), TTL).acquired())
                    .as("nor holds them")
                    .isTrue();
        }
    }

    @Test
    void subscriberIsWokenByAReleaseOfItsNameAndPrefixOnly() throws InterruptedException {
        String name = name();
        String holder = lease();
        backend.tryAcquire(name, holder, TTL);
        CountDownLatch released = new CountDownLatch(1);
        CountDownLatch unrelated = new CountDownLatch(1);
        CountDownLatch otherPrefix = new CountDownLatch(1);
        try (RedisLockBackend waiterSide =
                        RedisLockBackend.builder().uri(server.uri()).build();
                RedisLockBackend elsewhere = RedisLockBackend.builder()
                        .uri(server.uri())
                        .keyPrefix("elsewhere:")
                        .build()) {
            SpiChecks.subscribe(waiterSide, name, released::countDown);
            WakeUpSubscription other = SpiChecks.subscribe(waiterSide, name(), unrelated::countDown);
            SpiChecks.subscribe(elsewhere, name, otherPrefix::countDown);
            assertThat(waiterSide.tryAcquire(name, lease(), TTL).acquired())
                    .as("the waiter's refused attempt")
                    .isFalse();

            assertThat(backend.release(name, holder)).isTrue();

            assertThat(released.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                    .as("woken by the release")
                    .isTrue();
            assertThat(backend.release(name, holder))
                    .as("a release that frees nothing publishes nothing")
                    .isFalse();
            Thread.sleep(50); // give a wrong signal the time to arrive
            assertThat(unrelated.getCount()).as("another name's subscriber").isEqualTo(1);
            assertThat(otherPrefix.getCount())
                    .as("the same name under another key prefix")
                    .isEqualTo(1);
            other.close();
        }
    }

    /** Every client's subscription hears every message on the channel: only a release that an attempt was refused on since the grant sends one. */
    @Test
    void onlyAReleaseSomeoneWasRefusedOnPublishes() throws InterruptedException {
        SpiChecks.assertOnlyReleasesAfterARefusalSignal(backend, name(), TTL, Duration.ofSeconds(HANG_GUARD_SECONDS));
    }

    @Test
    void tokensSurviveACrashOfAnAofAlwaysServerAndWaitersAreWokenAfterTheReconnect() throws InterruptedException {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.AOF_ALWAYS)) {
            ServerControl control = own.control().orElseThrow();
            Semaphore wakeUps = new Semaphore(0);
            String name = name();
            try (RedisLockBackend crashing =
                    RedisLockBackend.builder().uri(own.uri()).build()) {
                assertThat(crashing.capabilities()).contains(Capability.DURABLE_TOKENS);
                SpiChecks.subscribe(crashing, name, wakeUps::release);
                long before = 0;
                for (int i = 0; i < 3; i++) {
                    before = crashing.tryAcquire(name, lease(), ONE_MS).token();
                    Thread.sleep(3);
                }

                control.kill();
                LockBackendException down =
                        catchThrowableOfType(LockBackendException.class, () -> crashing.inspect(name));
                assertThat(down).isNotNull();
                assertThat(down.isRetryable()).as(down.getMessage()).isTrue();
                control.start();

                // the subscription is re-established by Lettuce, and then everyone is woken once
                assertThat(wakeUps.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                        .as("woken after reconnecting")
                        .isTrue();
                String holder = lease();
                AcquireResult after = retryWhileRetryable(() -> crashing.tryAcquire(name, holder, TTL));
                assertThat(after.token())
                        .as("the token record was in the fsynced AOF")
                        .isEqualTo(before + 1);
                assertThat(crashing.tryAcquire(name, lease(), TTL).acquired())
                        .as("a waiter's refused attempt")
                        .isFalse();
                assertThat(crashing.release(name, holder)).isTrue();
                assertThat(wakeUps.tryAcquire(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
                        .as("woken by the release")
                        .isTrue();
            }
        }
    }

    /** What DURABLE_TOKENS not being declared means: documented, and shown here. */
    @Test
    void tokensRestartAfterARestartWithoutPersistence() throws InterruptedException {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            ServerControl control = own.control().orElseThrow();
            String name = name();
            try (RedisLockBackend forgetful =
                    RedisLockBackend.builder().uri(own.uri()).build()) {
                assertThat(forgetful.capabilities()).doesNotContain(Capability.DURABLE_TOKENS);
                long before = 0;
                for (int i = 0; i < 3; i++) {
                    before = forgetful.tryAcquire(name, lease(), ONE_MS).token();
                    Thread.sleep(3);
                }
                assertThat(before).isEqualTo(3);

                control.stop(); // even a clean shutdown: nothing is written anywhere
                control.start();

                AcquireResult after = retryWhileRetryable(() -> forgetful.tryAcquire(name, lease(), TTL));
                assertThat(after.token())
                        .as("the counter started again: a stale writer's token 3 would win")
                        .isEqualTo(1);
            }
        }
    }

    /** What a single server without replicas declares whatever its persistence. */
    private static EnumSet<Capability> singleServerCapabilities() {
        return EnumSet.of(
                Capability.FENCING,
                Capability.SERVER_TIME,
                Capability.WAKE_ON_RELEASE,
                Capability.BATCH_RENEW,
                Capability.TOKEN_PERIOD,
                Capability.METADATA,
                Capability.EXTENDABLE_TTL,
                Capability.SHARED_LOCKS,
                Capability.FAIR_ORDER,
                Capability.HAND_OVER,
                Capability.GRANT_ON_RELEASE,
                Capability.LINEARIZABLE);
    }

    @Test
    void capabilitiesFollowTheServersPersistenceSettings() {
        EnumSet<Capability> always = singleServerCapabilities();
        if (server.source() != Source.ENV) {
            assertThat(backend.capabilities())
                    .as("a server without persistence")
                    .isEqualTo(always);
        }
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.AOF_ALWAYS)) {
            EnumSet<Capability> durable = EnumSet.copyOf(always);
            durable.add(Capability.DURABLE_TOKENS);
            try (RedisLockBackend b = RedisLockBackend.builder().uri(own.uri()).build()) {
                assertThat(b.capabilities())
                        .as("appendonly yes, appendfsync always")
                        .isEqualTo(durable);
                assertThat(b.toString()).contains("appendonly=yes appendfsync=always");
            }
            withRedis(own, redis -> redis.configSet("appendfsync", "everysec"));
            try (RedisLockBackend b = RedisLockBackend.builder().uri(own.uri()).build()) {
                assertThat(b.capabilities())
                        .as("appendfsync everysec: up to a second of grants can be lost")
                        .isEqualTo(always);
            }
            withRedis(own, redis -> redis.configSet("appendfsync", "always"));
            // a user that may not run CONFIG: persistence unknown, so not durable
            String password = UUID.randomUUID().toString();
            withRedis(
                    own,
                    redis -> redis.aclSetuser(
                            "locker",
                            io.lettuce.core.AclSetuserArgs.Builder.on()
                                    .addPassword(password)
                                    .allKeys()
                                    .allChannels()
                                    .allCommands()
                                    .removeCommand(io.lettuce.core.protocol.CommandType.CONFIG)));
            try (RedisLockBackend b = RedisLockBackend.builder()
                    .uri(own.uri())
                    .user("locker")
                    .password(password)
                    .build()) {
                assertThat(b.capabilities()).as("CONFIG refused").isEqualTo(always);
                assertThat(b.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
            }
        }
    }

    /**
     * A single server that replicates to others is a replicated deployment, whatever its persistence: a failover
     * to a replica (by Sentinel, an operator or a platform) can lose the last grants and tokens, so it declares
     * neither LINEARIZABLE nor DURABLE_TOKENS. A replica is refused at start-up, writing nothing: a read-only one
     * would refuse every grant, a writable one take grants that its next resynchronisation discards.
     */
    @Test
    void aMasterWithAReplicaIsReplicatedAndAReplicaIsRefused() {
        try (RedisServer master = RedisServer.start(Source.BINARIES, Persistence.AOF_ALWAYS);
                RedisServer replica = RedisServer.startReplicaOf(master)) {
            EnumSet<Capability> replicated = singleServerCapabilities();
            replicated.remove(Capability.LINEARIZABLE);
            try (RedisLockBackend b =
                    RedisLockBackend.builder().uri(master.uri()).build()) {
                assertThat(b.capabilities())
                        .as("a master with one replica, appendonly yes, appendfsync always")
                        .isEqualTo(replicated);
                assertThat(b.toString()).contains("a master with 1 replica(s)");
            }
            withRedis(replica, redis -> redis.configSet("replica-read-only", "no"));
            assertThatThrownBy(
                            () -> RedisLockBackend.builder().uri(replica.uri()).build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is a replica");
            long keys = withRedis(replica, RedisCommands::dbsize);
            assertThat(keys)
                    .as("keys on the writable replica after its refusal")
                    .isZero();
        }
    }

    /**
     * A server that may evict any key under memory pressure ({@code allkeys-*}) could evict a token record, and the
     * name's tokens would start again: refused at start-up, writing nothing. One that evicts only keys with an
     * expiry ({@code volatile-*}) never evicts a token record (it has none): it may lose a lock early, which its
     * token still fences, and gets a warning.
     */
    @Test
    void aServerThatMayEvictTokenRecordsIsRefused() {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            withRedis(own, redis -> redis.configSet("maxmemory", "100mb"));
            withRedis(own, redis -> redis.configSet("maxmemory-policy", "allkeys-lru"));
            assertThatThrownBy(() -> RedisLockBackend.builder().uri(own.uri()).build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("maxmemory-policy allkeys-lru")
                    .hasMessageContaining("noeviction");
            long keys = withRedis(own, RedisCommands::dbsize);
            assertThat(keys).as("keys after the refusal").isZero();
            withRedis(own, redis -> redis.configSet("maxmemory-policy", "volatile-lru"));
            try (RedisLockBackend b = RedisLockBackend.builder().uri(own.uri()).build()) {
                assertThat(b.capabilities()).isEqualTo(singleServerCapabilities());
                assertThat(b.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
            }
        }
    }

    @Test
    void scriptsAreLoadedAgainAfterTheServerForgotThem() {
        String name = name();
        String holder = lease();
        try (RedisLockBackend b = RedisLockBackend.builder().uri(server.uri()).build()) {
            assertThat(b.tryAcquire(name, holder, TTL).acquired()).isTrue();
            withRedis(server, RedisCommands::scriptFlush);
            assertThat(b.inspect(name).orElseThrow().holder()).contains(holder);
            assertThat(b.renew(List.of(new RenewRequest(name, holder, TTL, null)))
                            .get(0)
                            .renewed())
                    .isTrue();
            assertThat(b.release(name, holder)).isTrue();
        }
    }

    @Test
    void aFrozenServerFailsCallsRetryablyAfterTheCommandTimeout() {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            ServerControl control = own.control().orElseThrow();
            try (RedisLockBackend b = RedisLockBackend.builder()
                    .uri(own.uri())
                    .commandTimeout(SHORT_COMMAND_TIMEOUT)
                    .build()) {
                String name = name();
                String ghost = lease();
                control.pause();
                long start = System.nanoTime();
                LockBackendException frozen;
                try {
                    frozen = catchThrowableOfType(LockBackendException.class, () -> b.tryAcquire(name, ghost, TTL));
                } finally {
                    control.resume();
                }
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                assertThat(frozen).isNotNull();
                assertThat(frozen.isRetryable()).as(frozen.getMessage()).isTrue();
                assertThat(waited).isGreaterThanOrEqualTo(SHORT_COMMAND_TIMEOUT).isLessThan(Duration.ofSeconds(5));
                // the script was in the server's socket buffer: the outcome is unknown to the caller,
                // which is why the engine releases such a lease id in the background
                LockInfo after = retryWhileRetryable(() -> b.inspect(name)).orElse(null);
                if (after != null) {
                    assertThat(after.holder()).contains(ghost);
                    assertThat(b.release(name, ghost)).isTrue();
                }
                assertThat(b.tryAcquire(name, lease(), TTL).acquired())
                        .as("the connection works again")
                        .isTrue();
            }
        }
    }

    @Test
    void worksOnRedis62FromTheEmbeddedSource() throws InterruptedException {
        try (RedisServer old = RedisServer.start(Source.EMBEDDED, Persistence.NONE);
                RedisLockBackend b = RedisLockBackend.builder().uri(old.uri()).build()) {
            String name = name();
            String holder = lease();
            AcquireResult granted = b.tryAcquire(name, holder, TTL);
            assertThat(granted.acquired()).isTrue();
            LockInfo info = b.inspect(name).orElseThrow(); // no PEXPIRETIME before 7.0: now + PTTL
            assertThat(info.holder()).contains(holder);
            assertThat(Duration.between(info.expiresAt(), granted.expiresAt()).abs())
                    .isLessThanOrEqualTo(Duration.ofMillis(2));
            assertThat(b.list("test/")).extracting(LockInfo::name).containsExactly(name);
            assertThat(b.release(name, holder)).isTrue();
            assertThat(b.tryAcquire(name, lease(), ONE_MS).token()).isEqualTo(2);
            Thread.sleep(5);
            assertThat(b.renew(List.of(new RenewRequest(name, holder, TTL, null))))
                    .containsExactly(RenewResult.rejected());
        }
    }

    @Test
    void badSettingsAreRejectedBeforeAnyIo() {
        // an unreachable URI: any I/O would fail with a connection error, not the expected message
        RedisLockBackend.Builder offline = RedisLockBackend.builder().uri("redis://127.0.0.1:1");
        for (String bad : List.of("", "a{b}:", "locks*", "lo?ks", "[x]", "sp ace", "x".repeat(65), "é")) {
            assertThatThrownBy(() -> offline.keyPrefix(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("keyPrefix")
                    .hasMessageContaining("1 to 64 characters");
        }
        assertThatThrownBy(() -> offline.keyPrefix(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> offline.commandTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RedisLockBackend.builder().uri("http://127.0.0.1:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis-cluster:");
        assertThatThrownBy(() -> RedisLockBackend.builder().uri("redis://:s3cret-value@[::1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("s3cret-value")
                .hasNoCause();
        assertThatThrownBy(() -> RedisLockBackend.builder().build()).isInstanceOf(IllegalArgumentException.class);
        RedisLockBackendProvider provider = new RedisLockBackendProvider();
        assertThatThrownBy(() -> provider.open("jdbc:postgresql://h/db", Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void credentialsNeverAppearInFailures() {
        String user = "fencelock-test-" + UUID.randomUUID().toString().substring(0, 8);
        String password = "Right-" + UUID.randomUUID();
        String secret = "Wr0ng-" + UUID.randomUUID();
        boolean created = withRedis(server, redis -> {
            try {
                redis.aclSetuser(
                        user,
                        io.lettuce.core.AclSetuserArgs.Builder.on()
                                .addPassword(password)
                                .allKeys()
                                .allChannels()
                                .allCommands());
                return true;
            } catch (RuntimeException e) {
                return false; // someone else's server may not let us create users
            }
        });
        Assumptions.assumeTrue(created, "cannot create an ACL user on " + server.description());
        try {
            try (RedisLockBackend right = RedisLockBackend.builder()
                    .uri(server.uri())
                    .user(user)
                    .password(password)
                    .build()) {
                assertThat(right.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
            }
            Throwable wrongPassword = catchThrowable(() -> RedisLockBackend.builder()
                    .uri(server.uri())
                    .user(user)
                    .password(secret)
                    .build()
                    .close());
            assertThat(wrongPassword).isInstanceOf(LockBackendException.class);
            assertThat(((LockBackendException) wrongPassword).isRetryable())
                    .as(chain(wrongPassword))
                    .isFalse();
            assertNoSecret(wrongPassword, secret);

            String inUri = server.uri().replace("redis://", "redis://" + user + ":" + secret + "@");
            Throwable wrongInUri = catchThrowable(
                    () -> new RedisLockBackendProvider().open(inUri, Map.of()).close());
            assertThat(wrongInUri).isInstanceOf(LockBackendException.class);
            assertNoSecret(wrongInUri, secret);

            // a password with the characters that end a user-info or a path, percent-encoded in the URI: it works,
            // and a wrong one is refused in the server's words without any form of it
            String special = CredentialChecks.special("right");
            String wrongSpecial = CredentialChecks.special("wrong");
            withRedis(
                    server,
                    redis -> redis.aclSetuser(
                            user,
                            io.lettuce.core.AclSetuserArgs.Builder.on()
                                    .resetpass()
                                    .addPassword(special)
                                    .allKeys()
                                    .allChannels()
                                    .allCommands()));
            String encodedRight =
                    server.uri().replace("redis://", "redis://" + user + ":" + CredentialChecks.encoded(special) + "@");
            try (LockBackend right = new RedisLockBackendProvider().open(encodedRight, Map.of())) {
                assertThat(right.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
                CredentialChecks.assertNoSecret(right.toString(), special);
            }
            for (String uri : List.of(
                    server.uri()
                            .replace(
                                    "redis://", "redis://" + user + ":" + CredentialChecks.encoded(wrongSpecial) + "@"),
                    server.uri().replace("redis://", "redis://" + user + ":" + wrongSpecial + "@"))) {
                Throwable refused = catchThrowable(
                        () -> new RedisLockBackendProvider().open(uri, Map.of()).close());
                assertThat(refused).as("refused").isNotNull();
                CredentialChecks.assertNoSecret(refused, wrongSpecial);
                CredentialChecks.assertNoSecret(refused, special);
            }
            // parameters Lettuce does not know: their values show nowhere either
            String unknown =
                    server.uri() + "?password1=" + CredentialChecks.encoded(wrongSpecial) + "&password2=x&password3=y";
            try (LockBackend opened = new RedisLockBackendProvider().open(unknown, Map.of())) {
                assertThat(opened.toString()).contains("password1=***");
                CredentialChecks.assertNoSecret(opened.toString(), wrongSpecial);
            } catch (IllegalArgumentException | LockBackendException refused) {
                CredentialChecks.assertNoSecret(refused, wrongSpecial);
            }
        } finally {
            withRedis(server, redis -> redis.aclDeluser(user));
        }
    }

    @Test
    void aPasswordWorksFromTheUriTheBuilderOrAProperty() {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            String password = "pw-" + UUID.randomUUID();
            withRedis(own, redis -> redis.configSet("requirepass", password));
            String hostPort = own.uri().substring("redis://".length());
            try (RedisLockBackend fromBuilder = RedisLockBackend.builder()
                            .uri(own.uri())
                            .password(password)
                            .build();
                    LockBackend fromUri =
                            new RedisLockBackendProvider().open("redis://:" + password + "@" + hostPort, Map.of());
                    LockBackend fromProperty =
                            new RedisLockBackendProvider().open(own.uri(), Map.of("password", password))) {
                String name = name();
                assertThat(fromBuilder.tryAcquire(name, lease(), TTL).acquired())
                        .isTrue();
                assertThat(fromUri.inspect(name).orElseThrow().held()).isTrue();
                assertThat(fromProperty.list("test/"))
                        .extracting(LockInfo::name)
                        .containsExactly(name);
            }
            Throwable none = catchThrowable(
                    () -> RedisLockBackend.builder().uri(own.uri()).build().close());
            assertThat(none).isInstanceOf(LockBackendException.class).hasMessageContaining("NOAUTH");
            assertThat(((LockBackendException) none).isRetryable()).isFalse();
        }
    }

    /**
     * When Lettuce loses the reason a handshake failed ("RedisHandshakeHandler not registered", a race
     * in its connect), the backend asks the server on a connection whose handshake sends nothing.
     */
    @Test
    void theReasonOfARefusedHandshakeIsAskedOfTheServer() {
        try (RedisServer own = RedisServer.start(Source.BINARIES, Persistence.NONE)) {
            String password = "pw-" + UUID.randomUUID();
            String userPassword = "pw-" + UUID.randomUUID();
            withRedis(own, redis -> {
                redis.aclSetuser(
                        "locker",
                        io.lettuce.core.AclSetuserArgs.Builder.on()
                                .addPassword(userPassword)
                                .allKeys()
                                .allChannels()
                                .allCommands());
                return redis.configSet("requirepass", password);
            });
            ClientResources shared = SharedResources.acquire();
            try {
                SocketOptions socket = SocketOptions.builder().build();
                RedisSettings none = new RedisSettings();
                none.uri(own.uri());
                assertThat(RedisConnections.handshakeRefusal(none, shared, socket))
                        .hasMessageStartingWith("NOAUTH");

                RedisSettings wrong = new RedisSettings();
                wrong.uri(own.uri());
                wrong.password("not-" + password);
                RedisException refused = RedisConnections.handshakeRefusal(wrong, shared, socket);
                assertThat(refused).hasMessageStartingWith("WRONGPASS");
                assertThat(RedisFailures.isRetryable(refused)).isFalse();

                String hostPort = own.uri().substring("redis://".length());
                RedisSettings right = new RedisSettings();
                right.uri("redis://:" + password + "@" + hostPort);
                assertThat(RedisConnections.handshakeRefusal(right, shared, socket))
                        .isNull();

                // the builder's password replaces the URI's; the URI's user stays
                RedisSettings userInUri = new RedisSettings();
                userInUri.uri("redis://locker:stale@" + hostPort);
                userInUri.password(userPassword);
                assertThat(RedisConnections.handshakeRefusal(userInUri, shared, socket))
                        .isNull();
                try (RedisLockBackend b = RedisLockBackend.builder()
                        .uri("redis://locker:stale@" + hostPort)
                        .password(userPassword)
                        .build()) {
                    assertThat(b.tryAcquire(name(), lease(), TTL).acquired()).isTrue();
                }
            } finally {
                SharedResources.release(shared);
            }
        }
    }

    @Test
    void declaresItsCapabilitiesAndAcceptsEveryRedisScheme() {
        assertThat(backend.capabilities())
                .contains(
                        Capability.FENCING,
                        Capability.SERVER_TIME,
                        Capability.WAKE_ON_RELEASE,
                        Capability.BATCH_RENEW,
                        Capability.TOKEN_PERIOD,
                        Capability.METADATA,
                        Capability.EXTENDABLE_TTL)
                .doesNotContain(Capability.PURGE_FREE);
        assertThat(backend.deployment()).isEqualTo(RedisLockBackend.Deployment.STANDALONE);
        assertThatThrownBy(() -> backend.purgeFree(Duration.ZERO)).isInstanceOf(UnsupportedOperationException.class);

        LockBackendProvider provider = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("redis"))
                .findFirst()
                .orElseThrow();
        for (String uri : List.of(
                server.uri(),
                "rediss://h:6380",
                "redis-sentinel://h:26379#mymaster",
                "redis-cluster://a:7000,b:7001")) {
            assertThat(provider.accepts(uri)).as(uri).isTrue();
        }
        assertThat(provider.accepts("jdbc:postgresql://h/db")).isFalse();
    }

    private static String chain(Throwable failure) {
        java.io.StringWriter out = new java.io.StringWriter();
        failure.printStackTrace(new java.io.PrintWriter(out));
        return out.toString();
    }

    private static void assertNoSecret(Throwable failure, String secret) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            assertThat(String.valueOf(t.getMessage())).doesNotContain(secret);
            assertThat(t.toString()).doesNotContain(secret);
        }
    }

    /** The server's count of EVAL and EVALSHA calls so far. */
    private static long scriptCalls() {
        return scriptCalls(server);
    }

    /** {@code on}'s count of EVAL and EVALSHA calls so far. */
    static long scriptCalls(RedisServer on) {
        return withRedis(on, redis -> {
            long calls = 0;
            for (String line : redis.info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    calls += Long.parseLong(line.replaceAll("^[^:]+:calls=(\\d+),.*", "$1"));
                }
            }
            return calls;
        });
    }

    static <T> T withRedis(RedisServer on, Function<RedisCommands<String, String>, T> work) {
        RedisClient client = RedisClient.create(on.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return work.apply(connection.sync());
        } finally {
            LettuceClients.shutDown(client);
        }
    }

    /** Connections died with the server; the engine retries retryable failures, and so does this. */
    private static <T> T retryWhileRetryable(Callable<T> operation) {
        return SpiChecks.retryWhileRetryable(operation, Duration.ofSeconds(HANG_GUARD_SECONDS));
    }
}
