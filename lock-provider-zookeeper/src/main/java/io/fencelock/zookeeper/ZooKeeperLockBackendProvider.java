package io.fencelock.zookeeper;

import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import io.fencelock.spi.Redaction;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link ZooKeeperLockBackend}s from {@code zookeeper://host:port[,host:port...][/chroot]} URIs.
 * Properties: {@code basePath} (default {@code /fencelock}), {@code requestTimeout} (an ISO-8601
 * duration, default {@code PT5S}) and {@code leaderLag} (an ISO-8601 duration, default half the
 * server's {@code minSessionTimeout}: {@link ZooKeeperLockBackend.Builder#leaderLag}).
 */
public final class ZooKeeperLockBackendProvider implements LockBackendProvider {
    static final String SCHEME = "zookeeper://";
    private static final Set<String> KEYS = Set.of("basePath", "requestTimeout", "leaderLag");

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
            throw new IllegalArgumentException(
                    "not a ZooKeeper URI (zookeeper://host:port[,host:port...][/chroot]): " + Redaction.uri(uri));
        }
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        ZooKeeperLockBackend.Builder builder = ZooKeeperLockBackend.builder().uri(uri);
        settings.ifPresent("basePath", builder::basePath)
                .ifPresentDuration("requestTimeout", builder::requestTimeout)
                .ifPresentDuration("leaderLag", builder::leaderLag);
        return builder.build();
    }
}
