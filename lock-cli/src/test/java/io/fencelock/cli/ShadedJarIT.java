package io.fencelock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The executable jar as an operator runs it ({@code java -jar target/fencelock-cli.jar}): every
 * provider is found (their service files merged), the JDBC drivers register, and exit codes reach
 * the shell.
 */
class ShadedJarIT {
    private static final Path JAR = Path.of("target", "fencelock-cli.jar");

    record Run(int exitCode, String out, String err) {}

    private static Run java(String... args) throws IOException, InterruptedException {
        assertThat(JAR).as("the shaded jar (built by the package phase)").exists();
        List<String> command = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", JAR.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile("cli-out", ".txt");
        Path err = Files.createTempFile("cli-err", ".txt");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the jar ends").isTrue();
            return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    @Test
    void findsEveryProviderAndTellsUsageErrorsByItsExitCode() throws Exception {
        Run providers = java("providers");
        assertThat(providers.exitCode()).as(providers.toString()).isZero();
        assertThat(providers.out())
                .contains("etcd", "inmemory", "mongo", "mysql", "postgres", "redis", "zookeeper", "jdbc:postgresql:");
        Run help = java("--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("list", "inspect", "watch", "release", "purge", "providers", "Exit codes");
        Run bad = java("list", "--uri", "inmemory:x", "--colour");
        assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(ExitCodes.USAGE);
        Run unknown = java("inspect", "--uri", "inmemory:x", "jobs:a");
        assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void readsRealServers() throws Exception {
        for (String backend : List.of("postgres", "redis", "etcd")) {
            Targets.Target target = Targets.of(backend);
            try (LockClient holder = target.holder(
                    LockOptions.builder().ttl(Duration.ofSeconds(30)).build())) {
                long token = holder.tryAcquire("jar:check").orElseThrow().fencingToken();
                Run list = java(Cli.args("list", target, "jar:").toArray(String[]::new));
                assertThat(list.exitCode()).as(backend + ": " + list).isZero();
                assertThat(list.out()).containsPattern("jar:check\\s+yes\\s+" + token + "\\s");
                assertThat(list.err()).as("nothing on stderr from the drivers").isEmpty();
            }
        }
    }
}
