package io.fencelock.postgres;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.fixture.FixtureSelfCheck;
import io.fencelock.tck.fixture.PostgresServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The contract test's fixture supplies what the fault properties need. */
class PostgresFixtureTest {
    private final BackendFixture fixture = PostgresContractTest.fixtureOn(PostgresServer.shared());

    @Test
    void clientConnectionOpensTheSameDatabase() {
        FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
    }

    @Test
    void backendViaAProxyGoesThroughItWithShortTimeouts() {
        // env URLs may name several hosts: no single address then
        if (fixture.proxyTarget().isPresent()) {
            Duration took = FixtureSelfCheck.openBackendViaGoesThroughVia(fixture, Duration.ofSeconds(8));
            System.out.println("[postgres-fixture] a swallowed call failed after " + took.toMillis() + " ms");
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        }
    }
}
