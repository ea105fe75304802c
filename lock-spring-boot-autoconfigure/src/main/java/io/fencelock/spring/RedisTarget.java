package io.fencelock.spring;

import java.util.List;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * The Redis the application talks to, read from Spring Boot's {@code spring.data.redis.*} properties
 * (url; or host, port, database and ssl.enabled; or sentinel.master and sentinel.nodes; or
 * cluster.nodes) as a fencelock Redis URI. The credentials stay out of the URI: they go to the
 * provider as its {@code user} and {@code password} properties.
 *
 * @param uri      the connection string for the Redis provider
 * @param user     {@code spring.data.redis.username}, or null
 * @param password {@code spring.data.redis.password}, or null
 */
record RedisTarget(String uri, String user, String password) {
    private static final String PREFIX = "spring.data.redis.";

    /** The application's Redis, or null when none of the connection properties is set. */
    static RedisTarget from(Binder binder) {
        String url = string(binder, "url");
        String host = string(binder, "host");
        Integer port = binder.bind(PREFIX + "port", Integer.class).orElse(null);
        String master = string(binder, "sentinel.master");
        List<String> sentinels = list(binder, "sentinel.nodes");
        List<String> cluster = list(binder, "cluster.nodes");
        if (url == null && host == null && port == null && master == null && cluster.isEmpty()) {
            return null;
        }
        String user = string(binder, "username");
        String password = string(binder, "password");
        if (url != null) {
            return new RedisTarget(url, user, password);
        }
        boolean ssl = binder.bind(PREFIX + "ssl.enabled", Boolean.class).orElse(false);
        int database = binder.bind(PREFIX + "database", Integer.class).orElse(0);
        if (!cluster.isEmpty()) {
            return new RedisTarget(
                    (ssl ? "rediss-cluster://" : "redis-cluster://") + String.join(",", cluster), user, password);
        }
        if (master != null) {
            return new RedisTarget(
                    (ssl ? "rediss-sentinel://" : "redis-sentinel://") + String.join(",", sentinels) + "/" + database
                            + "#" + master,
                    user,
                    password);
        }
        return new RedisTarget(
                (ssl ? "rediss://" : "redis://") + (host == null ? "localhost" : host) + ":"
                        + (port == null ? 6379 : port) + "/" + database,
                user,
                password);
    }

    private static String string(Binder binder, String key) {
        String value = binder.bind(PREFIX + key, String.class).orElse(null);
        return value == null || value.isBlank() ? null : value;
    }

    private static List<String> list(Binder binder, String key) {
        return binder.bind(PREFIX + key, Bindable.listOf(String.class)).orElse(List.of());
    }

    @Override
    public String toString() {
        return "RedisTarget[" + io.fencelock.spi.Redaction.uri(uri) + "]"; // never the password
    }
}
