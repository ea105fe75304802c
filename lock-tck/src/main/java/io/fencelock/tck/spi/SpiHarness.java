package io.fencelock.tck.spi;

import io.fencelock.spi.LockBackend;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * What {@link LockBackendSpiTemplate} needs from one provider: its backend on a live server, how the
 * provider opens the same backend from a URI, and the bad input and credential-bearing URIs it must
 * refuse. A provider's test implements it in a few lines; everything else is shared.
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
}
