package io.fencelock.tck;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.fixture.ServerControl;

import java.util.Optional;

/**
 * What a provider's TCK test supplies: a way to open backends on a real server. Each call of
 * {@link #openBackend()} must return an independent backend (its own connections), as another
 * process would open; the TCK closes what it opens.
 */
public interface BackendFixture {

    /** A new backend on the fixture's server, with the provider's schema ready. */
    LockBackend openBackend();

    /** For reports: which backend, which version, where it came from. Never credentials. */
    String description();

    /** The server's controls for fault properties, when the fixture can stop and start it. */
    default Optional<ServerControl> control() {
        return Optional.empty();
    }
}
