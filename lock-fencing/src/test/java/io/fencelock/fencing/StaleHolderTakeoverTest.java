package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.tck.ClientConnection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Kleppmann's scenario end to end, for each guard on its real backend: a holder in a child JVM
 * takes the lock with the real provider and writes through the kit, is frozen with SIGSTOP until
 * its lease has expired on the server (the new holder's acquire is what proves it), the new holder
 * writes, the old one is thawed and keeps writing with its old token. Every late write is refused,
 * and the resource shows only the new holder's data after the takeover.
 */
class StaleHolderTakeoverTest {
    private static final Duration TTL = Duration.ofMillis(1000);
    /** Only to stop a hang; each step normally takes a TTL or a few round trips. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final int LATE_WRITES = 5;

    @ParameterizedTest
    @EnumSource(
            value = FencedTarget.Kind.class,
            names = {"HELPER_POSTGRES", "HELPER_MYSQL", "TRIGGER_POSTGRES", "TRIGGER_MYSQL", "REDIS", "MONGO"})
    void lateWritesOfAFrozenHolderAreRejected(FencedTarget.Kind kind) throws Exception {
        FencedTarget.Spec spec = Backends.fresh(kind);
        ClientConnection connection = Backends.lockConnection(spec);
        String name = "fencing/" + UUID.randomUUID();
        LockClient.Builder builder = LockClient.builder()
                .uri(connection.uri())
                .options(LockOptions.builder().ttl(TTL).build());
        connection.properties().forEach(builder::property);
        try (LockClient locks = builder.build(); // creates the lock table before the child uses it
                ZombieWriter old = ZombieWriter.start(connection, spec, name, TTL);
                FencedTarget resource = spec.open(false, true)) {
            long oldToken = old.awaitHolding(BOUND);
            old.await(
                    "3 accepted writes",
                    w -> w.stream().filter(x -> x.outcome().accepted()).count() >= 3,
                    BOUND);
            old.freeze();

            Lease lease = locks.acquire(name, BOUND).orElseThrow(() -> new AssertionError("no takeover"));
            long newToken = lease.fencingToken();
            assertThat(newToken).as("the new holder's token").isGreaterThan(oldToken);
            FencedTarget.Outcome mine = resource.write(newToken, "new-holder");
            assertThat(mine.accepted()).as("the new holder's write: " + mine).isTrue();

            // what the child reports from here on is late, but for a write in flight at the freeze
            // and one that finds its session ended by the server (it reconnects): room for three
            int before = old.writes().size();
            old.thaw();
            old.await(LATE_WRITES + 3 + " writes after the thaw", w -> w.size() >= before + LATE_WRITES + 3, BOUND);
            old.stop(BOUND);

            List<ZombieWriter.Write> writes = old.writes();
            int firstRejected = 0;
            while (firstRejected < writes.size() - 1
                    && !writes.get(firstRejected).outcome().rejected()) {
                firstRejected++;
            }
            List<ZombieWriter.Write> late = writes.subList(firstRejected, writes.size());
            assertThat(late)
                    .as("the old holder's writes from its first refusal on")
                    .noneMatch(w -> w.outcome().accepted());
            assertThat(late)
                    .filteredOn(w -> w.outcome().rejected())
                    .as("refused late writes")
                    .hasSizeGreaterThanOrEqualTo(LATE_WRITES);
            assertThat(late)
                    .filteredOn(w -> w.outcome().rejected())
                    .as("refusals name the new holder's token")
                    .allMatch(w -> w.outcome().current() == newToken);

            assertThat(resource.storedBody())
                    .as("the resource after the takeover")
                    .isEqualTo("new-holder");
            assertThat(resource.storedToken()).isEqualTo(newToken);
            List<String> history = resource.history();
            if (history != null) {
                assertThat(history)
                        .as("accepted writes in the order applied")
                        .endsWith("new-holder")
                        .containsOnlyOnce("new-holder")
                        .allMatch(b -> b.startsWith("old-holder:") || b.equals("new-holder"));
            }
            lease.release();
        }
    }
}
