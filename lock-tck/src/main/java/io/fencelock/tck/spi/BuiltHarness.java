package io.fencelock.tck.spi;

import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/** What {@link SpiHarness.Builder} builds: its parts, answered as the harness's methods. */
record BuiltHarness(
        LockBackend backend,
        String providerName,
        String uri,
        Map<String, String> properties,
        Function<String, String> unreachable,
        Function<String, List<String>> malformed,
        Map<Map<String, String>, String> badSettings,
        String misspelledProperty,
        Duration grantExpiryPrecision,
        Supplier<OptionalLong> renewCallCount)
        implements SpiHarness {

    @Override
    public String unreachableUri(String password) {
        return unreachable.apply(password);
    }

    @Override
    public List<String> malformedPortUris(String secret) {
        return malformed.apply(secret);
    }

    @Override
    public OptionalLong renewCalls() {
        return renewCallCount.get();
    }

    /** Without the URI and properties: they may hold credentials. */
    @Override
    public String toString() {
        return "SpiHarness[" + providerName + "]";
    }
}
