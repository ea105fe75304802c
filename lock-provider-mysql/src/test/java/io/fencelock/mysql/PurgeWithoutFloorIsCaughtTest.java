package io.fencelock.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.fencelock.Capability;
import io.fencelock.LockInfo;
import io.fencelock.LockMetadata;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.spi.RenewResult;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.LockBackendContract;
import io.fencelock.tck.matrix.MatrixRecorder;
import io.fencelock.testservers.mysql.MariaDbServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Why the floor exists, shown by the TCK itself: the same backend with a purge that deletes free
 * rows without raising the floor (the bigserial design's "cleanup" next to {@code token + 1}) must fail
 * {@code newHolderExceedsAllPriorTokens} and {@code tokensRiseWhilePurgesRace}, and the real
 * backend passes both (see MySqlContractTest).
 */
class PurgeWithoutFloorIsCaughtTest {

    @Test
    void theKitCatchesAPurgeThatForgetsTheFloor() {
        assertThat(failureOf("newHolderExceedsAllPriorTokens").getMessage())
                .contains("token after the lock's record was purged");
    }

    @Test
    void theRaceWithAPurgerCatchesAPurgeThatForgetsTheFloor() {
        assertThat(failureOf("tokensRiseWhilePurgesRace").getMessage()).contains("fencedResourceRejectsStaleWriters");
    }

    private static Throwable failureOf(String property) {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(NaivePurgeContract.class, property))
                .configurationParameter("junit.jupiter.conditions.deactivate", "*")
                // a deliberately flawed backend's matrix is no real result: kept out of the comparison report's way
                .configurationParameter(MatrixRecorder.DIRECTORY_PARAMETER, "target/fencelock-tck-flawed")
                .execute()
                .testEvents();
        assertThat(events.failed().count()).as("failed properties").isEqualTo(1);
        return events.failed().stream()
                .findFirst()
                .orElseThrow()
                .getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .orElseThrow()
                .getThrowable()
                .orElseThrow();
    }

    /** The contract on a backend whose purge is a plain DELETE of free rows. Run only through the test kit above. */
    static class NaivePurgeContract extends LockBackendContract {
        @Override
        protected BackendFixture fixture() {
            MariaDbServer server = MariaDbServer.shared();
            String url = server.createDatabase("naive_purge");
            MySqlLockBackend.builder()
                    .jdbcUrl(url)
                    .user(server.user())
                    .password(server.password())
                    .createTable(true)
                    .build()
                    .close();
            return new BackendFixture() {
                @Override
                public LockBackend openBackend() {
                    return new NaivePurge(
                            MySqlLockBackend.builder()
                                    .jdbcUrl(url)
                                    .user(server.user())
                                    .password(server.password())
                                    .poolSize(2)
                                    .build(),
                            server,
                            url);
                }

                @Override
                public String description() {
                    return "purge without the floor on " + server.description();
                }
            };
        }
    }

    /** Everything delegated, except purgeFree: the rows go, the floor stays where it was. */
    private record NaivePurge(MySqlLockBackend real, MariaDbServer server, String url) implements LockBackend {
        @Override
        public AcquireResult tryAcquire(String name, String leaseId, Duration ttl) {
            return real.tryAcquire(name, leaseId, ttl);
        }

        @Override
        public AcquireResult tryAcquire(String name, String leaseId, Duration ttl, LockMetadata metadata) {
            return real.tryAcquire(name, leaseId, ttl, metadata);
        }

        @Override
        public List<RenewResult> renew(List<RenewRequest> requests) {
            return real.renew(requests);
        }

        @Override
        public boolean release(String name, String leaseId) {
            return real.release(name, leaseId);
        }

        @Override
        public Optional<LockInfo> inspect(String name) {
            return real.inspect(name);
        }

        @Override
        public List<LockInfo> list(String prefix) {
            return real.list(prefix);
        }

        @Override
        public Set<Capability> capabilities() {
            return real.capabilities();
        }

        @Override
        public int purgeFree(Duration freeFor) {
            try (Connection c = server.connect(url);
                    PreparedStatement ps = c.prepareStatement(
                            "DELETE FROM fencelock_locks WHERE expires_at <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND")) {
                ps.setLong(1, freeFor.toNanos() / 1000);
                return ps.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            real.close();
        }
    }
}
