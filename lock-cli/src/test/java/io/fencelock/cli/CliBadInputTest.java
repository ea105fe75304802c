package io.fencelock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.testservers.postgres.PostgresServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input is a usage error (exit 2) that names the value, found before any I/O: the URI points
 * at a port nothing listens on, so any attempt to connect would end in exit 3 instead. And no
 * credential given by -p, the environment or the URI is ever printed, also when the server
 * refuses it.
 */
class CliBadInputTest {
    /** Nothing listens on port 1: reaching it would be a backend failure (3), not a usage error (2). */
    private static final String NOWHERE = "jdbc:postgresql://127.0.0.1:1/app";

    static List<Object[]> badInput() {
        return List.of(
                new Object[] {List.of("list", "--uri", NOWHERE, "--colour"), "'--colour'"},
                new Object[] {List.of("purge", "--uri", NOWHERE, "--free-for", "5 minutes"), "'5 minutes'"},
                new Object[] {List.of("purge", "--uri", NOWHERE, "--free-for", "-5s"), "'-5s'"},
                new Object[] {List.of("purge", "--uri", NOWHERE), "--free-for"},
                new Object[] {List.of("watch", "--uri", NOWHERE, "--interval", "1ms"), "--interval PT0.001S"},
                new Object[] {List.of("watch", "--uri", NOWHERE, "--iterations", "0"), "--iterations 0"},
                new Object[] {List.of("inspect", "--uri", NOWHERE, "bad name"), "'bad name'"},
                new Object[] {List.of("inspect", "--uri", NOWHERE, "{hash}"), "'{hash}'"},
                new Object[] {List.of("list", "--uri", NOWHERE, "a b"), "'a b'"},
                new Object[] {List.of("list", "--uri", NOWHERE, "--type", "no spaces"), "'no spaces'"},
                new Object[] {List.of("release", "--uri", NOWHERE, "jobs:a"), "add --force"},
                new Object[] {List.of("list", "--uri", "nosuch://host/x"), "no fencelock provider"},
                new Object[] {List.of("list", "--uri", NOWHERE, "-p", "colour=blue"), "[colour]"},
                new Object[] {List.of("list"), "FENCELOCK_URI"},
                new Object[] {List.of(), "Usage: fencelock"});
    }

    @ParameterizedTest
    @MethodSource("badInput")
    void isAUsageErrorNamingTheValue(List<String> args, String named) {
        Cli.Result result = Cli.run(args);
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.err()).contains(named);
        assertThat(result.out()).isEmpty();
    }

    @Test
    void anUnreachableBackendIsExitCode3() {
        Cli.Result result = Cli.run(List.of("list", "--uri", NOWHERE));
        assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.BACKEND);
        assertThat(result.err()).contains("jdbc:postgresql://127.0.0.1:1/app");
    }

    @Test
    void aCredentialNeverAppearsInOutputAlsoWhenTheServerRefusesIt() {
        PostgresServer pg = PostgresServer.shared();
        Assumptions.assumeTrue(
                pg.password() != null && !pg.password().isEmpty(),
                "this server does not check passwords: " + pg.description());
        String url = pg.jdbcUrl();
        String secret = "Wr0ng-" + UUID.randomUUID();
        List<Cli.Result> results = new ArrayList<>();
        // -p
        results.add(Cli.run(List.of("list", "--uri", url, "-p", "user=" + pg.user(), "-p", "password=" + secret)));
        results.add(Cli.run(List.of("list", "--uri", url, "-puser=" + pg.user(), "--property=password=" + secret)));
        // the environment
        results.add(Cli.run(
                Map.of(Connection.URI_ENV, url, Connection.USER_ENV, pg.user(), Connection.PASSWORD_ENV, secret),
                List.of("inspect", "jobs:a")));
        // the URI itself
        results.add(Cli.run(List.of("list", "--uri", url + "?user=" + pg.user() + "&password=" + secret)));
        for (Cli.Result result : results) {
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.BACKEND);
            assertThat(result.err()).as(result.toString()).contains("password authentication failed");
            assertThat(result.all()).as(result.toString()).doesNotContain(secret);
        }
        // a mistyped option, and a property given without its key, are echoed without their values
        for (List<String> args : List.of(
                List.of("list", "--uri", url, "--pasword=" + secret),
                List.of("list", "--uri", url, "-p", secret),
                List.of("list", "--uri", url + "?password=" + secret, "prefix", "extra"))) {
            Cli.Result result = Cli.run(args);
            assertThat(result.exitCode()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(result.all()).as(result.toString()).doesNotContain(secret);
        }
    }
}
