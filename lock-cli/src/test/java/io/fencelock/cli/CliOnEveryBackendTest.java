package io.fencelock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code list}, {@code inspect}, {@code release --force} and {@code purge} on every provider's real
 * server (and the in-memory backend, which keeps metadata already): a holder takes locks with owner,
 * type and data; the command line, with a client of its own, shows them, ends a grant, and the next
 * grant gets a higher token. Owner, type, data and held-since are checked where the backend declares
 * {@link Capability#METADATA}; elsewhere the columns show "-".
 */
class CliOnEveryBackendTest {

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "redis", "etcd", "mongo", "inmemory"})
    void listInspectAndForcedRelease(String backend) throws Exception {
        Targets.Target target = Targets.of(backend);
        try (LockClient holder =
                target.holder(LockOptions.builder().ttl(Duration.ofSeconds(30)).build())) {
            boolean metadata = holder.capabilities().contains(Capability.METADATA);
            Lease job = holder.lock("jobs:nightly")
                    .owner("ops-node-1")
                    .type("job")
                    .data("run", "42")
                    .tryAcquire()
                    .orElseThrow();
            Lease report =
                    holder.lock("jobs:report").type("report").tryAcquire().orElseThrow();
            holder.tryAcquire("other:x").orElseThrow();

            Cli.Result list = Cli.run(Cli.args("list", target, "jobs:"));
            assertThat(list.exitCode()).as(list.toString()).isZero();
            assertThat(list.rows()).extracting(r -> r.get("NAME")).containsExactly("jobs:nightly", "jobs:report");
            Map<String, String> row = list.row("jobs:nightly");
            assertThat(row.get("HELD")).isEqualTo("yes");
            assertThat(row.get("TOKEN")).isEqualTo(Long.toString(job.fencingToken()));
            assertThat(row.get("EXPIRES")).as(list.toString()).startsWith("in ");
            if (metadata) {
                assertThat(row)
                        .containsEntry("OWNER", "ops-node-1")
                        .containsEntry("TYPE", "job")
                        .containsEntry("DATA", "run=42");
                assertThat(row.get("HELD SINCE")).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
                assertThat(list.row("jobs:report"))
                        .as("the default owner: host, process id and client id")
                        .containsEntry("OWNER", report.metadata().owner())
                        .containsEntry("TYPE", "report");
            } else {
                assertThat(row)
                        .containsEntry("OWNER", "-")
                        .containsEntry("TYPE", "-")
                        .containsEntry("DATA", "-");
            }

            Cli.Result byType = Cli.run(Cli.args("list", target, "--type", "job"));
            assertThat(byType.exitCode()).as(byType.toString()).isZero();
            assertThat(byType.rows())
                    .extracting(r -> r.get("NAME"))
                    .containsExactlyElementsOf(metadata ? java.util.List.of("jobs:nightly") : java.util.List.of());

            Cli.Result inspect = Cli.run(Cli.args("inspect", target, "jobs:nightly", "--json"));
            assertThat(inspect.exitCode()).as(inspect.toString()).isZero();
            assertThat(inspect.out())
                    .contains("\"name\":\"jobs:nightly\"", "\"held\":true", "\"token\":" + job.fencingToken());
            if (metadata) {
                assertThat(inspect.out()).contains("\"owner\":\"ops-node-1\"", "\"data\":{\"run\":\"42\"}");
            }

            Cli.Result unknown = Cli.run(Cli.args("inspect", target, "jobs:never"));
            assertThat(unknown.exitCode()).as(unknown.toString()).isEqualTo(ExitCodes.NOT_FOUND);
            assertThat(unknown.err()).contains("no record of lock 'jobs:never'");

            Cli.Result forced = Cli.run(Cli.args("release --force", target, "jobs:nightly"));
            assertThat(forced.exitCode()).as(forced.toString()).isZero();
            assertThat(forced.out()).contains("token " + job.fencingToken());
            Cli.Result after = Cli.run(Cli.args("list", target, "jobs:"));
            assertThat(after.rows()).extracting(r -> r.get("NAME")).containsExactly("jobs:report");

            Lease next = holder.tryAcquire("jobs:nightly").orElseThrow();
            assertThat(next.fencingToken()).as("the next grant's token").isGreaterThan(job.fencingToken());
            assertThat(job.renew()).as("the forced-out lease's renewal").isFalse();
            next.release();

            Cli.Result free = Cli.run(Cli.args("release --force", target, "jobs:nightly"));
            assertThat(free.exitCode()).as(free.toString()).isEqualTo(ExitCodes.NOT_FOUND);
            assertThat(free.err()).contains("'jobs:nightly' is free");

            Cli.Result purge = Cli.run(Cli.args("purge", target, "--free-for", "0s"));
            if (holder.capabilities().contains(Capability.PURGE_FREE)) {
                assertThat(purge.exitCode()).as(purge.toString()).isZero();
                assertThat(purge.out()).startsWith("purged ");
            } else {
                assertThat(purge.exitCode()).as(purge.toString()).isEqualTo(ExitCodes.UNSUPPORTED);
                assertThat(purge.err()).contains("cannot purge", "PURGE_FREE");
            }
        }
    }
}
