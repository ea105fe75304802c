package io.fencelock.etcd;

import io.fencelock.spi.ConnectionString;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.ProviderProperties;
import io.fencelock.spi.Redaction;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Opens {@link EtcdLockBackend}s from {@code etcd://host:port[,host:port...]} URIs (plain HTTP client
 * endpoints). Properties: {@code keyPrefix} (default {@code fencelock/}) and {@code requestTimeout}
 * (an ISO-8601 duration, default {@code PT5S}).
 */
public final class EtcdLockBackendProvider implements LockBackendProvider {
    static final String SCHEME = "etcd://";
    private static final Set<String> KEYS = Set.of("keyPrefix", "requestTimeout");

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public List<String> uriPrefixes() {
        return List.of("etcd:");
    }

    @Override
    public LockBackend open(String uri, Map<String, String> properties) {
        if (uri == null || !uri.regionMatches(true, 0, SCHEME, 0, SCHEME.length()) || uri.length() == SCHEME.length()) {
            throw new IllegalArgumentException(
                    "not an etcd URI (etcd://host:port[,host:port...]): " + Redaction.uri(uri));
        }
        ProviderProperties settings = ProviderProperties.check(this, uri, properties, KEYS);
        ConnectionString parsed = ConnectionString.parse(uri).requireValidPorts();
        if (parsed.hasUserInfo()) {
            throw new IllegalArgumentException(
                    "etcd URI " + parsed + " has a user-info (user:password@):" + " credentials are not supported yet");
        }
        String hosts = parsed.hosts();
        EtcdLockBackend.Builder builder = EtcdLockBackend.builder()
                .endpoints(Arrays.stream(hosts.split(","))
                        .map(h -> "http://" + h.trim())
                        .toList());
        settings.ifPresent("keyPrefix", builder::keyPrefix)
                .ifPresentDuration("requestTimeout", builder::requestTimeout);
        return builder.build();
    }
}
