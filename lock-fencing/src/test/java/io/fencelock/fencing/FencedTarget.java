package io.fencelock.fencing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.fencelock.testservers.redis.LettuceClients;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * One fenced resource as the proofs use it, the same way in a child JVM and in the test: a
 * document written with a token, through one of the kit's guards. A JDBC target also keeps a
 * history of accepted writes in the order the database applied them.
 */
abstract class FencedTarget implements AutoCloseable {

    /** What a write came to: accepted, refused as stale (with the resource's current token), or failed otherwise. */
    record Outcome(Kind kind, long current, String detail) {
        enum Kind {
            ACCEPTED,
            REJECTED,
            FAILED
        }

        static Outcome ok() {
            return new Outcome(Kind.ACCEPTED, 0, "");
        }

        static Outcome stale(long current) {
            return new Outcome(Kind.REJECTED, current, "");
        }

        static Outcome error(Exception e) {
            return new Outcome(Kind.FAILED, 0, e.getClass().getSimpleName() + ": " + e.getMessage());
        }

        boolean accepted() {
            return kind == Kind.ACCEPTED;
        }

        boolean rejected() {
            return kind == Kind.REJECTED;
        }
    }

    enum Kind {
        HELPER_POSTGRES,
        HELPER_MYSQL,
        TRIGGER_POSTGRES,
        TRIGGER_MYSQL,
        REDIS,
        MONGO,
        GUARD
    }

    /**
     * Where a target lives; travels to a child JVM on stdin (it may hold a password). {@code space}
     * keeps runs apart on a shared server: the Redis key's prefix, the MongoDB database.
     */
    record Spec(Kind kind, String url, String user, String password, String space) {
        static final String RESOURCE = "doc-1";

        String encode() {
            List<String> fields = new ArrayList<>();
            for (String f : new String[] {kind.name(), url, user, password, space}) {
                fields.add(f == null ? "-" : Base64.getEncoder().encodeToString(f.getBytes(StandardCharsets.UTF_8)));
            }
            return String.join(" ", fields);
        }

        static Spec decode(String line) {
            String[] f = line.split(" ");
            String[] d = new String[5];
            for (int i = 0; i < 5; i++) {
                d[i] = f[i].equals("-") ? null : new String(Base64.getDecoder().decode(f[i]), StandardCharsets.UTF_8);
            }
            return new Spec(Kind.valueOf(d[0]), d[1], d[2], d[3], d[4]);
        }

        SqlDialect dialect() {
            return kind == Kind.HELPER_POSTGRES || kind == Kind.TRIGGER_POSTGRES
                    ? SqlDialect.POSTGRESQL
                    : SqlDialect.MYSQL;
        }

        /** Creates the tables and the fences. */
        void prepare() throws SQLException {
            switch (kind) {
                case HELPER_POSTGRES, HELPER_MYSQL -> {
                    try (Connection c = jdbc();
                            Statement s = c.createStatement()) {
                        JdbcTarget.FENCE.get(dialect()).createTable(c);
                        boolean pg = dialect() == SqlDialect.POSTGRESQL;
                        s.execute("CREATE TABLE doc (id VARCHAR(40) PRIMARY KEY, body VARCHAR(200) NOT NULL)");
                        s.execute("CREATE TABLE history (id " + (pg ? "BIGSERIAL" : "BIGINT AUTO_INCREMENT")
                                + " PRIMARY KEY, body VARCHAR(200) NOT NULL, token BIGINT NOT NULL)");
                    }
                }
                case TRIGGER_POSTGRES, TRIGGER_MYSQL -> {
                    try (Connection c = jdbc();
                            Statement s = c.createStatement()) {
                        s.execute("CREATE TABLE fenced_doc (id VARCHAR(40) PRIMARY KEY, body VARCHAR(200) NOT NULL)");
                        TableFence.builder(dialect())
                                .table("fenced_doc")
                                .build()
                                .apply(c);
                    }
                }
                default -> {}
            }
        }

        /**
         * The target. {@code zombie}: the server ends this writer's session when it sits idle (frozen)
         * inside a transaction, as production should configure it, so its row locks do not hold back
         * the next holder; the target reconnects after such a failure.
         */
        FencedTarget open(boolean zombie, boolean userTransaction) throws SQLException {
            return switch (kind) {
                case HELPER_POSTGRES, HELPER_MYSQL -> new JdbcTarget(this, zombie, userTransaction);
                case TRIGGER_POSTGRES, TRIGGER_MYSQL -> new TriggerTarget(this, zombie);
                case REDIS -> new RedisTarget(url, space);
                case MONGO -> new MongoTarget(url, space);
                case GUARD -> new GuardTarget();
            };
        }

        Connection jdbc() throws SQLException {
            Properties p = new Properties();
            if (user != null) {
                p.setProperty("user", user);
            }
            if (password != null) {
                p.setProperty("password", password);
            }
            return DriverManager.getConnection(url, p);
        }
    }

    abstract Outcome write(long token, String body);

    /** A write through a guard that answers a refusal with {@link StaleTokenException}. */
    interface GuardedWrite {
        void run() throws Exception;
    }

    /** What {@code write} came to: accepted, refused (with the current token the refusal named), or failed. */
    static Outcome outcomeOf(GuardedWrite write) {
        try {
            write.run();
            return Outcome.ok();
        } catch (StaleTokenException e) {
            return Outcome.stale(e.currentToken());
        } catch (Exception e) {
            return Outcome.error(e);
        }
    }

    /** The resource's token and body now. */
    abstract long storedToken() throws Exception;

    abstract String storedBody() throws Exception;

    /** The bodies of accepted writes in the order they were applied, or null where the target keeps none. */
    List<String> history() throws Exception {
        return null;
    }

    /** A JDBC target that reconnects after a failure (a session the server ended). */
    abstract static class SqlTarget extends FencedTarget {
        final Spec spec;
        private final boolean zombie;
        private Connection connection;

        SqlTarget(Spec spec, boolean zombie) throws SQLException {
            this.spec = spec;
            this.zombie = zombie;
            this.connection = connect();
        }

        private Connection connect() throws SQLException {
            Connection c = spec.jdbc();
            if (zombie) {
                try (Statement s = c.createStatement()) {
                    s.execute(
                            spec.dialect() == SqlDialect.POSTGRESQL
                                    ? "SET idle_in_transaction_session_timeout = 1000"
                                    : "SET SESSION wait_timeout = 1");
                }
            }
            return c;
        }

        Connection connection() throws SQLException {
            if (connection == null) {
                connection = connect();
            }
            return connection;
        }

        Outcome failed(Exception e) {
            try {
                if (connection != null) {
                    connection.close();
                }
            } catch (SQLException ignored) {
                // the session is gone already
            }
            connection = null;
            return Outcome.error(e);
        }

        long readLong(String sql) throws SQLException {
            try (Connection c = spec.jdbc();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(sql)) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }

        String readString(String sql) throws SQLException {
            try (Connection c = spec.jdbc();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(sql)) {
                return rs.next() ? rs.getString(1) : null;
            }
        }

        @Override
        public void close() throws SQLException {
            if (connection != null) {
                connection.close();
            }
        }
    }

    /** Writes through {@link JdbcFence}: the document and a history row, under the fence. */
    static final class JdbcTarget extends SqlTarget {
        static final java.util.Map<SqlDialect, JdbcFence> FENCE = java.util.Map.of(
                SqlDialect.POSTGRESQL, JdbcFence.builder(SqlDialect.POSTGRESQL).build(),
                SqlDialect.MYSQL, JdbcFence.builder(SqlDialect.MYSQL).build());
        private final JdbcFence fence;
        private final boolean userTransaction;
        private final String upsert;

        JdbcTarget(Spec spec, boolean zombie, boolean userTransaction) throws SQLException {
            super(spec, zombie);
            this.fence = FENCE.get(spec.dialect());
            this.userTransaction = userTransaction;
            this.upsert = spec.dialect() == SqlDialect.POSTGRESQL
                    ? "INSERT INTO doc (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body"
                    : "INSERT INTO doc (id, body) VALUES (?, ?) ON DUPLICATE KEY UPDATE body = VALUES(body)";
        }

        @Override
        Outcome write(long token, String body) {
            try {
                Connection c = connection();
                if (userTransaction) {
                    c.setAutoCommit(false);
                    try {
                        fence.write(c, Spec.RESOURCE, token, work(token, body));
                        c.commit();
                    } catch (SQLException | RuntimeException e) {
                        c.rollback();
                        throw e;
                    } finally {
                        c.setAutoCommit(true);
                    }
                } else {
                    fence.write(c, Spec.RESOURCE, token, work(token, body));
                }
                return Outcome.ok();
            } catch (StaleTokenException e) {
                return Outcome.stale(e.currentToken());
            } catch (SQLException | RuntimeException e) {
                return failed(e);
            }
        }

        private JdbcFence.Work<Void> work(long token, String body) {
            return c -> {
                try (PreparedStatement doc = c.prepareStatement(upsert);
                        PreparedStatement history =
                                c.prepareStatement("INSERT INTO history (body, token) VALUES (?, ?)")) {
                    doc.setString(1, Spec.RESOURCE);
                    doc.setString(2, body);
                    doc.executeUpdate();
                    history.setString(1, body);
                    history.setLong(2, token);
                    history.executeUpdate();
                }
                return null;
            };
        }

        @Override
        long storedToken() throws SQLException {
            try (Connection c = spec.jdbc()) {
                return fence.currentToken(c, Spec.RESOURCE).orElse(0);
            }
        }

        @Override
        String storedBody() throws SQLException {
            return readString("SELECT body FROM doc");
        }

        @Override
        List<String> history() throws SQLException {
            List<String> bodies = new ArrayList<>();
            try (Connection c = spec.jdbc();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT body FROM history ORDER BY id")) {
                while (rs.next()) {
                    bodies.add(rs.getString(1));
                }
            }
            return bodies;
        }
    }

    /** Writes straight to the fenced table, as any other write path would; the trigger judges. */
    static final class TriggerTarget extends SqlTarget {
        private final String upsert;

        TriggerTarget(Spec spec, boolean zombie) throws SQLException {
            super(spec, zombie);
            this.upsert = spec.dialect() == SqlDialect.POSTGRESQL
                    ? "INSERT INTO fenced_doc (id, body, fence_token) VALUES (?, ?, ?)"
                            + " ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, fence_token = EXCLUDED.fence_token"
                    : "INSERT INTO fenced_doc (id, body, fence_token) VALUES (?, ?, ?)"
                            + " ON DUPLICATE KEY UPDATE body = VALUES(body), fence_token = VALUES(fence_token)";
        }

        @Override
        Outcome write(long token, String body) {
            try (PreparedStatement ps = connection().prepareStatement(upsert)) {
                ps.setString(1, Spec.RESOURCE);
                ps.setString(2, body);
                ps.setLong(3, token);
                ps.executeUpdate();
                return Outcome.ok();
            } catch (SQLException e) {
                if (TableFence.isStaleToken(e)) {
                    try {
                        return Outcome.stale(storedToken());
                    } catch (SQLException read) {
                        return failed(read);
                    }
                }
                return failed(e);
            }
        }

        @Override
        long storedToken() throws SQLException {
            return readLong("SELECT fence_token FROM fenced_doc");
        }

        @Override
        String storedBody() throws SQLException {
            return readString("SELECT body FROM fenced_doc");
        }
    }

    /** Fenced SET through {@link RedisFence}. */
    static final class RedisTarget extends FencedTarget {
        private final String key;
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisFence fence;

        RedisTarget(String uri, String space) {
            this.key = space + ":" + Spec.RESOURCE;
            // the command timeout on the URI: Lettuce 7 has no client-wide default any more
            RedisURI target = RedisURI.create(uri);
            target.setTimeout(Duration.ofSeconds(5));
            this.client = RedisClient.create(target);
            this.connection = client.connect();
            this.fence = RedisFence.of(connection.sync());
        }

        @Override
        Outcome write(long token, String body) {
            return outcomeOf(() -> fence.set(key, token, body));
        }

        @Override
        long storedToken() {
            return fence.currentToken(key).orElse(0);
        }

        @Override
        String storedBody() {
            return connection.sync().get(key);
        }

        @Override
        public void close() {
            connection.close();
            LettuceClients.shutDown(client);
        }
    }

    /** Fenced {@code $set} through {@link MongoFence}, on a client of its own. */
    static final class MongoTarget extends FencedTarget {
        private final MongoClient client;
        private final MongoCollection<Document> docs;
        private final MongoFence fence;

        MongoTarget(String uri, String database) {
            this.client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    .applyToSocketSettings(
                            b -> b.connectTimeout(5, TimeUnit.SECONDS).readTimeout(5, TimeUnit.SECONDS))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                    .build());
            this.docs = client.getDatabase(database).getCollection("docs");
            this.fence = MongoFence.of(docs);
        }

        @Override
        Outcome write(long token, String body) {
            return outcomeOf(() -> fence.set(Spec.RESOURCE, token, Map.of("body", body)));
        }

        @Override
        long storedToken() {
            return fence.currentToken(Spec.RESOURCE).orElse(0);
        }

        @Override
        String storedBody() {
            Document d = docs.find(Filters.eq("_id", Spec.RESOURCE)).first();
            return d == null ? null : d.getString("body");
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** {@link TokenGuard#runFenced} around an in-memory document and its history. */
    static final class GuardTarget extends FencedTarget {
        private final TokenGuard guard = TokenGuard.inMemory();
        private final List<String> history = new CopyOnWriteArrayList<>();
        private volatile String body;

        @Override
        Outcome write(long token, String newBody) {
            return outcomeOf(() -> guard.runFenced(Spec.RESOURCE, token, () -> {
                body = newBody;
                return history.add(newBody);
            }));
        }

        @Override
        long storedToken() {
            return guard.current(Spec.RESOURCE).orElse(0);
        }

        @Override
        String storedBody() {
            return body;
        }

        @Override
        List<String> history() {
            return List.copyOf(history);
        }

        @Override
        public void close() {}
    }
}
