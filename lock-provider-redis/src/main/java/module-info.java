/**
 * The Redis lock backend: {@link io.fencelock.redis.RedisLockBackend} on Lettuce, also found through
 * {@link java.util.ServiceLoader} for {@code redis:}, {@code rediss:}, {@code redis-sentinel:} and
 * {@code redis-cluster:} URIs.
 */
module io.fencelock.redis {
    requires transitive io.fencelock; // the backend implements its SPI
    requires lettuce.core;
    requires reactor.core; // a RedisURI's own credentials come as a Mono
    requires org.slf4j;

    exports io.fencelock.redis;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.redis.RedisLockBackendProvider;
}
