package io.fencelock.cli;

import io.fencelock.LockClient;
import io.fencelock.spi.LockBackendProvider;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Where the locks are: {@code --uri} (or {@code FENCELOCK_URI}) and provider properties
 * ({@code -p key=value}, with {@code FENCELOCK_USER} and {@code FENCELOCK_PASSWORD} as {@code user}
 * and {@code password} where the provider takes credentials). Never printed.
 */
final class Connection {
    static final String URI_ENV = "FENCELOCK_URI";
    static final String USER_ENV = "FENCELOCK_USER";
    static final String PASSWORD_ENV = "FENCELOCK_PASSWORD";
    /** The providers that take {@code user} and {@code password} properties. */
    private static final Set<String> TAKE_CREDENTIALS = Set.of("postgres", "mysql", "redis", "mongo");
    /** The SQL providers, whose pool would otherwise open 8 connections for a few reads. */
    private static final Set<String> POOLED = Set.of("postgres", "mysql");

    @Option(
            names = "--uri",
            paramLabel = "URI",
            description = "connection string, e.g. jdbc:postgresql://db/app, redis://host:6379, etcd://host:2379,"
                    + " mongodb://host/app (default: env " + URI_ENV + ")")
    String uri;

    @Option(
            names = {"-p", "--property"},
            paramLabel = "KEY=VALUE",
            description = "a provider property (repeatable), e.g. -p schema=locks; env " + USER_ENV + " and "
                    + PASSWORD_ENV + " give user and password")
    Map<String, String> properties = new LinkedHashMap<>();

    /** The URI to use (the option's, else the environment's); a usage error when there is none. */
    String uri(CommandLine commandLine, Map<String, String> env) {
        String chosen = uri != null ? uri : env.get(URI_ENV);
        if (chosen == null || chosen.isBlank()) {
            throw new CommandLine.ParameterException(
                    commandLine, "no connection string: give --uri URI or set " + URI_ENV);
        }
        return chosen;
    }

    /**
     * Opens a client; the provider is chosen by the URI and checks everything before any I/O (an
     * {@link IllegalArgumentException} is a usage error). The SQL providers connect here.
     */
    LockClient open(CommandLine commandLine, Map<String, String> env) {
        String chosen = uri(commandLine, env);
        Map<String, String> settings = new LinkedHashMap<>();
        Optional<String> provider = LockClient.providers().stream()
                .filter(p -> p.accepts(chosen))
                .map(LockBackendProvider::name)
                .findFirst();
        if (provider.filter(TAKE_CREDENTIALS::contains).isPresent()) {
            putIfSet(settings, "user", env.get(USER_ENV));
            putIfSet(settings, "password", env.get(PASSWORD_ENV));
        } else if (provider.isPresent() && (env.get(USER_ENV) != null || env.get(PASSWORD_ENV) != null)) {
            commandLine
                    .getErr()
                    .println("fencelock: note: " + USER_ENV + " and " + PASSWORD_ENV + " are not used: the "
                            + provider.get() + " provider takes no credentials");
        }
        if (provider.filter(POOLED::contains).isPresent()) {
            settings.put("poolSize", "2");
        }
        settings.putAll(properties);
        LockClient.Builder builder = LockClient.builder().uri(chosen);
        settings.forEach(builder::property);
        return builder.build();
    }

    private static void putIfSet(Map<String, String> settings, String key, String value) {
        if (value != null && !value.isEmpty()) {
            settings.put(key, value);
        }
    }
}
