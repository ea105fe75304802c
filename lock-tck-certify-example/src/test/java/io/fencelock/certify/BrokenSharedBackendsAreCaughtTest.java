package io.fencelock.certify;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.LockMode;
import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.ReleaseFeed;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.spi.SharedRequest;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.SharedChecks;
import java.time.Duration;
import java.util.List;
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

    private SharedChecks checks(Function<LockBackend, LockBackend> flaw) {
        String store = run + "-" + names.incrementAndGet();
        BackendFixture fixture = new BackendFixture() {
            @Override
            public LockBackend openBackend() {
                return flaw.apply(InMemoryLockBackend.builder().store(store).build());
            }

            @Override
            public String description() {
                return "flawed in-memory store";
            }
        };
        return new SharedChecks(fixture, () -> run + "-n" + names.incrementAndGet());
    }

    /** The in-memory backend with one flaw in how it treats shared requests. */
    private static final class Flawed implements LockBackend {
        private final LockBackend delegate;
        private final boolean permitsExpireEarly;
        private final Set<String> permitLeases = ConcurrentHashMap.newKeySet();

        private Flawed(LockBackend delegate, boolean permitsExpireEarly) {
            this.delegate = delegate;
            this.permitsExpireEarly = permitsExpireEarly;
        }

        static LockBackend permitsExpireEarly(LockBackend delegate) {
            return new Flawed(delegate, true);
        }

        static LockBackend noWriterIntent(LockBackend delegate) {
            return new Flawed(delegate, false);
        }

        @Override
        public AcquireResult tryAcquireShared(
                String name, String leaseId, Duration ttl, SharedRequest request, LockMetadata metadata) {
            if (permitsExpireEarly && request.mode() == LockMode.PERMITS) {
                permitLeases.add(leaseId);
                return delegate.tryAcquireShared(name, leaseId, ttl.dividedBy(4), request, metadata);
            }
            if (!permitsExpireEarly && request.mode() == LockMode.WRITE) {
                SharedRequest noIntent = new SharedRequest(
                        request.mode(), request.permits(), request.limit(), request.waiterId(), false, request.fair());
                return delegate.tryAcquireShared(name, leaseId, ttl, noIntent, metadata);
            }
            return delegate.tryAcquireShared(name, leaseId, ttl, request, metadata);
        }

        @Override
        public List<RenewResult> renew(List<RenewRequest> requests) {
            return delegate.renew(requests.stream()
                    .map(r -> permitLeases.contains(r.leaseId())
                            ? new RenewRequest(r.name(), r.leaseId(), r.ttl().dividedBy(4), r.tokenPeriod())
                            : r)
                    .toList());
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
        public Optional<LockInfo> inspect(String name) {
            return delegate.inspect(name);
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
