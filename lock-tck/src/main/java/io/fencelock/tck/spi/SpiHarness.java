package io.fencelock.tck.spi;

import io.fencelock.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What {@link LockBackendSpiTemplate} needs from one provider: its backend on a live server, how the
 * provider opens the same backend from a URI, and the bad input and credential-bearing URIs it must
 * refuse. A provider's test builds it in a few lines ({@link #builder(LockBackend, String)}); everything
 * else is shared.
 */
public interface SpiHarness {

    /** The backend under test, open for the whole test class (the test class closes it). */
    LockBackend backend();

    /** The provider's {@code LockBackendProvider.name()}, by which {@code ServiceLoader} finds it. */
    String providerName();

    /** A URI of the live server that the provider accepts. */
    String uri();

    /** The properties with which the provider opens {@link #uri()} onto the records {@link #backend()} uses. */
    Map<String, String> properties();

    /** A URI carrying {@code password} (as the provider takes it) to a loopback port nobody listens on. */
    String unreachableUri(String password);

    /** URIs whose port is no port, each carrying {@code secret}: refused before any I/O. */
    List<String> malformedPortUris(String secret);

    /** Properties refused before any I/O, each with a piece of text the refusal must name (the key or the value). */
    Map<Map<String, String>, String> badSettings();

    /** A near miss of a real property name ({@code tabel}), which the provider must refuse by name. */
    String misspelledProperty();

    /** A fresh lock name no other test uses. */
    default String name() {
        return "test/" + UUID.randomUUID();
    }

    /** The shortest lease the backend keeps; the template waits a few milliseconds past it to see it expired. */
    default Duration shortestTtl() {
        return Duration.ofMillis(1);
    }

    /** How far the expiry a grant reports may lie from the one stored (zero where the grant reports the stored value). */
    default Duration grantExpiryPrecision() {
        return Duration.ZERO;
    }

    /**
     * The server's count of calls that carry a batch renewal so far (e.g. script calls), when it can be
     * read and nobody else uses the server: the template then checks that a renewal of a thousand
     * leases is one call. Empty when it cannot be counted.
     */
    default OptionalLong renewCalls() {
        return OptionalLong.empty();
    }

    /** A harness for {@code backend}, which the provider named {@code providerName} opens: see {@link Builder}. */
    static Builder builder(LockBackend backend, String providerName) {
        return new Builder(backend, providerName);
    }

    /**
     * Builds a {@link SpiHarness} from its parts: {@link #uri(String, Map)}, {@link #unreachableUri(Function)},
     * {@link #malformedPortUris(Function)}, {@link #badSettings(Map)} and {@link #misspelledProperty(String)}
     * are required; the rest keep the interface's defaults unless given.
     */
    final class Builder {
        private final LockBackend backend;
        private final String providerName;
        private String uri;
        private Map<String, String> properties;
        private Function<String, String> unreachableUri;
        private Function<String, List<String>> malformedPortUris;
        private Map<Map<String, String>, String> badSettings;
        private String misspelledProperty;
        private Duration grantExpiryPrecision = Duration.ZERO;
        private Supplier<OptionalLong> renewCalls = OptionalLong::empty;

        private Builder(LockBackend backend, String providerName) {
            this.backend = Objects.requireNonNull(backend, "backend");
            this.providerName = Objects.requireNonNull(providerName, "providerName");
        }

        /** See {@link SpiHarness#uri()} and {@link SpiHarness#properties()}. */
        public Builder uri(String uri, Map<String, String> properties) {
            this.uri = uri;
            this.properties = Map.copyOf(properties);
            return this;
        }

        /** See {@link SpiHarness#unreachableUri(String)}: from the password to the URI. */
        public Builder unreachableUri(Function<String, String> unreachableUri) {
            this.unreachableUri = unreachableUri;
            return this;
        }

        /** See {@link SpiHarness#malformedPortUris(String)}: from the secret to the URIs. */
        public Builder malformedPortUris(Function<String, List<String>> malformedPortUris) {
            this.malformedPortUris = malformedPortUris;
            return this;
        }

        /** See {@link SpiHarness#badSettings()}. */
        public Builder badSettings(Map<Map<String, String>, String> badSettings) {
            this.badSettings = Map.copyOf(badSettings);
            return this;
        }

        /** See {@link SpiHarness#misspelledProperty()}. */
        public Builder misspelledProperty(String misspelledProperty) {
            this.misspelledProperty = misspelledProperty;
            return this;
        }

        /** See {@link SpiHarness#grantExpiryPrecision()}. */
        public Builder grantExpiryPrecision(Duration grantExpiryPrecision) {
            this.grantExpiryPrecision = Objects.requireNonNull(grantExpiryPrecision, "grantExpiryPrecision");
            return this;
        }

        /** See {@link SpiHarness#renewCalls()}: asked anew each time the template reads the count. */
        public Builder renewCalls(Supplier<OptionalLong> renewCalls) {
            this.renewCalls = Objects.requireNonNull(renewCalls, "renewCalls");
            return this;
        }

        /** The harness; fails naming the first required part left out. */
        public SpiHarness build() {
            require(uri, "uri");
            require(unreachableUri, "unreachableUri");
            require(malformedPortUris, "malformedPortUris");
            require(badSettings, "badSettings");
            require(misspelledProperty, "misspelledProperty");
            return new BuiltHarness(
                    backend,
                    providerName,
                    uri,
                    properties,
                    unreachableUri,
                    malformedPortUris,
                    badSettings,
                    misspelledProperty,
                    grantExpiryPrecision,
                    renewCalls);
        }

        private void require(Object part, String name) {
            if (part == null) {
                throw new IllegalStateException("the SpiHarness of '" + providerName + "' needs " + name + "(..)");
            }
        }
    }
}
