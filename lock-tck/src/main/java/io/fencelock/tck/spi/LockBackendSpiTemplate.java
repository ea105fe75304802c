package io.fencelock.tck.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fencelock.LockBackendException;
import io.fencelock.LockInfo;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.tck.CredentialChecks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The SPI tests every provider shares, below the engine: one lock's acquire, renew, release and
 * inspect; takeover after expiry; the token period; a thousand renewals in one call; listing by
 * prefix; one winner among racing acquirers; the provider found by {@code ServiceLoader}; and
 * credentials and bad settings refused without leaking a secret. A provider's test extends this class
 * with its {@link SpiHarness} and keeps only what is its backend's own.
 *
 * <p>These are the SPI's promises as a provider states them; the {@code LockBackendContract} checks the
 * guarantees through the engine. A backend whose free lock keeps no record (so {@code inspect} of a
 * released name is empty) does not fit {@link #acquireRenewReleaseAndInspect()}.
 */
public abstract class LockBackendSpiTemplate {
    protected static final Duration TTL = Duration.ofSeconds(30);
    /** Only to stop a hang; the calls under test answer in milliseconds. */
    protected static final long HANG_GUARD_SECONDS = 30;

    /** The provider's harness, ready when the first test runs (e.g. built in a {@code @BeforeAll}). */
    protected abstract SpiHarness harness();

    private LockBackend backend() {
        return harness().backend();
    }

    private String name() {
        return harness().name();
    }

    protected static String lease() {
        return UUID.randomUUID().toString();
    }

    /** Sleeps past {@link SpiHarness#shortestTtl()} on any clock: the expiry is what the test is about. */
    private void pastTheShortestTtl() throws InterruptedException {
        Thread.sleep(harness().shortestTtl().toMillis() + 5);
    }

    @Test
    void acquireRenewReleaseAndInspect() {
        LockBackend backend = backend();
        String name = name();
        String holder = lease();
        String other = lease();

        AcquireResult granted = backend.tryAcquire(name, holder, TTL);
        assertThat(granted.acquired()).isTrue();
        assertThat(granted.token()).isPositive();

        AcquireResult refused = backend.tryAcquire(name, other, TTL);
        assertThat(refused.acquired()).isFalse();
        assertThat(refused.holderRemaining()).isPositive().isLessThanOrEqualTo(TTL);

        LockInfo info = backend.inspect(name).orElseThrow();
        assertThat(info.held()).isTrue();
        assertThat(info.holder()).contains(holder);
        assertThat(info.token()).isEqualTo(granted.token());
        assertThat(info.expiresAt()).isAfter(info.serverTime());
        assertThat(Duration.between(granted.expiresAt(), info.expiresAt()).abs())
                .as("the stored expiry against the one the grant reported")
                .isLessThanOrEqualTo(harness().grantExpiryPrecision());

        List<RenewResult> renewed = backend.renew(List.of(
                new RenewRequest(name, holder, Duration.ofSeconds(60), null),
                new RenewRequest(name, other, TTL, null)));
        assertThat(renewed.get(0).renewed()).isTrue();
        assertThat(renewed.get(0).token()).isEqualTo(granted.token());
        assertThat(renewed.get(0).expiresAt()).isAfter(granted.expiresAt());
        assertThat(renewed.get(1)).isEqualTo(RenewResult.rejected());

        assertThat(backend.release(name, other)).as("release by a non-holder").isFalse();
        assertThat(backend.inspect(name).orElseThrow().held()).isTrue();
        assertThat(backend.release(name, holder)).isTrue();
        assertThat(backend.release(name, holder)).as("release is idempotent").isFalse();

        LockInfo free = backend.inspect(name).orElseThrow();
        assertThat(free.held()).isFalse();
        assertThat(free.leaseId()).isNull();
        assertThat(free.expiresAt()).isNull();
        assertThat(free.token()).as("the free record keeps the token history").isEqualTo(granted.token());
        assertThat(backend.renew(List.of(new RenewRequest(name, holder, TTL, null))))
                .containsExactly(RenewResult.rejected());

        AcquireResult next = backend.tryAcquire(name, other, TTL);
        assertThat(next.acquired()).isTrue();
        assertThat(next.token()).isGreaterThan(granted.token());
        assertThat(backend.inspect("never-" + UUID.randomUUID())).isEmpty();
    }

    @Test
    void expiredHolderIsTakenOverWithAHigherTokenAndCannotRenewOrRelease() throws InterruptedException {
        LockBackend backend = backend();
        String name = name();
        String crashed = lease();
        AcquireResult first = backend.tryAcquire(name, crashed, harness().shortestTtl());
        assertThat(first.acquired()).isTrue();
        pastTheShortestTtl();

        assertThat(backend.renew(List.of(new RenewRequest(name, crashed, TTL, null))))
                .containsExactly(RenewResult.rejected());
        assertThat(backend.release(name, crashed))
                .as("an expired lease frees nothing")
                .isFalse();
        assertThat(backend.inspect(name).orElseThrow().held()).isFalse();

        AcquireResult takeover = backend.tryAcquire(name, lease(), TTL);
        assertThat(takeover.acquired()).isTrue();
        assertThat(takeover.token()).isGreaterThan(first.token());
    }

    @Test
    void tokenPeriodBumpsTheTokenOnlyOnceThePeriodHasPassed() throws InterruptedException {
        LockBackend backend = backend();
        String name = name();
        String holder = lease();
        long token = backend.tryAcquire(name, holder, TTL).token();

        RenewResult young = backend.renew(List.of(new RenewRequest(name, holder, TTL, Duration.ofHours(1))))
                .get(0);
        assertThat(young.renewed()).isTrue();
        assertThat(young.token()).as("issued less than an hour ago").isEqualTo(token);

        pastTheShortestTtl(); // the token is now older than the shortest period on the server's clock too
        RenewResult old = backend.renew(
                        List.of(new RenewRequest(name, holder, TTL, harness().shortestTtl())))
                .get(0);
        assertThat(old.renewed()).isTrue();
        assertThat(old.token()).isGreaterThan(token);
        assertThat(backend.inspect(name).orElseThrow().token()).isEqualTo(old.token());

        RenewResult again = backend.renew(List.of(new RenewRequest(name, holder, TTL, Duration.ofHours(1))))
                .get(0);
        assertThat(again.token()).as("the bump restarted the period").isEqualTo(old.token());
        RenewResult noPeriod = backend.renew(List.of(new RenewRequest(name, holder, TTL, null)))
                .get(0);
        assertThat(noPeriod.token()).isEqualTo(old.token());
    }

    @Test
    void renewsAThousandLeasesInOneCallInRequestOrder() {
        LockBackend backend = backend();
        List<RenewRequest> requests = new ArrayList<>();
        List<AcquireResult> grants = new ArrayList<>();
        String prefix = "batch-" + UUID.randomUUID() + "/";
        for (int i = 0; i < 1000; i++) {
            String name = prefix + i;
            String holder = lease();
            grants.add(backend.tryAcquire(name, holder, TTL));
            requests.add(new RenewRequest(name, holder, Duration.ofSeconds(90), null));
        }
        requests.add(500, new RenewRequest(prefix + 7, "not-the-holder", TTL, null));
        requests.add(new RenewRequest(prefix + "never-taken", lease(), TTL, null));

        OptionalLong callsBefore = harness().renewCalls();
        List<RenewResult> results = backend.renew(requests);
        OptionalLong callsAfter = harness().renewCalls();
        if (callsBefore.isPresent() && callsAfter.isPresent()) {
            assertThat(callsAfter.getAsLong() - callsBefore.getAsLong())
                    .as("server calls for 1002 renewals")
                    .isEqualTo(1);
        }

        assertThat(results).hasSize(1002);
        assertThat(results.get(500)).isEqualTo(RenewResult.rejected());
        assertThat(results.get(1001)).isEqualTo(RenewResult.rejected());
        List<RenewResult> real = new ArrayList<>(results.subList(0, 1001));
        real.remove(500);
        for (int i = 0; i < 1000; i++) {
            assertThat(real.get(i).renewed()).isTrue();
            assertThat(real.get(i).token()).isEqualTo(grants.get(i).token());
            assertThat(real.get(i).expiresAt()).isAfter(grants.get(i).expiresAt());
        }
        assertThat(backend.renew(List.of())).isEmpty();
    }

    @Test
    void listsHeldLocksByPrefixInJavaOrder() throws InterruptedException {
        LockBackend backend = backend();
        String prefix = "list-" + UUID.randomUUID() + "/";
        for (String suffix : List.of("b", "a", "B", "c")) {
            backend.tryAcquire(prefix + suffix, lease(), TTL);
        }
        String released = lease();
        backend.tryAcquire(prefix + "d", released, TTL);
        backend.release(prefix + "d", released);
        backend.tryAcquire(prefix + "e", lease(), harness().shortestTtl());
        backend.tryAcquire("other-" + prefix + "a", lease(), TTL);
        pastTheShortestTtl();

        List<LockInfo> listed = backend.list(prefix);
        assertThat(listed)
                .extracting(LockInfo::name)
                .as("held only, in Java order")
                .containsExactly(prefix + "B", prefix + "a", prefix + "b", prefix + "c");
        assertThat(listed).allSatisfy(info -> {
            assertThat(info.held()).isTrue();
            assertThat(info.leaseId()).isNotNull();
            assertThat(info.token()).isPositive();
            assertThat(info.expiresAt()).isAfter(info.serverTime());
        });
        assertThat(backend.list("")).extracting(LockInfo::name).contains(prefix + "a", "other-" + prefix + "a");
        for (String pattern : List.of("%", "_", "*", "?", ".*", "[a]")) {
            assertThat(backend.list(pattern + prefix))
                    .as("'" + pattern + "' is a plain character in a prefix")
                    .isEmpty();
        }
    }

    @Test
    void onlyOneOfManyConcurrentAcquirersWins() throws Exception {
        LockBackend backend = backend();
        String name = name();
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Callable<AcquireResult>> attempts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            attempts.add(() -> {
                start.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
                return backend.tryAcquire(name, lease(), TTL);
            });
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<AcquireResult> results = new ArrayList<>();
            for (Future<AcquireResult> f : pool.invokeAll(attempts)) {
                results.add(f.get(HANG_GUARD_SECONDS, TimeUnit.SECONDS));
            }
            AcquireResult winner =
                    results.stream().filter(AcquireResult::acquired).findFirst().orElseThrow();
            assertThat(results).filteredOn(AcquireResult::acquired).hasSize(1);
            assertThat(backend.inspect(name).orElseThrow().token())
                    .as("the refused attempts drew no token")
                    .isEqualTo(winner.token());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void serviceLoaderFindsTheProviderAndItOpensTheSameLocks() {
        LockBackendProvider provider = ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals(harness().providerName()))
                .findFirst()
                .orElseThrow(() ->
                        new AssertionError("no provider named " + harness().providerName()));
        assertThat(provider.accepts(harness().uri())).isTrue();
        assertThat(provider.accepts("no-such-scheme://h/x")).isFalse();
        try (LockBackend opened = provider.open(harness().uri(), harness().properties())) {
            String name = name();
            assertThat(opened.tryAcquire(name, lease(), TTL).acquired()).isTrue();
            assertThat(backend().inspect(name).orElseThrow().held())
                    .as("the same records as the backend under test")
                    .isTrue();
        }
    }

    @Test
    void anUnreachableServerFailsRetryablyAndShowsNoPassword() {
        String secret = "Wr0ng-" + UUID.randomUUID();
        Throwable unreachable = catchThrowable(() ->
                provider().open(harness().unreachableUri(secret), Map.of()).close());
        assertThat(unreachable).isInstanceOf(LockBackendException.class);
        assertThat(((LockBackendException) unreachable).isRetryable())
                .as("a server that is down may come back")
                .isTrue();
        CredentialChecks.assertNoSecret(unreachable, secret);
    }

    @Test
    void badSettingsAreRefusedBeforeAnyIo() {
        // every URI here points at a port nobody listens on: any I/O would fail with a connection error instead
        String offline = harness().unreachableUri("");
        harness()
                .badSettings()
                .forEach((settings, named) -> assertThatThrownBy(
                                () -> provider().open(offline, settings).close())
                        .as(settings.toString())
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(named));
        String secret = "s3cret-" + UUID.randomUUID();
        Map<String, String> misspelled = new HashMap<>(Map.of(harness().misspelledProperty(), "x", "password", secret));
        assertThatThrownBy(() -> provider().open(offline, misspelled).close())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(harness().misspelledProperty())
                .hasMessageNotContaining(secret);
        for (String bad : harness().malformedPortUris(secret)) {
            assertThatThrownBy(() -> provider().open(bad, Map.of()).close())
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("port '")
                    .hasMessageNotContaining(secret);
        }
    }

    private LockBackendProvider provider() {
        return ServiceLoader.load(LockBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals(harness().providerName()))
                .findFirst()
                .orElseThrow();
    }
}
