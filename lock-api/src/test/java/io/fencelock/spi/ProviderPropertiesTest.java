package io.fencelock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProviderPropertiesTest {
    /** Only its name and prefixes matter here; it never opens anything. */
    private static final LockBackendProvider PROVIDER = new LockBackendProvider() {
        @Override
        public String name() {
            return "demo";
        }

        @Override
        public List<String> uriPrefixes() {
            return List.of("demo:");
        }

        @Override
        public LockBackend open(String uri, Map<String, String> properties) {
            throw new UnsupportedOperationException();
        }
    };

    @Test
    void knownKeysAreParsedAndPassedOn() {
        List<Object> seen = new ArrayList<>();
        ProviderProperties.check(
                        PROVIDER,
                        "demo://h",
                        Map.of("table", "t", "createTable", "TRUE", "poolSize", " 4 "),
                        Set.of("table", "createTable", "poolSize", "user"))
                .ifPresent("table", seen::add)
                .ifPresentBoolean("createTable", seen::add)
                .ifPresentInt("poolSize", seen::add)
                .ifPresent("user", seen::add);
        assertThat(seen).containsExactly("t", true, 4);
    }

    @Test
    void unknownKeysAndForeignUrisAreRefusedWithoutValues() {
        assertThatThrownBy(() ->
                        ProviderProperties.check(PROVIDER, "demo://h", Map.of("pasword", "s3cret"), Set.of("password")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[pasword]")
                .hasMessageContaining("known: [password]")
                .hasMessageNotContaining("s3cret");
        // without a URI (a backend opened on the application's DataSource): the same key check
        assertThatThrownBy(() -> ProviderProperties.checkKeys(PROVIDER, Map.of("poolSize", "4"), Set.of("table")))
                .hasMessageContaining("unknown demo lock backend properties [poolSize]; known: [table]");
        assertThatThrownBy(() -> ProviderProperties.check(PROVIDER, "other://bob:s3cret@h", Map.of(), Set.of()))
                .hasMessageContaining("demo:")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> ProviderProperties.check(PROVIDER, "demo://h", Map.of("n", "x"), Set.of("n"))
                        .ifPresentInt("n", v -> {}))
                .hasMessageContaining("n must be a whole number, got 'x'");
        assertThatThrownBy(() -> ProviderProperties.check(PROVIDER, "demo://h", Map.of("b", "yes"), Set.of("b"))
                        .ifPresentBoolean("b", v -> {}))
                .hasMessageContaining("b must be true or false, got 'yes'");
    }
}
