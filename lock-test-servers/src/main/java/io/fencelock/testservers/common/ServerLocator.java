package io.fencelock.testservers.common;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Finds a server for one backend by trying candidate sources in order (an endpoint from the
 * environment, local binaries, Testcontainers, an embedded server...) and taking the first that
 * is there. Shared by every backend fixture so that they all behave alike:
 * <ul>
 *   <li>a source that is not there ({@link Unavailable}) passes to the next one;</li>
 *   <li>a source that is there but fails is an error, not a reason to fall back: a broken
 *       installation should be seen, not silently replaced by another server;</li>
 *   <li>when no source is there, the test fails under CI ({@code CI=true}), where a missing server
 *       is a broken build, and is skipped elsewhere, with a message saying how to get one;</li>
 *   <li>system property {@code fencelock.<backend>.source} forces one source by name.</li>
 * </ul>
 *
 * @param <T> what a source produces, typically a started server
 */
public final class ServerLocator<T> {
    private final String backend;
    private final String howToGetOne;
    private final Map<String, Source<T>> candidates = new LinkedHashMap<>();

    private ServerLocator(String backend, String howToGetOne) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.howToGetOne = Objects.requireNonNull(howToGetOne, "howToGetOne");
    }

    /**
     * @param backend     a short lower-case name ({@code "postgres"}), used in messages and in the
     *                    {@code fencelock.<backend>.source} property
     * @param howToGetOne what a developer can do when no source is found, e.g.
     *                    {@code "apt-get install postgresql, or set FENCELOCK_POSTGRES_URL"}
     */
    public static <T> ServerLocator<T> forBackend(String backend, String howToGetOne) {
        return new ServerLocator<>(backend, howToGetOne);
    }

    /** Adds a source, tried after the ones added before it. */
    public ServerLocator<T> candidate(String sourceName, Source<T> source) {
        if (candidates.putIfAbsent(sourceName, Objects.requireNonNull(source, "source")) != null) {
            throw new IllegalArgumentException("source '" + sourceName + "' added twice");
        }
        return this;
    }

    /** The name of the system property that forces a source. */
    public String sourceProperty() {
        return "fencelock." + backend + ".source";
    }

    /** Tries the forced source if the system property names one, else every source in order. */
    public Located<T> locate() {
        String forced = System.getProperty(sourceProperty());
        return forced == null || forced.isBlank()
                ? locate(List.copyOf(candidates.keySet()))
                : locateOnly(forced.trim());
    }

    /** Tries exactly one source, e.g. for a test of that source. */
    public Located<T> locateOnly(String sourceName) {
        String key = sourceName.toLowerCase(Locale.ROOT);
        if (!candidates.containsKey(key)) {
            throw new IllegalArgumentException("unknown " + backend + " source '" + sourceName + "'; known: "
                    + String.join(", ", candidates.keySet()));
        }
        return locate(List.of(key));
    }

    private Located<T> locate(List<String> order) {
        List<String> skipped = new ArrayList<>();
        for (String name : order) {
            try {
                T server = candidates.get(name).open();
                String note = skipped.isEmpty() ? "" : " (skipped " + String.join("; ", skipped) + ")";
                return new Located<>(server, name, "source '" + name + "'" + note);
            } catch (Unavailable e) {
                skipped.add(name + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(
                        "interrupted while starting " + backend + " from source '" + name + "'", e);
            } catch (Exception e) {
                throw new IllegalStateException(
                        backend + " source '" + name + "' is present but failed: " + e
                                + ". Fix it, or pick another source with -D" + sourceProperty() + "=<"
                                + String.join("|", candidates.keySet()) + ">",
                        e);
            }
        }
        String message =
                "no " + backend + " server found (" + String.join("; ", skipped) + "). To get one: " + howToGetOne;
        if (runningInCi()) {
            return Assertions.fail(message + ". CI=true, so this is a failure, not a skip");
        }
        return Assumptions.abort(message);
    }

    /** Whether this is a CI run, where a missing server fails the build instead of skipping tests. */
    public static boolean runningInCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** A way to get a server; throws {@link Unavailable} when it has nothing to offer on this machine. */
    @FunctionalInterface
    public interface Source<T> {
        T open() throws Exception;
    }

    /** Thrown by a {@link Source} that is not there (no env var, no binaries, no Docker): try the next one. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        public Unavailable(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * The outcome of {@link #locate()}.
     *
     * @param server      what the chosen source produced
     * @param source      the chosen source's name
     * @param description which source was chosen and why the ones before it were skipped
     */
    public record Located<T>(T server, String source, String description) {}
}
