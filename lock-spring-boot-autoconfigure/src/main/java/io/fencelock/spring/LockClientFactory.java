package io.fencelock.spring;

import io.fencelock.LockClient;
import io.fencelock.LockEventListener;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Builds the application's {@link LockClient} from {@link FencelockProperties}: on {@code fencelock.uri}
 * through the providers' {@link java.util.ServiceLoader} discovery, else on the application's DataSource
 * (PostgreSQL or MySQL/MariaDB, told apart by the JDBC metadata), else on its {@code spring.data.redis.*}
 * settings, else on its {@code spring.mongodb.*} settings ({@code fencelock.provider} picks one of them when the
 * application has several). A bad setting becomes a {@link FencelockPropertyException} naming the property.
 */
final class LockClientFactory {
    private static final String JDBC_PROVIDER = "io.fencelock.jdbc.JdbcBackendProvider";

    private final FencelockProperties properties;
    private final Environment environment;

    LockClientFactory(FencelockProperties properties, Environment environment) {
        this.properties = properties;
        this.environment = environment;
    }

    /** The options, each {@code fencelock.*} property checked by the library's own rules. */
    LockOptions options() {
        FencelockProperties p = properties;
        LockOptions.Builder b = LockOptions.builder();
        set(p.getTtl(), b::ttl);
        set(p.getRenewInterval(), b::renewInterval);
        set(p.getTokenPeriod(), b::tokenPeriod);
        set(p.getClockDrift(), b::clockDrift);
        set(p.getSafetyMargin(), b::safetyMargin);
        set(p.getAutoRenew(), b::autoRenew);
        set(p.getInitialPollInterval(), b::initialPollInterval);
        set(p.getMaxPollInterval(), b::maxPollInterval);
        set(p.getOwner(), b::owner);
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            // The library names the option first ("ttl PT0S must be ..."): report its property.
            String option = e.getMessage() == null ? "" : e.getMessage().split("[ ']", 2)[0];
            throw new FencelockPropertyException(optionProperty(option), e.getMessage(), e);
        }
    }

    /** A client on the configured backend, with the application's event listeners. */
    LockClient client(LockOptions options, DataSource dataSource, List<LockEventListener> listeners) {
        LockClient.Builder builder = LockClient.builder().options(options);
        listeners.forEach(builder::listener);
        if (properties.getUri() != null && !properties.getUri().isBlank()) {
            builder.uri(properties.getUri()).provider(blankToNull(properties.getProvider()));
            properties.getProperties().forEach((key, value) -> property(builder, key, value));
            return build(builder, "fencelock.uri");
        }
        Binder binder = Binder.get(environment);
        RedisTarget redis = RedisTarget.from(binder);
        MongoTarget mongo = MongoTarget.from(binder);
        String wanted = blankToNull(properties.getProvider());
        // the DataSource first, then Redis, then MongoDB; fencelock.provider names the one to use, and only that
        boolean useRedis = redis != null && (wanted == null ? dataSource == null : "redis".equals(wanted));
        boolean useMongo =
                mongo != null && (wanted == null ? dataSource == null && redis == null : "mongo".equals(wanted));
        if (dataSource != null && !useRedis && !useMongo) {
            builder.backend(onDataSource(dataSource, wanted));
            return builder.build();
        }
        if (useRedis) {
            builder.uri(redis.uri()).provider("redis");
            withSettings(builder, redis.user(), redis.password(), null);
            return build(builder, "spring.data.redis");
        }
        if (useMongo) {
            builder.uri(mongo.uri()).provider("mongo");
            withSettings(builder, mongo.user(), mongo.password(), mongo.database());
            return build(builder, "spring.mongodb");
        }
        if (wanted != null) {
            throw new FencelockPropertyException(
                    "fencelock.provider",
                    "'" + wanted + "' was asked for, but the application has no such connection: set fencelock.uri,"
                            + " or give it a DataSource (postgres, mysql), spring.data.redis.* (redis) or"
                            + " spring.mongodb.* (mongo) settings",
                    null);
        }
        throw new FencelockPropertyException(
                "fencelock.uri",
                "no lock backend: set fencelock.uri, or give the application a DataSource (PostgreSQL, MySQL,"
                        + " MariaDB), spring.data.redis.* or spring.mongodb.* settings",
                null);
    }

    /** The fencelock.properties.*, with the application's credentials and database where those do not say. */
    private void withSettings(LockClient.Builder builder, String user, String password, String database) {
        Map<String, String> settings = new java.util.LinkedHashMap<>(properties.getProperties());
        if (user != null) {
            settings.putIfAbsent("user", user);
        }
        if (password != null) {
            settings.putIfAbsent("password", password);
        }
        if (database != null) {
            settings.putIfAbsent("database", database);
        }
        settings.forEach((key, value) -> property(builder, key, value));
    }

    private LockBackend onDataSource(DataSource dataSource, String wanted) {
        String product;
        try (Connection c = dataSource.getConnection()) {
            product = c.getMetaData().getDatabaseProductName();
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "fencelock: cannot read the database product of the application's DataSource: "
                            + Redaction.message(e.getMessage()),
                    e);
        }
        String lower = product == null ? "" : product.toLowerCase(Locale.ROOT);
        String name = lower.contains("postgres")
                ? "postgres"
                : lower.contains("mysql") || lower.contains("mariadb") ? "mysql" : null;
        if (name == null) {
            throw new FencelockPropertyException(
                    "fencelock.uri",
                    "the application's DataSource is " + product
                            + ", which no fencelock provider runs on; set fencelock.uri to a lock backend",
                    null);
        }
        if (wanted != null && !wanted.equals(name)) {
            throw new FencelockPropertyException(
                    "fencelock.provider",
                    "'" + wanted + "' was asked for, but the application's DataSource is " + product
                            + "; set fencelock.uri to reach that provider's backend",
                    null);
        }
        if (!ClassUtils.isPresent(JDBC_PROVIDER, getClass().getClassLoader())) {
            throw new FencelockPropertyException(
                    "fencelock.uri", "lock-jdbc is missing: add lock-provider-" + name + " to the application", null);
        }
        LockBackendProvider provider = LockClient.providers().stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new FencelockPropertyException(
                        "fencelock.uri",
                        "the application's DataSource is " + product + ": add io.fencelock:lock-provider-" + name
                                + " to the application",
                        null));
        try {
            return ((io.fencelock.jdbc.JdbcBackendProvider) provider).open(dataSource, properties.getProperties());
        } catch (IllegalArgumentException e) {
            throw new FencelockPropertyException(propertiesProperty(e), e.getMessage(), e);
        }
    }

    private LockClient build(LockClient.Builder builder, String source) {
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            String property = mentionsProperty(e) ? propertiesProperty(e) : source;
            throw new FencelockPropertyException(property, e.getMessage(), e);
        }
    }

    private void property(LockClient.Builder builder, String key, String value) {
        try {
            builder.property(key, value);
        } catch (IllegalArgumentException e) {
            throw new FencelockPropertyException("fencelock.properties." + key, e.getMessage(), e);
        }
    }

    /** Whether a provider's message is about one of its properties rather than the URI. */
    private boolean mentionsProperty(IllegalArgumentException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("properties [")
                || properties.getProperties().keySet().stream().anyMatch(m::startsWith);
    }

    /** {@code fencelock.properties.KEY} for the key a provider's message starts with, else the whole map. */
    private String propertiesProperty(IllegalArgumentException e) {
        String m = String.valueOf(e.getMessage());
        return properties.getProperties().keySet().stream()
                .filter(m::startsWith)
                .findFirst()
                .map(key -> "fencelock.properties." + key)
                .orElse("fencelock.properties");
    }

    private static String optionProperty(String option) {
        return switch (option) {
            case "ttl" -> "fencelock.ttl";
            case "renewInterval" -> "fencelock.renew-interval";
            case "tokenPeriod" -> "fencelock.token-period";
            case "clockDrift" -> "fencelock.clock-drift";
            case "safetyMargin" -> "fencelock.safety-margin";
            case "initialPollInterval" -> "fencelock.initial-poll-interval";
            case "maxPollInterval" -> "fencelock.max-poll-interval";
            default -> "fencelock.owner"; // the metadata rules name the owner's value, not the option
        };
    }

    private static <T> void set(T value, Consumer<T> setter) {
        if (value != null) {
            setter.accept(value);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
