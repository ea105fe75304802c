package io.fencelock.fencing;

import io.fencelock.tck.ClientConnection;
import io.fencelock.testservers.mongo.MongoServer;
import io.fencelock.testservers.mysql.MariaDbServer;
import io.fencelock.testservers.postgres.PostgresServer;
import io.fencelock.testservers.redis.RedisServer;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;

/** Fresh resources on the TCK's shared servers, and the lock connection of the same backend. */
final class Backends {
    private Backends() {}

    /** A prepared target of {@code kind} in a database (or key space) of its own. */
    static FencedTarget.Spec fresh(FencedTarget.Kind kind) throws SQLException {
        FencedTarget.Spec spec = switch (kind) {
            case HELPER_POSTGRES, TRIGGER_POSTGRES -> {
                PostgresServer pg = PostgresServer.shared();
                yield new FencedTarget.Spec(kind, pg.createDatabase("fencing"), pg.user(), pg.password(), null);
            }
            case HELPER_MYSQL, TRIGGER_MYSQL -> {
                MariaDbServer db = MariaDbServer.shared();
                yield new FencedTarget.Spec(kind, db.createDatabase("fencing"), db.user(), db.password(), null);
            }
            case REDIS ->
                new FencedTarget.Spec(kind, RedisServer.shared().uri(), null, null, "fencing-" + UUID.randomUUID());
            case MONGO -> {
                MongoServer mongo = MongoServer.shared();
                yield new FencedTarget.Spec(kind, mongo.uri(), null, null, mongo.uniqueDatabase("fencing"));
            }
            case GUARD -> new FencedTarget.Spec(kind, null, null, null, null);
        };
        spec.prepare();
        return spec;
    }

    /** How to take a lock with the real provider of the backend that holds {@code spec}'s resource. */
    static ClientConnection lockConnection(FencedTarget.Spec spec) {
        return switch (spec.kind()) {
            case HELPER_POSTGRES, TRIGGER_POSTGRES, HELPER_MYSQL, TRIGGER_MYSQL ->
                ClientConnection.withCredentials(
                        spec.url(), spec.user(), spec.password(), Map.of("createTable", "true", "poolSize", "2"));
            case REDIS -> new ClientConnection(spec.url(), Map.of());
            case MONGO -> new ClientConnection(spec.url(), Map.of("database", spec.space()));
            case GUARD -> throw new IllegalArgumentException("the guard has no backend of its own");
        };
    }
}
