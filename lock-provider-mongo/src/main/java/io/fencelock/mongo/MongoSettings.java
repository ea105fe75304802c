package io.fencelock.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.fencelock.spi.ProviderProperties;
import io.fencelock.spi.Redaction;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link MongoLockBackend.Builder} was told, each value checked before any I/O, and what it
 * makes: the backend's own {@link MongoClient} (timeouts, credentials) when given a URI, and the
 * lock collection with the concerns every lock operation needs.
 */
final class MongoSettings {
    private static final Logger log = LoggerFactory.getLogger(MongoSettings.class);
    static final String DEFAULT_DATABASE = "fencelock";
    static final String DEFAULT_COLLECTION = "fencelock_locks";
    private static final Pattern DATABASE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final Pattern COLLECTION = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,119}");

    /** The URI as given: for the client, and for redacting the driver's echoes of it. */
    String uri;
    /** The application's client, never closed here. */
    MongoClient client;

    private String user;
    private String password;
    private String database;
    String collection = DEFAULT_COLLECTION;
    private Duration timeout = Duration.ofSeconds(10);
    /** Set by {@link #validate()}: the parsed URI (null with a client of the application), where it leads, the database. */
    private ConnectionString connection;

    String where;
    String databaseName;

    void uri(String uri) {
        Objects.requireNonNull(uri, "uri");
        if (!uri.regionMatches(true, 0, "mongodb://", 0, 10) && !uri.regionMatches(true, 0, "mongodb+srv://", 0, 14)) {
            throw new IllegalArgumentException(
                    "uri must start with mongodb:// or mongodb+srv://, got " + Redaction.uri(uri));
        }
        this.uri = uri;
    }

    void client(MongoClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    void user(String user) {
        this.user = user;
    }

    void password(String password) {
        this.password = password;
    }

    void database(String database) {
        this.database = requireName("database", database, DATABASE, 63);
    }

    void collection(String collection) {
        this.collection = requireName("collection", collection, COLLECTION, 120);
    }

    void timeout(Duration timeout) {
        this.timeout = ProviderProperties.requirePositive("timeout", timeout);
    }

    static String requireName(String what, String value, Pattern rule, int max) {
        if (value == null || !rule.matcher(value).matches()) {
            throw new IllegalArgumentException("MongoDB " + what + " " + (value == null ? "null" : "'" + value + "'")
                    + " is invalid: it must match [A-Za-z_][A-Za-z0-9_]* (no '$', dots, spaces or dashes) and be 1 to "
                    + max + " characters");
        }
        return value;
    }

    /** Checks that the values fit together and parses the URI, before any I/O. */
    void validate() {
        if ((uri == null) == (client == null)) {
            throw new IllegalArgumentException("set exactly one of uri and client");
        }
        connection = null;
        where = "a MongoClient of the application";
        if (uri != null) {
            connection = connectionString(uri);
            where = Redaction.uri(uri);
            if ((user != null || password != null) && connection.getCredential() != null) {
                throw new IllegalArgumentException(
                        "credentials are given both in the URI and as user/password: give them once (" + where + ")");
            }
            if (password != null && user == null) {
                throw new IllegalArgumentException("a password without a user");
            }
        } else if (user != null || password != null) {
            throw new IllegalArgumentException("user/password go with uri(), not with client()");
        }
        databaseName = database != null
                ? database
                : connection != null && connection.getDatabase() != null
                        ? requireName("database (from the URI)", connection.getDatabase(), DATABASE, 63)
                        : DEFAULT_DATABASE;
    }

    private static ConnectionString connectionString(String uri) {
        io.fencelock.spi.ConnectionString.parse(uri).requireValidPorts();
        try {
            return new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            // no cause: the driver's message may quote pieces of the URI; Redaction withholds it if so
            throw new IllegalArgumentException("invalid MongoDB connection string " + Redaction.uri(uri) + ": "
                    + Redaction.message(e.getMessage(), uri));
        }
    }

    /** The backend's own client, made from the URI (no I/O yet); null when the application gave its client. */
    MongoClient openOwnClient() {
        if (connection == null) {
            return null;
        }
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(connection)
                .applicationName("fencelock")
                .applyToClusterSettings(c -> c.serverSelectionTimeout(ms, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(
                        s -> s.connectTimeout(ms, TimeUnit.MILLISECONDS).readTimeout(ms, TimeUnit.MILLISECONDS));
        if (user != null) {
            String source = connection.getDatabase() != null ? connection.getDatabase() : "admin";
            settings.credential(MongoCredential.createCredential(
                    user, source, password == null ? new char[0] : password.toCharArray()));
        }
        return MongoClients.create(settings.build());
    }

    /**
     * The lock collection on {@code use}: majority writes (journaled when the server keeps tokens
     * durably, with the timeout as wtimeout), majority reads, the primary. Refuses a collection with
     * a TTL index, which would delete lock documents and so reset tokens.
     */
    MongoCollection<Document> lockCollection(MongoClient use, MongoServerFacts facts) {
        MongoCollection<Document> locks = use.getDatabase(databaseName)
                .getCollection(collection)
                .withWriteConcern(WriteConcern.MAJORITY
                        .withJournal(facts.durable())
                        .withWTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                .withReadConcern(ReadConcern.MAJORITY)
                .withReadPreference(ReadPreference.primary());
        for (Document index : locks.listIndexes()) {
            if (index.containsKey("expireAfterSeconds")) {
                throw new IllegalStateException("the lock collection "
                        + locks.getNamespace().getFullName()
                        + " has a TTL index '" + index.getString("name") + "': it would delete lock documents and so"
                        + " reset their fencing tokens. Drop it (db."
                        + locks.getNamespace().getCollectionName()
                        + ".dropIndex('" + index.getString("name") + "'))");
            }
        }
        return locks;
    }

    static void closeQuietly(MongoClient client) {
        if (client != null) {
            try {
                client.close();
            } catch (RuntimeException e) {
                log.debug("fencelock: closing the MongoDB client failed", e);
            }
        }
    }
}
