package io.fencelock.certify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.Capability;
import io.fencelock.LockHolder;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.GrantKind;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.SharedChecks;
import io.fencelock.tck.fault.FaultRun;
import io.fencelock.tck.fault.FaultScenarios;
import io.fencelock.tck.fault.SharedFaultScenarios;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The shared-lock properties are not vacuous: each flawed shared backend below (the in-memory one
 * with one seeded flaw) is caught by the property that guards against it.
 */
class BrokenSharedBackendsAreCaughtTest {
    private final AtomicInteger names = new AtomicInteger();
    private final String run = "broken-" + UUID.randomUUID().toString().substring(0, 8);

    /**
     * A permit count that ignores the holders' real expiry: the backend keeps a semaphore's grants for
     * a quarter of their TTL only, so it hands their permits out again while the holders still hold.
     */
    @Test
    void aPermitCountThatIgnoresExpiryIsCaught() {
        try (SharedChecks checks = checks(Flawed::permitsExpireEarly)) {
            assertThatThrownBy(() -> {
                        for (long seed = 1; seed <= 5; seed++) {
                            List<SharedChecks.Hold> holds = checks.randomPermits(seed, 3);
                            SharedChecks.require(
                                    "permitsNeverExceeded", seed, SharedChecks.permitsExceeded(holds, 3), holds);
                        }
                    })
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("permitsNeverExceeded");
        }
    }

    /** A reader admitted past a waiting writer: the backend never records a writer's intent. */
    @Test
    void aReaderAdmittedPastAWaitingWriterIsCaught() {
        try (SharedChecks checks = checks(Flawed::noWriterIntent)) {
            assertThatThrownBy(checks::waitingWriterIsNotStarved)
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("waitingWriterIsNotStarved");
        }
    }

    /**
     * A renewal that looks for a shared grant where the mutex's holder is kept: told that the lease is a
     * shared grant ({@code GrantKind.SHARED}), it finds nothing there and rejects it, so every
     * reader, writer, permit holder and fair mutex loses its grant at the first renewal.
     */
    @Test
    void aRenewalThatLooksForSharedGrantsInTheMutexsPlaceIsCaught() {
        assertEveryKindOfGrantCatches(Flawed::sharedRenewalInTheMutexsPlace, "lost while renewed");
    }

    /**
     * A release that looks for a shared grant where the mutex's holder is kept: told that the lease is a
     * shared grant, it frees nothing, so the grant stays until its TTL ends.
     */
    @Test
    void aReleaseThatLooksForSharedGrantsInTheMutexsPlaceIsCaught() {
        assertEveryKindOfGrantCatches(Flawed::sharedReleaseInTheMutexsPlace, "release");
    }

    /** renewalKeepsEveryKindOfGrant, with a fair mutex too, fails on {@code flaw}, saying {@code what}. */
    private void assertEveryKindOfGrantCatches(Function<LockBackend, LockBackend> flaw, String what) {
        try (SharedChecks checks = checks(flaw)) {
            assertThatThrownBy(() -> checks.renewalKeepsEveryKindOfGrant(true))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("renewalKeepsEveryKindOfGrant")
                    .hasMessageContaining(what);
        }
    }

    /**
     * A shared renewal that extends an already expired grant (a renewal that sets the expiry of the
     * grant's record without asking whether it had expired): in normal operation a grant is renewed
     * only before it expires, so the random schedules pass; only a renewal that stalled past the TTL
     * and reached the backend late brings a lost grant back, beside the grants made since. The fault
     * run with stalled renewals catches it.
     */
    @Test
    void aSharedRenewalThatRevivesAnExpiredGrantIsCaught() throws Exception {
        BackendFixture fixture = fixture(Flawed::renewalRevivesExpired);
        try (SharedChecks checks = new SharedChecks(fixture, this::name)) {
            List<SharedChecks.Hold> holds = checks.randomReadWrite(1);
            SharedChecks.require("writersExcludeEveryone", 1, SharedChecks.writerOverlaps(holds), holds);
        }
        SharedFaultScenarios shared =
                new SharedFaultScenarios(fixture, this::name, new FaultScenarios(fixture, this::name));
        List<FaultRun> runs = shared.pauses(1);
        assertThat(runs)
                .singleElement()
                .satisfies(r -> assertThat(r.check(FaultRun.LOST_GRANT_NOT_REVIVED))
                        .as("the check under " + r.fault())
                        .hasValueSatisfying(
                                c -> assertThat(c.passed()).as(c.detail()).isFalse()));
    }

    private String name() {
        return run + "-n" + names.incrementAndGet();
    }

    private SharedChecks checks(Function<LockBackend, LockBackend> flaw) {
        return new SharedChecks(fixture(flaw), this::name);
    }

    private BackendFixture fixture(Function<LockBackend, LockBackend> flaw) {
        String store = run + "-" + names.incrementAndGet();
        return new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return flaw.apply(InMemoryLockBackend.builder().store(store).build());
            }

            @Override
            public String description() {
                return "flawed in-memory store";
            }

            @Override
            public Optional<String> inThisJvmOnly() {
                return Optional.of("the in-memory backend lives in this JVM");
            }
        };
    }

    /** The in-memory backend with one flaw in how it treats shared requests. */
    private static final class Flawed implements LockBackend {
        private enum Flaw {
            PERMITS_EXPIRE_EARLY,
            NO_WRITER_INTENT,
            RENEWAL_REVIVES_EXPIRED,
            SHARED_RENEWAL_IN_THE_MUTEXS_PLACE,
            SHARED_RELEASE_IN_THE_MUTEXS_PLACE
        }

        /** A shared grant's record as the reviving backend keeps it after its expiry: never deleted. */
        private record Row(String name, LockMode mode, int permits, long token) {}

        /** The records of one store's shared grants, by lease id, and the grants a late renewal revived. */
        private static final Map<String, Row> ROWS = new ConcurrentHashMap<>();

        private static final Map<String, Instant> REVIVED = new ConcurrentHashMap<>();

        private final LockBackend delegate;
        private final Flaw flaw;
        private final Set<String> permitLeases = ConcurrentHashMap.newKeySet();

        private Flawed(LockBackend delegate, Flaw flaw) {
            this.delegate = delegate;
            this.flaw = flaw;
        }

        static LockBackend permitsExpireEarly(LockBackend delegate) {
            return new Flawed(delegate, Flaw.PERMITS_EXPIRE_EARLY);
        }

        static LockBackend noWriterIntent(LockBackend delegate) {
            return new Flawed(delegate, Flaw.NO_WRITER_INTENT);
        }

        static LockBackend renewalRevivesExpired(LockBackend delegate) {
            return new Flawed(delegate, Flaw.RENEWAL_REVIVES_EXPIRED);
        }

        static LockBackend sharedRenewalInTheMutexsPlace(LockBackend delegate) {
            return new Flawed(delegate, Flaw.SHARED_RENEWAL_IN_THE_MUTEXS_PLACE);
        }

        static LockBackend sharedReleaseInTheMutexsPlace(LockBackend delegate) {
            return new Flawed(delegate, Flaw.SHARED_RELEASE_IN_THE_MUTEXS_PLACE);
        }

        @Override
        public AcquireResult tryAcquireShared(
                String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
            if (flaw == Flaw.PERMITS_EXPIRE_EARLY && request.mode() == LockMode.PERMITS) {
                permitLeases.add(leaseId);
                return delegate.tryAcquireShared(name, leaseId, ttl.dividedBy(4), request, metadata);
            }
            if (flaw == Flaw.RENEWAL_REVIVES_EXPIRED) {
                AcquireResult result = delegate.tryAcquireShared(name, leaseId, ttl, request, metadata);
                if (result.acquired()) {
                    ROWS.put(leaseId, new Row(name, request.mode(), request.permits(), result.token()));
                }
                return result;
            }
            if (flaw == Flaw.NO_WRITER_INTENT && request.mode() == LockMode.WRITE) {
                SharedRequest noIntent = new SharedRequest(
                        request.mode(), request.permits(), request.limit(), request.waiterId(), false, request.fair());
                return delegate.tryAcquireShared(name, leaseId, ttl, noIntent, metadata);
            }
            return delegate.tryAcquireShared(name, leaseId, ttl, request, metadata);
        }

        @Override
        public List<RenewResult> renew(List<RenewRequest> requests) {
            if (flaw == Flaw.SHARED_RENEWAL_IN_THE_MUTEXS_PLACE) {
                // the mutex's holder is not the shared grant: nothing found, rejected
                return requests.stream()
                        .map(r -> r.grant() == GrantKind.SHARED
                                ? RenewResult.rejected()
                                : delegate.renew(List.of(r)).get(0))
                        .toList();
            }
            List<RenewResult> results = delegate.renew(requests.stream()
                    .map(r -> permitLeases.contains(r.leaseId())
                            ? new RenewRequest(r.name(), r.leaseId(), r.ttl().dividedBy(4), r.tokenPeriod(), r.grant())
                            : r)
                    .toList());
            if (flaw != Flaw.RENEWAL_REVIVES_EXPIRED) {
                return results;
            }
            List<RenewResult> revived = new ArrayList<>(results);
            for (int i = 0; i < requests.size(); i++) {
                Row row = ROWS.get(requests.get(i).leaseId());
                if (!results.get(i).renewed() && row != null) {
                    // the record's expiry is set anew, whether or not it had expired
                    Instant expiry = Instant.now().plus(requests.get(i).ttl());
                    REVIVED.put(requests.get(i).leaseId(), expiry);
                    revived.set(i, RenewResult.renewed(row.token(), expiry));
                }
            }
            return revived;
        }

        @Override
        public RenewResult downgrade(String name, String leaseId, Duration ttl) {
            return delegate.downgrade(name, leaseId, ttl);
        }

        @Override
        public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
            return delegate.tryAcquire(name, leaseId, ttl);
        }

        @Override
        public boolean release(String name, String leaseId) {
            return delegate.release(name, leaseId);
        }

        @Override
        public boolean release(String name, String leaseId, GrantKind grant) {
            if (flaw == Flaw.SHARED_RELEASE_IN_THE_MUTEXS_PLACE && grant == GrantKind.SHARED) {
                return false; // the mutex's holder is not the shared grant: nothing freed
            }
            return delegate.release(name, leaseId, grant);
        }

        @Override
        public Optional<LockInfo> inspect(String name) {
            Optional<LockInfo> info = delegate.inspect(name);
            List<LockHolder> revived = new ArrayList<>();
            REVIVED.forEach((leaseId, expiry) -> {
                Row row = ROWS.get(leaseId);
                if (row.name().equals(name) && expiry.isAfter(Instant.now())) {
                    revived.add(new LockHolder(
                            leaseId, row.mode(), row.permits(), row.token(), expiry, LockMetadata.NONE, null));
                }
            });
            if (revived.isEmpty()) {
                return info;
            }
            List<LockHolder> holders =
                    new ArrayList<>(info.map(LockInfo::holders).orElse(List.of()));
            holders.addAll(revived);
            LockHolder last = holders.get(holders.size() - 1);
            return Optional.of(new LockInfo(
                    name,
                    true,
                    last.leaseId(),
                    last.token(),
                    last.expiresAt(),
                    Instant.now(),
                    LockMetadata.NONE,
                    null,
                    info.map(LockInfo::kind).orElse(last.mode() == LockMode.WRITE ? LockMode.READ : last.mode()),
                    info.map(LockInfo::limit).orElse(0),
                    holders));
        }

        @Override
        public List<LockInfo> list(String prefix) {
            return delegate.list(prefix);
        }

        @Override
        public Set<Capability> capabilities() {
            return delegate.capabilities();
        }

        @Override
        public Optional<ReleaseFeed> releaseFeed() {
            return delegate.releaseFeed();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
