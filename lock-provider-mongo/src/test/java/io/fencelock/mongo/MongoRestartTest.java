package io.fencelock.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockBackendException;
import io.fencelock.spi.AcquireResult;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.testservers.mongo.MongoServer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The in-JVM server's control, as the fault properties use it: the backend reconnects to a server killed and started empty. */
class MongoRestartTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void theBackendReconnectsAfterTheInJvmServerIsKilledAndStartedEmpty() {
        try (MongoServer server = MongoServer.start(MongoServer.Source.EMBEDDED)) {
            BackendFixture fixture = MongoContractTest.fixtureOn(server);
            ServerControl control = fixture.control().orElseThrow();
            assertThatThrownBy(control::pause).isInstanceOf(UnsupportedOperationException.class);
            try (LockBackend backend = MongoLockBackend.builder()
                    .uri(server.uri())
                    .database(server.uniqueDatabase("restart"))
                    .timeout(Duration.ofSeconds(2))
                    .build()) {
                String name = "restart-" + UUID.randomUUID();
                assertThat(backend.tryAcquire(name, UUID.randomUUID().toString(), TTL)
                                .acquired())
                        .isTrue();

                control.kill();
                assertThatThrownBy(
                                () -> backend.tryAcquire(name, UUID.randomUUID().toString(), TTL))
                        .isInstanceOf(LockBackendException.class);
                control.start();

                AcquireResult again = awaitAnswer(
                        () -> backend.tryAcquire(name, UUID.randomUUID().toString(), TTL));
                assertThat(again.acquired())
                        .as("the restarted server is empty: the old hold is gone")
                        .isTrue();
            }
        }
    }

    /** The same backend answers once its driver has found the restarted server; bounded only to stop a hang. */
    private static AcquireResult awaitAnswer(java.util.function.Supplier<AcquireResult> call) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try {
                return call.get();
            } catch (LockBackendException e) {
                assertThat(e.isRetryable())
                        .as("a failure while reconnecting is retryable: " + e)
                        .isTrue();
                assertThat(System.nanoTime() < deadline)
                        .as("the backend reconnects within 20 s: " + e)
                        .isTrue();
            }
        }
    }
}
