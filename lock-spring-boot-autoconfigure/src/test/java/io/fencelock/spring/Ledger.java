package io.fencelock.spring;

import io.fencelock.Lease;
import io.fencelock.fencing.TokenGuard;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The fenced resource the "nodes" of a test share: admits a run only with a token at least the highest
 * seen ({@link TokenGuard}), and counts runs that overlapped another.
 */
final class Ledger {
    /**
     * One run of the job.
     *
     * @param node       the node that ran it
     * @param token      the lease's fencing token
     * @param startNanos when it started
     */
    record Run(String node, long token, long startNanos) {}

    private final TokenGuard guard = TokenGuard.inMemory();
    private final AtomicInteger active = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    final List<Run> runs = new CopyOnWriteArrayList<>();

    /** One run: {@code workMillis} of work under the lease, fenced by its token. */
    void run(String node, Lease lease, long workMillis) throws Exception {
        long start = System.nanoTime();
        if (active.incrementAndGet() > 1) {
            overlaps.incrementAndGet();
        }
        try {
            guard.runFenced("ledger", lease.fencingToken(), () -> {
                runs.add(new Run(node, lease.fencingToken(), start));
                Thread.sleep(workMillis); // the job's work, long enough for another node to run into it
                return null;
            });
        } finally {
            active.decrementAndGet();
        }
    }
}
