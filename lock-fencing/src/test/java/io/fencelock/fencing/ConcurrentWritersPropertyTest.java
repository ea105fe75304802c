package io.fencelock.fencing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.tck.TckSettings;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many writers with random tokens on one resource at once, for every guard on its real backend:
 * the stored token never decreases, and an accepted write never follows (in real time) an
 * accepted write with a higher token; where the guard keeps the order it applied writes in (the
 * JDBC helper's transaction, {@link TokenGuard#runFenced}), that order is by token too.
 *
 * <p>Seeded as the TCK's schedules are: the tokens each writer offers come from the seed (printed
 * on failure; {@code -Dfencelock.tck.seed=...} replays them, the interleaving is the machine's),
 * {@code fencelock.tck.schedules / 10} rounds (at least 2) per guard.
 */
class ConcurrentWritersPropertyTest {
    private static final int WRITERS = 6;
    private static final int WRITES_EACH = 20;
    /** A narrow range, so that equal tokens, reorderings and refusals are all common. */
    private static final int MAX_TOKEN = 40;

    /** One write as it happened: what it carried, when it ran (this JVM's monotonic clock), what came of it. */
    private record Op(long token, String body, long invokedNanos, long completedNanos, FencedTarget.Outcome outcome) {}

    @ParameterizedTest
    @EnumSource(FencedTarget.Kind.class)
    void storedTokenNeverDecreasesAndAcceptedWritesFollowTokenOrder(FencedTarget.Kind kind) throws Exception {
        long base = TckSettings.replaySeed().orElse(TckSettings.baseSeed());
        int rounds = TckSettings.replaySeed().isPresent() ? 1 : Math.max(2, TckSettings.schedules() / 10);
        int accepted = 0;
        int rejected = 0;
        for (int round = 0; round < rounds; round++) {
            long seed = base + round;
            try {
                List<Op> ops = runRound(kind, seed);
                accepted +=
                        (int) ops.stream().filter(o -> o.outcome().accepted()).count();
                rejected +=
                        (int) ops.stream().filter(o -> o.outcome().rejected()).count();
            } catch (AssertionError e) {
                throw new AssertionError(
                        kind + ", seed " + seed + " (replay: -Dfencelock.tck.seed=" + seed + "): " + e.getMessage(), e);
            }
        }
        // not vacuous: writes went both ways
        assertThat(accepted).as("accepted writes").isPositive();
        assertThat(rejected).as("refused writes").isPositive();
    }

    private List<Op> runRound(FencedTarget.Kind kind, long seed) throws Exception {
        FencedTarget.Spec spec = Backends.fresh(kind);
        SplittableRandom random = new SplittableRandom(seed);
        List<FencedTarget> targets = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);
        try (FencedTarget observer = spec.open(false, false)) {
            for (int i = 0; i < WRITERS; i++) {
                // the guard lives in memory: its writers share it; the others each have their own
                // connection, half in a transaction of their own making, half on autocommit
                targets.add(kind == FencedTarget.Kind.GUARD ? observer : spec.open(false, i % 2 == 1));
            }
            CyclicBarrier start = new CyclicBarrier(WRITERS + 1);
            List<Op> ops = Collections.synchronizedList(new ArrayList<>());
            List<Future<?>> writers = new ArrayList<>();
            for (int i = 0; i < WRITERS; i++) {
                FencedTarget target = targets.get(i);
                SplittableRandom mine = random.split();
                int writer = i;
                writers.add(pool.submit(() -> {
                    start.await();
                    for (int j = 0; j < WRITES_EACH; j++) {
                        long token = 1 + mine.nextInt(MAX_TOKEN);
                        String body = "w" + writer + "-" + j + "-t" + token;
                        long invoked = System.nanoTime();
                        FencedTarget.Outcome outcome = target.write(token, body);
                        ops.add(new Op(token, body, invoked, System.nanoTime(), outcome));
                    }
                    return null;
                }));
            }
            // a reader whose reads follow each other in real time: what it sees must never go down
            AtomicBoolean writing = new AtomicBoolean(true);
            Future<List<Long>> reads = pool.submit(() -> {
                start.await();
                List<Long> seen = new ArrayList<>();
                while (writing.get()) {
                    seen.add(observer.storedToken());
                }
                return seen;
            });
            for (Future<?> w : writers) {
                w.get(60, TimeUnit.SECONDS);
            }
            writing.set(false);
            List<Long> seen = reads.get(60, TimeUnit.SECONDS);
            check(List.copyOf(ops), seen, observer);
            return List.copyOf(ops);
        } finally {
            pool.shutdownNow();
            for (FencedTarget t : targets) {
                if (kind != FencedTarget.Kind.GUARD) {
                    t.close();
                }
            }
        }
    }

    private static void check(List<Op> ops, List<Long> seen, FencedTarget observer) throws Exception {
        List<Op> accepted = ops.stream().filter(o -> o.outcome().accepted()).toList();
        List<Op> failed = ops.stream()
                .filter(o -> !o.outcome().accepted() && !o.outcome().rejected())
                .toList();
        // InnoDB may pick a writer in a transaction of its own as a deadlock victim: the caller's to retry
        assertThat(failed)
                .as("writes that failed otherwise than by a refusal")
                .allMatch(o ->
                        o.outcome().detail().toLowerCase(java.util.Locale.ROOT).contains("deadlock"));
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i))
                    .as("stored token read " + i + " after " + seen.get(i - 1))
                    .isGreaterThanOrEqualTo(seen.get(i - 1));
        }
        for (Op a : accepted) {
            for (Op b : accepted) {
                if (a.completedNanos() < b.invokedNanos()) {
                    assertThat(b.token())
                            .as("accepted " + b.body() + " began after accepted " + a.body() + " ended")
                            .isGreaterThanOrEqualTo(a.token());
                }
            }
        }
        List<Long> acceptedTokens = accepted.stream().map(Op::token).toList();
        for (Op r : ops) {
            if (r.outcome().rejected()) {
                assertThat(r.outcome().current())
                        .as("refusal of " + r.body() + " names a higher token")
                        .isGreaterThan(r.token());
                assertThat(acceptedTokens)
                        .as("refusal of " + r.body() + " names a token some write carried")
                        .contains(r.outcome().current());
            }
        }
        long highest = acceptedTokens.stream().mapToLong(Long::longValue).max().orElse(0);
        assertThat(observer.storedToken()).as("the stored token at the end").isEqualTo(highest);
        assertThat(accepted.stream().filter(o -> o.token() == highest).map(Op::body))
                .as("the stored body is that of a write with the highest token")
                .contains(observer.storedBody());
        List<String> history = observer.history();
        if (history != null) {
            assertThat(history)
                    .as("accepted writes as applied")
                    .containsExactlyInAnyOrderElementsOf(
                            accepted.stream().map(Op::body).toList());
            long previous = 0;
            for (String body : history) {
                long token = Long.parseLong(body.substring(body.lastIndexOf("-t") + 2));
                assertThat(token)
                        .as("token of " + body + " in the order writes were applied")
                        .isGreaterThanOrEqualTo(previous);
                previous = token;
            }
        }
    }
}
