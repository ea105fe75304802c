package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TokenGuardTest {

    @Test
    void admitsEqualAndHigherTokensPerResourceAndRefusesLowerOnes() {
        TokenGuard guard = TokenGuard.inMemory();
        guard.admit("a", 5);
        guard.admit("a", 5);
        guard.admit("a", 7);
        guard.admit("b", 1); // resources are independent
        StaleTokenException e = catchThrowableOfType(StaleTokenException.class, () -> guard.admit("a", 6));
        assertThat(e.offeredToken()).isEqualTo(6);
        assertThat(e.currentToken()).isEqualTo(7);
        assertThat(guard.tryAdmit("a", 6)).isFalse();
        assertThat(guard.current("a")).hasValue(7);
        assertThat(guard.current("b")).hasValue(1);
        assertThat(guard.current("c")).isEmpty();
    }

    @Test
    void runFencedRunsOnlyAdmittedWork() throws Exception {
        TokenGuard guard = TokenGuard.inMemory();
        AtomicInteger ran = new AtomicInteger();
        assertThat(guard.runFenced("r", 3, ran::incrementAndGet)).isEqualTo(1);
        assertThatThrownBy(() -> guard.runFenced("r", 2, ran::incrementAndGet)).isInstanceOf(StaleTokenException.class);
        assertThat(ran).hasValue(1);
    }

    @Test
    void aGuardCanBeBackedByTheServicesOwnStore() {
        Map<String, Long> table = new HashMap<>();
        TokenStore store = new TokenStore() {
            @Override
            public synchronized long advance(String resource, long token) {
                return table.merge(resource, token, Math::max);
            }

            @Override
            public synchronized OptionalLong current(String resource) {
                Long t = table.get(resource);
                return t == null ? OptionalLong.empty() : OptionalLong.of(t);
            }
        };
        TokenGuard guard = TokenGuard.backedBy(store);
        guard.admit("r", 4);
        assertThat(table).containsEntry("r", 4L);
        assertThat(TokenGuard.backedBy(store).tryAdmit("r", 3))
                .as("a second guard on the same store")
                .isFalse();
    }

    @Test
    void theHeaderTravelsThroughSettersAndGetters() {
        Map<String, String> headers = new HashMap<>();
        TokenGuard.putHeader(headers::put, 42);
        assertThat(headers).containsEntry("Fencing-Token", "42");
        assertThat(TokenGuard.readHeader(headers::get)).hasValue(42);
        assertThat(TokenGuard.readHeader(name -> null)).isEmpty();
        assertThat(TokenGuard.parseHeader(" 9223372036854775807 ")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void badHeaderValuesNameTheValueAndTheRule() {
        for (String bad : new String[] {"", "0", "-5", "+5", "1e3", "abc", "9223372036854775808", "12 34"}) {
            assertThatThrownBy(() -> TokenGuard.parseHeader(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'")
                    .hasMessageContaining("positive long");
        }
        String huge = "7".repeat(10_000);
        assertThatThrownBy(() -> TokenGuard.parseHeader(huge))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage().length())
                        .as("an attacker's value is shortened")
                        .isLessThan(300));
        assertThatThrownBy(() -> TokenGuard.readHeader(name -> "x")).isInstanceOf(IllegalArgumentException.class);
    }
}
