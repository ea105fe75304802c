package io.fencelock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every command on a real PostgreSQL: the views and summaries, the live watch, purge, the environment. */
class CliPostgresTest {
    /** Only to stop a hang: each step takes a few round trips or one watch interval. */
    private static final Duration BOUND = Duration.ofSeconds(20);

    private static Targets.Target target;
    private static LockClient holder;

    @BeforeAll
    static void open() {
        target = Targets.of("postgres");
        holder = target.holder(LockOptions.builder().ttl(Duration.ofSeconds(30)).build());
    }

    @AfterAll
    static void close() {
        holder.close();
    }

    @Test
    void listShowsTheHoldersAndCountsThemByTypeAndOwner() throws Exception {
        Lease a = holder.lock("billing:invoices:2026-11")
                .owner("billing-worker-1")
                .type("job")
                .data("run", "1187")
                .tryAcquire()
                .orElseThrow();
        Lease b = holder.lock("billing:reminders")
                .owner("billing-worker-2")
                .type("job")
                .tryAcquire()
                .orElseThrow();
        Lease c = holder.lock("billing:ledger").type("resource").tryAcquire().orElseThrow();
        try {
            Cli.Result list = Cli.run(Cli.args("list", target, "billing:"));
            assertThat(list.exitCode()).as(list.toString()).isZero();
            assertThat(list.out().lines().findFirst().orElseThrow())
                    .startsWith("NAME")
                    .contains("HELD", "TOKEN", "OWNER", "TYPE", "HELD SINCE", "EXPIRES", "DATA");
            assertThat(list.rows())
                    .extracting(r -> r.get("NAME"))
                    .containsExactly("billing:invoices:2026-11", "billing:ledger", "billing:reminders");
            assertThat(list.row("billing:ledger").get("TOKEN")).isEqualTo(Long.toString(c.fencingToken()));
            keepForTheReadme("list", list.out());

            Cli.Result json = Cli.run(Cli.args("list", target, "billing:", "--json"));
            assertThat(json.exitCode()).as(json.toString()).isZero();
            assertThat(json.out().strip())
                    .startsWith("[{\"name\":\"billing:invoices:2026-11\"")
                    .endsWith("}]");
            assertThat(json.out()).contains("\"token\":" + a.fencingToken(), "\"token\":" + b.fencingToken());

            Cli.Result count = Cli.run(Cli.args("list", target, "billing:", "--count"));
            assertThat(count.exitCode()).as(count.toString()).isZero();
            assertThat(count.out()).containsPattern("(?m)^total\\s+3$");
            Cli.Result countJson = Cli.run(Cli.args("list", target, "billing:", "--count", "--json"));
            assertThat(countJson.out()).startsWith("{\"total\":3,\"groups\":[");

            Cli.Result byOwner = Cli.run(Cli.args("list", target, "--owner", "billing-worker-2"));
            assertThat(byOwner.exitCode()).as(byOwner.toString()).isZero();
            if (holder.capabilities().contains(Capability.METADATA)) {
                assertThat(list.row("billing:invoices:2026-11"))
                        .containsEntry("OWNER", "billing-worker-1")
                        .containsEntry("TYPE", "job")
                        .containsEntry("DATA", "run=1187");
                assertThat(count.rows())
                        .contains(
                                Map.of("TYPE", "job", "OWNER", "billing-worker-1", "LOCKS", "1"),
                                Map.of("TYPE", "job", "OWNER", "billing-worker-2", "LOCKS", "1"));
                assertThat(byOwner.rows()).extracting(r -> r.get("NAME")).containsExactly("billing:reminders");
            } else {
                assertThat(count.rows()).contains(Map.of("TYPE", "-", "OWNER", "-", "LOCKS", "3"));
                assertThat(byOwner.rows()).isEmpty();
                assertThat(byOwner.err()).contains("keeps no lock metadata");
            }
        } finally {
            a.release();
            b.release();
            c.release();
        }
    }

    @Test
    void theEnvironmentGivesTheConnectionAndCredentials() {
        Map<String, String> env = Map.of(
                Connection.URI_ENV, target.uri(),
                Connection.USER_ENV, target.properties().getOrDefault("user", ""),
                Connection.PASSWORD_ENV, target.properties().getOrDefault("password", ""));
        Cli.Result list = Cli.run(env, List.of("list"));
        assertThat(list.exitCode()).as(list.toString()).isZero();
        assertThat(list.out()).startsWith("NAME");
    }

    @Test
    void watchPrintsWhatChangesBetweenLooks() throws Exception {
        String prefix = "watch:";
        Lease before = holder.tryAcquire(prefix + "before").orElseThrow();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = Cli.args("watch", target, prefix, "--interval", "50ms");
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread watcher = new Thread(
                () -> exit.complete(FencelockCli.run(
                        args.toArray(String[]::new), Map.of(), new PrintWriter(out, true), new PrintWriter(err, true))),
                "cli-watch");
        watcher.start();
        // a client whose renewals issue a new token once the token is 200 ms old (the token-period rule)
        LockOptions periodic = LockOptions.builder()
                .ttl(Duration.ofSeconds(2))
                .tokenPeriod(Duration.ofMillis(200))
                .autoRenew(false)
                .build();
        try (LockClient renewer = target.holder(periodic)) {
            awaitLine(out, err, line -> line.contains("held") && line.contains(prefix + "before"));

            Lease job = holder.lock(prefix + "job").type("job").tryAcquire().orElseThrow();
            awaitLine(out, err, line -> line.matches(".*acquired\\s+watch:job\\s+token " + job.fencingToken() + ".*"));
            job.release();
            awaitLine(out, err, line -> line.matches(".*released\\s+watch:job\\s+token " + job.fencingToken()));

            Lease periodical = renewer.tryAcquire(prefix + "periodic").orElseThrow();
            long first = periodical.fencingToken();
            awaitLine(out, err, line -> line.matches(".*acquired\\s+watch:periodic\\s+token " + first + ".*"));
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (periodical.fencingToken() == first && System.nanoTime() < deadline) {
                assertThat(periodical.renew()).isTrue();
                Thread.sleep(50); // the token period is 200 ms: a few renewals in, the token rises
            }
            long second = periodical.fencingToken();
            assertThat(second).isGreaterThan(first);
            awaitLine(
                    out,
                    err,
                    line -> line.matches(
                            ".*token-changed\\s+watch:periodic\\s+token " + first + " -> " + second + ".*"));
            periodical.release();
        } finally {
            watcher.interrupt();
            before.release();
        }
        assertThat(exit.get(BOUND.toSeconds(), TimeUnit.SECONDS))
                .as(err.toString())
                .isZero();
        keepForTheReadme("watch", out.toString());
    }

    @Test
    void watchStopsAfterItsIterations() throws Exception {
        Lease lease = holder.lock("counted:one").type("job").tryAcquire().orElseThrow();
        try {
            Cli.Result watch =
                    Cli.run(Cli.args("watch", target, "counted:", "--interval", "10ms", "--iterations", "3"));
            assertThat(watch.exitCode()).as(watch.toString()).isZero();
            assertThat(watch.out().lines())
                    .singleElement()
                    .asString()
                    .contains("held", "counted:one", "token " + lease.fencingToken());
            Cli.Result json = Cli.run(Cli.args("watch", target, "counted:", "--iterations", "1", "--json"));
            assertThat(json.out().strip())
                    .startsWith("{\"time\":\"")
                    .contains("\"event\":\"held\"", "\"name\":\"counted:one\"");
        } finally {
            lease.release();
        }
    }

    @Test
    void purgeDeletesTheRecordsOfFreeLocks() {
        Lease lease = holder.tryAcquire("purge:me").orElseThrow();
        lease.release();
        Cli.Result kept = Cli.run(Cli.args("purge", target, "--free-for", "1h"));
        assertThat(kept.exitCode()).as(kept.toString()).isZero();
        assertThat(Cli.run(Cli.args("inspect", target, "purge:me")).exitCode())
                .as("a record free for less than an hour stays")
                .isZero();
        Cli.Result purged = Cli.run(Cli.args("purge", target, "--free-for", "PT0S", "--json"));
        assertThat(purged.exitCode()).as(purged.toString()).isZero();
        assertThat(purged.out()).matches("\\{\"purged\":[1-9]\\d*,\"freeFor\":\"PT0S\"}\\R");
        Cli.Result gone = Cli.run(Cli.args("inspect", target, "purge:me"));
        assertThat(gone.exitCode()).as(gone.toString()).isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void providersListsEveryProviderWithoutConnecting() {
        Cli.Result providers = Cli.run(List.of("providers"));
        assertThat(providers.exitCode()).as(providers.toString()).isZero();
        assertThat(providers.rows())
                .extracting(r -> r.get("PROVIDER"))
                .contains("etcd", "inmemory", "mongo", "mysql", "postgres", "redis", "zookeeper");
        assertThat(providers.rows())
                .anySatisfy(r -> assertThat(r)
                        .containsEntry("PROVIDER", "postgres")
                        .containsEntry("URI PREFIXES", "jdbc:postgresql:"));
    }

    /** Waits (bounded) until a line of the watch's output matches. */
    private static void awaitLine(StringWriter out, StringWriter err, Predicate<String> matches)
            throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (out.toString().lines().noneMatch(matches)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no such line in the watch's output:\n" + out + "\nerr:\n" + err);
            }
            Thread.sleep(20);
        }
    }

    /** The README shows a real list: this run's, written where the build can find it. */
    private static void keepForTheReadme(String command, String output) throws Exception {
        Path file = Path.of("target", "readme-" + command + "-output.txt");
        Files.createDirectories(file.getParent());
        Files.writeString(file, output);
    }
}
