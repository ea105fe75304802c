package io.fencelock.examples;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import java.time.Duration;
import java.util.Optional;

/** The README's usage example, compiled and run by {@code ReadmeExampleTest} so it never rots. */
public final class ReadmeExample {
    private ReadmeExample() {}

    /** Storage that rejects writes carrying a token lower than one it has seen. */
    public interface Storage {
        void write(String report, long fencingToken);
    }

    public static void run(String jdbcUrl, String user, String password, Storage storage) throws Exception {
        // spotless:off (the README shows this block as written here, aligned comments and all)
        // README:start
        try (LockClient locks = LockClient.builder()
                .uri(jdbcUrl)                                   // jdbc:postgresql://host:5432/db
                .property("user", user).property("password", password)
                .property("createTable", "true")
                .build()) {
            Optional<Lease> lease = locks.acquire("nightly-report", Duration.ofSeconds(10));
            if (lease.isPresent()) {
                try (Lease held = lease.get()) {                // renewed in the background, released on close
                    storage.write("report", held.fencingToken()); // storage rejects lower tokens
                }
            }
            locks.runExclusively("nightly-report", Duration.ofSeconds(10),
                    held -> { storage.write("again", held.fencingToken()); return null; });
        }
        // README:end
        // spotless:on
    }
}
