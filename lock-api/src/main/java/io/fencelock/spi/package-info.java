/**
 * The provider SPI: a {@link io.fencelock.spi.LockBackend} is a backend's atomic primitive and nothing
 * more (each operation one round trip); a {@link io.fencelock.spi.LockBackendProvider} opens one from a
 * connection string through {@link java.util.ServiceLoader}. Helpers every provider shares: connection
 * strings parsed and redacted by structure, provider properties.
 */
package io.fencelock.spi;
