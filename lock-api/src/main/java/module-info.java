/**
 * fencelock: distributed locks with fencing tokens. The user API lives in {@code io.fencelock};
 * providers implement {@code io.fencelock.spi} and are found through {@link java.util.ServiceLoader}.
 */
module io.fencelock {
    requires org.slf4j;

    exports io.fencelock;
    exports io.fencelock.spi;
    exports io.fencelock.coordination;
    exports io.fencelock.inmemory;

    uses io.fencelock.spi.LockBackendProvider;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.inmemory.InMemoryLockBackendProvider;
}
