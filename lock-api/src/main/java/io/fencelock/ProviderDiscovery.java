package io.fencelock;

import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.Redaction;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/** Finds the providers through {@link ServiceLoader} and opens a backend from a connection string. */
final class ProviderDiscovery {
    private ProviderDiscovery() {}

    /** The providers on the class path or module path. */
    static List<LockBackendProvider> providers() {
        List<LockBackendProvider> found = new ArrayList<>();
        ServiceLoader.load(LockBackendProvider.class).forEach(found::add);
        if (found.isEmpty()
                && LockClient.class.getClassLoader() != Thread.currentThread().getContextClassLoader()) {
            ServiceLoader.load(LockBackendProvider.class, LockClient.class.getClassLoader())
                    .forEach(found::add);
        }
        return found;
    }

    /** The provider named {@code provider}, or (when null) the one that accepts the URI. */
    static LockBackendProvider find(String uri, String provider) {
        List<LockBackendProvider> all = providers();
        Optional<LockBackendProvider> match = all.stream()
                .filter(p -> provider != null ? p.name().equalsIgnoreCase(provider) : p.accepts(uri))
                .findFirst();
        if (match.isEmpty()) {
            String available = all.isEmpty()
                    ? "none (add a provider jar such as lock-provider-postgres)"
                    : all.stream().map(p -> p.name() + " " + p.uriPrefixes()).collect(Collectors.joining(", "));
            throw new IllegalArgumentException("no fencelock provider "
                    + (provider != null ? "named '" + provider + "'" : "accepts '" + Redaction.uri(uri) + "'")
                    + "; providers found: " + available);
        }
        return match.get();
    }
}
