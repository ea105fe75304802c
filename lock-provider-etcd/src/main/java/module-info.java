/**
 * The etcd lock backend: {@link io.fencelock.etcd.EtcdLockBackend} on jetcd, also found through
 * {@link java.util.ServiceLoader} for {@code etcd:} URIs.
 */
module io.fencelock.etcd {
    requires transitive io.fencelock; // the backend implements its SPI
    requires jetcd.core;
    requires jetcd.common;
    requires io.grpc;
    requires org.slf4j;

    exports io.fencelock.etcd;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.etcd.EtcdLockBackendProvider;
}
