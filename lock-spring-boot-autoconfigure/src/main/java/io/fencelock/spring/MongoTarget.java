package io.fencelock.spring;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * The MongoDB the application talks to, read from Spring Boot's {@code spring.mongodb.*} properties as Boot's
 * own client reads them: {@code uri}; or {@code protocol}, {@code host}, {@code port}, {@code additional-hosts},
 * {@code replica-set-name}, {@code ssl.enabled}, {@code authentication-database}, and then {@code username} and
 * {@code password}, which go to the provider as its {@code user} and {@code password} properties, never into
 * the URI. TLS is on as Boot's {@code ssl.enabled} says; an SSL bundle's trust material is Boot's, not the
 * provider's, which trusts what the JVM trusts. {@code database} names the locks' database as it names the
 * application's (over the URI's); without a URI and without it, that is Boot's default, {@code test}. The
 * credentials are checked against the authentication database, else that database, as Boot's are.
 *
 * @param uri      the connection string for the MongoDB provider
 * @param user     {@code spring.mongodb.username} (without a URI), or null
 * @param password {@code spring.mongodb.password} (without a URI), or null
 * @param database the database for the lock collection, or null for the URI's
 */
record MongoTarget(String uri, String user, String password, String database) {
    private static final String PREFIX = "spring.mongodb.";
    /** Boot's database when neither a URI nor {@code spring.mongodb.database} names one. */
    private static final String BOOT_DEFAULT_DATABASE = "test";

    /** The application's MongoDB, or null when none of the connection properties is set. */
    static MongoTarget from(Binder binder) {
        String uri = string(binder, "uri");
        String host = string(binder, "host");
        Integer port = binder.bind(PREFIX + "port", Integer.class).orElse(null);
        List<String> additionalHosts = binder.bind(PREFIX + "additional-hosts", Bindable.listOf(String.class))
                .orElse(List.of());
        String replicaSet = string(binder, "replica-set-name");
        String database = string(binder, "database");
        if (uri != null) {
            return new MongoTarget(uri, null, null, database);
        }
        if (host == null && port == null && replicaSet == null) {
            return null;
        }
        String protocol = binder.bind(PREFIX + "protocol", String.class).orElse("mongodb");
        StringBuilder built = new StringBuilder(protocol).append("://").append(host == null ? "localhost" : host);
        if (port != null) {
            built.append(':').append(port);
        }
        if (host != null) { // as Boot: the additional hosts go with a host
            additionalHosts.forEach(more -> built.append(',').append(more));
        }
        // the URI's path is where the provider checks the credentials: Boot's authentication database
        String locks = database != null ? database : BOOT_DEFAULT_DATABASE;
        String authDatabase = string(binder, "authentication-database");
        built.append('/').append(authDatabase != null ? authDatabase : locks);
        List<String> options = new ArrayList<>();
        if (replicaSet != null) {
            options.add("replicaSet=" + replicaSet);
        }
        boolean bundled = string(binder, "ssl.bundle") != null; // as Boot: a bundle turns TLS on unless told not to
        if (binder.bind(PREFIX + "ssl.enabled", Boolean.class).orElse(bundled)) {
            options.add("tls=true");
        }
        if (!options.isEmpty()) {
            built.append('?').append(String.join("&", options));
        }
        return new MongoTarget(built.toString(), string(binder, "username"), string(binder, "password"), locks);
    }

    private static String string(Binder binder, String key) {
        String value = binder.bind(PREFIX + key, String.class).orElse(null);
        return value == null || value.isBlank() ? null : value;
    }

    @Override
    public String toString() {
        return "MongoTarget[" + io.fencelock.spi.Redaction.uri(uri) + "]"; // never the password
    }
}
