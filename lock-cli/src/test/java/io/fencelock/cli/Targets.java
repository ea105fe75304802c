package io.fencelock.cli;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.testservers.etcd.EtcdServer;
import io.fencelock.testservers.mongo.MongoServer;
import io.fencelock.testservers.mysql.MariaDbServer;
import io.fencelock.testservers.postgres.PostgresServer;
import io.fencelock.testservers.redis.RedisServer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * A place of its own on each shared real server (a database, a key prefix), how the command line
 * reaches it (--uri and -p) and how a lock holder opens it (the same, creating the lock table).
 */
final class Targets {
    private Targets() {}

    record Target(String backend, String uri, Map<String, String> properties) {
        List<String> cliArgs() {
            List<String> args = new ArrayList<>(List.of("--uri", uri));
            properties.forEach((k, v) -> args.addAll(List.of("-p", k + "=" + v)));
            return args;
        }

        /** A client that holds locks here, with the given options. */
        LockClient holder(LockOptions options) {
            LockClient.Builder builder = LockClient.builder().uri(uri).options(options);
            properties.forEach(builder::property);
            if (backend.equals("postgres") || backend.equals("mariadb")) {
                builder.property("createTable", "true").property("poolSize", "2");
            }
            return builder.build();
        }

        @Override
        public String toString() {
            return backend;
        }
    }

    static Target of(String backend) {
        String unique = UUID.randomUUID().toString().substring(0, 8);
        return switch (backend) {
            case "postgres" -> {
                PostgresServer pg = PostgresServer.shared();
                yield new Target(backend, pg.createDatabase("cli"), credentials(pg.user(), pg.password()));
            }
            case "mariadb" -> {
                MariaDbServer db = MariaDbServer.shared();
                yield new Target(backend, db.createDatabase("cli"), credentials(db.user(), db.password()));
            }
            case "redis" -> new Target(backend, RedisServer.shared().uri(), Map.of("keyPrefix", "cli-" + unique + ":"));
            case "etcd" -> {
                String hosts = EtcdServer.shared().endpoints().stream()
                        .map(e -> e.replaceFirst("^http://", ""))
                        .collect(Collectors.joining(","));
                yield new Target(backend, "etcd://" + hosts, Map.of("keyPrefix", "cli-" + unique + "/"));
            }
            case "mongo" -> {
                MongoServer mongo = MongoServer.shared();
                yield new Target(backend, mongo.uri(), Map.of("database", mongo.uniqueDatabase("cli")));
            }
            case "inmemory" -> new Target(backend, "inmemory:cli-" + unique, Map.of());
            default -> throw new IllegalArgumentException(backend);
        };
    }

    private static Map<String, String> credentials(String user, String password) {
        Map<String, String> properties = new LinkedHashMap<>();
        if (user != null) {
            properties.put("user", user);
        }
        if (password != null && !password.isEmpty()) {
            properties.put("password", password);
        }
        return properties;
    }
}
