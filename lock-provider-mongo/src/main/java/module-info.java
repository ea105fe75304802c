/**
 * The MongoDB lock backend: {@link io.fencelock.mongo.MongoLockBackend} on mongodb-driver-sync, also
 * found through {@link java.util.ServiceLoader} for {@code mongodb:} and {@code mongodb+srv:} URIs.
 */
module io.fencelock.mongo {
    requires transitive io.fencelock; // the backend implements its SPI
    requires transitive org.mongodb.driver.sync.client; // the builder takes a MongoClient
    requires org.mongodb.driver.core;
    requires org.mongodb.bson;
    requires org.slf4j;

    exports io.fencelock.mongo;

    provides io.fencelock.spi.LockBackendProvider with
            io.fencelock.mongo.MongoLockBackendProvider;
}
