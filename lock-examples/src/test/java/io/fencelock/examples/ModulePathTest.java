package io.fencelock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module descriptors work: with lock-api, lock-jdbc, the PostgreSQL provider and their dependencies on
 * the module path (not the class path), {@code ServiceLoader} finds the provider through
 * {@code provides} in {@code module-info.java}.
 */
class ModulePathTest {
    private static final List<String> MODULE_JARS = List.of(
            "lock-api", "lock-jdbc", "lock-provider-postgres", "slf4j-api", "postgresql-", "checker-qual", "HikariCP");

    @Test
    void theProviderLoadsFromTheModulePath() throws Exception {
        List<String> classPath = List.of(System.getProperty("java.class.path").split(File.pathSeparator));
        String modulePath = classPath.stream()
                .filter(e -> MODULE_JARS.stream()
                        .anyMatch(m -> e.contains(File.separator + m) || e.contains(m + File.separator)))
                .filter(e -> !e.contains("test-classes") && !e.contains("lock-tck"))
                .collect(Collectors.joining(File.pathSeparator));
        String probeClasses = classPath.stream()
                .filter(e -> e.endsWith("test-classes"))
                .findFirst()
                .orElseThrow();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(Stream.of(
                                java,
                                "-p",
                                modulePath,
                                "--add-modules",
                                "ALL-MODULE-PATH",
                                "-cp",
                                probeClasses,
                                ModulePathProbe.class.getName())
                        .collect(Collectors.toList()))
                .redirectErrorStream(true)
                .start();
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("child JVM finished").isTrue();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(out).as("module path " + modulePath).contains("postgres in io.fencelock.postgres");
        assertThat(child.exitValue()).isZero();
    }
}
