package io.fencelock.redis;

import io.fencelock.redis.RedisLockBackend.Deployment;
import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.ProviderProperties;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.cluster.RedisClusterURIUtil;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What {@link RedisLockBackend.Builder} was told, each value checked when it is set, before any I/O:
 * the URI parsed into Lettuce's {@link RedisURI}s and the deployment it names, the credentials, the
 * key prefix and the timeouts.
 */
final class RedisSettings {
    private static final String CLUSTER = "redis-cluster:";
    private static final String CLUSTER_SECURE = "rediss-cluster:";

    Deployment deployment;
    /** Parsed by {@link #uri}, ours to configure. */
    List<RedisURI> uris;
    /** The URI redacted: for messages and log lines. */
    String where;
    /** The URI as given, only for redacting the driver's echoes of it. */
    String rawUri;

    private String user;
    private char[] password;
    String keyPrefix = KeyLayout.DEFAULT_PREFIX;
    Duration connectTimeout = Duration.ofSeconds(5);
    Duration commandTimeout = Duration.ofSeconds(10);

    void uri(String uri) {
        Objects.requireNonNull(uri, "uri");
        String lower = uri.toLowerCase(Locale.ROOT);
        String redacted = ConnectionString.parse(uri).requireValidPorts().toString();
        try {
            if (!isCluster(lower) && !RedisLockBackendProvider.PREFIXES.stream().anyMatch(lower::startsWith)) {
                throw new IllegalArgumentException("unknown scheme");
            }
            this.uris = parse(uri);
            this.deployment = isCluster(lower)
                    ? Deployment.CLUSTER
                    : uris.get(0).getSentinels().isEmpty() ? Deployment.STANDALONE : Deployment.SENTINEL;
        } catch (RuntimeException e) {
            // no cause: a parser's message may quote the URI, password and all
            throw new IllegalArgumentException(
                    "not a Redis URI (" + String.join(", ", RedisLockBackendProvider.PREFIXES) + "): " + redacted);
        }
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("no Redis Cluster node in " + redacted);
        }
        this.where = redacted;
        this.rawUri = uri;
    }

    private static boolean isCluster(String lowerCaseUri) {
        return lowerCaseUri.startsWith(CLUSTER) || lowerCaseUri.startsWith(CLUSTER_SECURE);
    }

    private static List<RedisURI> parse(String uri) {
        String lower = uri.toLowerCase(Locale.ROOT);
        if (isCluster(lower)) {
            boolean tls = lower.startsWith(CLUSTER_SECURE);
            String plain =
                    (tls ? "rediss:" : "redis:") + uri.substring(tls ? CLUSTER_SECURE.length() : CLUSTER.length());
            return RedisClusterURIUtil.toRedisURIs(URI.create(plain));
        }
        return List.of(RedisURI.create(uri));
    }

    /**
     * The first server as a new URI without credentials, for a connection whose handshake sends
     * nothing the server could refuse (see {@link RedisConnections}).
     */
    RedisURI firstTargetWithoutCredentials() {
        RedisURI bare = parse(rawUri).get(0);
        bare.setTimeout(commandTimeout);
        bare.setCredentialsProvider(new StaticCredentialsProvider(null, null));
        return bare;
    }

    /** The credentials the first server is given: this backend's user and password, else the URI's. */
    RedisCredentials credentials() {
        return resolve(targets().get(0).getCredentialsProvider());
    }

    /** Credentials from a URI (a Mono that is already there) or given here (static). */
    private static RedisCredentials resolve(RedisCredentialsProvider provider) {
        return provider instanceof RedisCredentialsProvider.ImmediateRedisCredentialsProvider immediate
                ? immediate.resolveCredentialsNow()
                : provider.resolveCredentials().block(Duration.ofSeconds(1));
    }

    void user(String user) {
        this.user = user;
    }

    void password(String password) {
        this.password = password == null ? null : password.toCharArray();
    }

    void keyPrefix(String keyPrefix) {
        this.keyPrefix = KeyLayout.requireValidPrefix(keyPrefix);
    }

    void connectTimeout(Duration connectTimeout) {
        this.connectTimeout = ProviderProperties.requirePositive("connectTimeout", connectTimeout);
    }

    void commandTimeout(Duration commandTimeout) {
        this.commandTimeout = ProviderProperties.requirePositive("commandTimeout", commandTimeout);
    }

    /** The key layout; throws {@link IllegalArgumentException} when no URI was set. */
    KeyLayout keyLayout() {
        if (uris == null) {
            throw new IllegalArgumentException("set uri(...) first");
        }
        return KeyLayout.of(
                keyPrefix, deployment == Deployment.CLUSTER ? 0 : uris.get(0).getDatabase());
    }

    /**
     * The URIs with the command timeout and the credentials set: user and password given here
     * replace the URI's, each on its own (RedisURI.builder(u) would drop the sentinels, so they are
     * configured in place).
     */
    List<RedisURI> targets() {
        for (RedisURI u : uris) {
            u.setTimeout(commandTimeout);
            if (user != null || password != null) {
                RedisCredentials inUri = resolve(u.getCredentialsProvider());
                String name = user != null ? user : inUri == null ? null : inUri.getUsername();
                char[] secret = password != null ? password.clone() : inUri == null ? null : inUri.getPassword();
                u.setCredentialsProvider(new StaticCredentialsProvider(name, secret));
            }
        }
        return uris;
    }
}
