/**
 * The resource side of fencing: guards that reject writes carrying a fencing token lower than one
 * the resource has already accepted. {@link io.fencelock.fencing.JdbcFence} (one write at a time),
 * {@link io.fencelock.fencing.TableFence} (a trigger on every write path),
 * {@link io.fencelock.fencing.RedisFence} (needs Lettuce on the module path),
 * {@link io.fencelock.fencing.MongoFence} (needs mongodb-driver-sync) and
 * {@link io.fencelock.fencing.TokenGuard} (tokens that arrive over HTTP, gRPC or queues).
 */
module io.fencelock.fencing {
    requires transitive java.sql; // JdbcFence and TableFence take a java.sql.Connection
    requires io.fencelock;
    requires io.fencelock.jdbc; // the one rule for SQL identifiers
    requires static lettuce.core; // RedisFence only
    requires static org.mongodb.driver.sync.client; // MongoFence only
    requires static org.mongodb.driver.core;
    requires static org.mongodb.bson;

    exports io.fencelock.fencing;
}
