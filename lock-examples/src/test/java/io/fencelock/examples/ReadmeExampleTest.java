package io.fencelock.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockClient;
import io.fencelock.tck.FencedResource;
import io.fencelock.testservers.postgres.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadmeExampleTest {

    @Test
    void theExampleRunsAgainstARealPostgres() throws Exception {
        PostgresServer server = PostgresServer.shared();
        String url = server.createDatabase("readme");
        FencedResource resource = new FencedResource();
        List<Long> tokens = new ArrayList<>();
        ReadmeExample.run(url, server.user(), server.password(), (report, token) -> {
            assertThat(resource.write(token)).as("write of " + report).isTrue();
            tokens.add(token);
        });
        assertThat(tokens).hasSize(2);
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
    }

    @Test
    void theReadmeShowsTheExampleVerbatim() throws Exception {
        String source = Files.readString(Path.of("src/main/java/io/fencelock/examples/ReadmeExample.java"));
        String block = source.substring(
                source.indexOf("// README:start\n") + "// README:start\n".length(),
                source.indexOf("        // README:end"));
        String readme = Files.readString(Path.of("../README.md"));
        String unindented = block.lines()
                .map(l -> l.length() >= 8 ? l.substring(8) : l.strip())
                .reduce((a, b) -> a + "\n" + b)
                .orElseThrow();
        assertThat(readme).contains(unindented);
    }

    @Test
    void providersAreFoundThroughServiceLoader() {
        assertThat(LockClient.providers()).anySatisfy(p -> assertThat(p.name()).isEqualTo("postgres"));
    }

    @Test
    void anUnknownUriNamesTheProvidersOnTheClassPathWithoutCredentials() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> LockClient.open("jdbc:oracle:thin:scott/tiger@//db:1521/x?password=tiger"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("postgres")
                .hasMessageContaining("jdbc:postgresql:")
                .hasMessageNotContaining("tiger");
    }

    @Test
    void theDemoRuns() throws Exception {
        Demo.main(new String[0]);
    }
}
