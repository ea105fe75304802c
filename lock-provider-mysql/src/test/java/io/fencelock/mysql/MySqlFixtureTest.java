package io.fencelock.mysql;

import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.fixture.FixtureSelfCheck;
import io.fencelock.tck.fixture.MariaDbServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The contract test's fixture supplies what the fault properties need. */
class MySqlFixtureTest {
    private final BackendFixture fixture = MySqlContractTest.fixtureOn(MariaDbServer.shared());

    @Test
    void clientConnectionOpensTheSameDatabase() {
        FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
    }

    @Test
    void backendViaAProxyGoesThroughItWithShortTimeouts() {
        // env URLs may name several hosts: no single address then
        if (fixture.proxyTarget().isPresent()) {
            Duration took = FixtureSelfCheck.openBackendViaGoesThroughVia(fixture, Duration.ofSeconds(8));
            System.out.println("[mysql-fixture] a swallowed call failed after " + took.toMillis() + " ms");
            assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        }
    }
}
