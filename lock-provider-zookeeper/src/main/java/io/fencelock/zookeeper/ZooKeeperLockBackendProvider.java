package io.fencelock.zookeeper;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import io.fencelock.spi.Redaction;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link ZooKeeperLockBackend}s from {@code zookeeper://host:port[,host:port...][/chroot]} URIs.
 * Properties: {@code basePath} (default {@code /fencelock}) and {@code requestTimeout} (an ISO-8601
 * duration, default {@code PT5S}).
 */
public final class ZooKeeperLockBackendProvider implements LockBackendProvider {
    static final String SCHEME = "zookeeper://";
    private static final Set<String> KEYS = Set.of("basePath", "requestTimeout");

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("zookeeper:");
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        if (uri == null || !uri.regionMatches(true, 0, SCHEME, 0, SCHEME.length()) || uri.length() == SCHEME.length()) {
            throw new IllegalArgumentException("not a ZooKeeper URI (zookeeper://host:port[,host:port...][/chroot]): "
                    + Redaction.uri(uri));
        }
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        String rest = uri.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        ZooKeeperLockBackend.Builder builder = ZooKeeperLockBackend.builder()
                .servers(Arrays.stream(hosts.split(",", -1)).map(String::trim).toList());
        if (slash >= 0) {
            builder.chroot(rest.substring(slash));
        }
        settings.ifPresent("basePath", builder::basePath)
                .ifPresent("requestTimeout", value -> builder.requestTimeout(isoDuration("requestTimeout", value)));
        return builder.build();
    }

    private static Duration isoDuration(String key, String value) {
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException | NullPointerException e) {
            throw new IllegalArgumentException(key + " '" + value + "' is not an ISO-8601 duration such as PT5S", e);
        }
    }
}
