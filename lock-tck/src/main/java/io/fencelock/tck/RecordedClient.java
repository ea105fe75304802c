package io.fencelock.tck;

import io.fencelock.Lease;
import io.fencelock.LeaseLoss;
import io.fencelock.LeaseTask;
import io.fencelock.LockClient;
import io.fencelock.LockEventListener;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.history.Event.Kind;
import io.fencelock.tck.history.Event.Type;
import io.fencelock.tck.history.History;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One process of a TCK run: a {@link LockClient} whose every operation, watchdog renewal and lost
 * signal is recorded into a {@link History} as invoke and completion events. The random schedules
 * and the fault properties both drive their clients through it, so both are judged by the same
 * {@link io.fencelock.tck.history.HistoryChecker}.
 */
public final class RecordedClient implements LockEventListener, AutoCloseable {
    private final int process;
    private final History history;
    private final LockBackend backend;
    private final LockClient client;
    private final ThreadLocal<Boolean> inManualRenew = ThreadLocal.withInitial(() -> false);
    private final Map<String, Boolean> releasedOnBackend = new ConcurrentHashMap<>();

    public RecordedClient(int process, History history, LockBackend backend, LockOptions options) {
        this.process = process;
        this.history = history;
        this.backend = backend;
        this.client = LockClient.builder()
                .backend(backend)
                .options(options)
                .listener(this)
                .build();
    }

    public LockClient client() {
        return client;
    }

    public LockBackend backend() {
        return backend;
    }

    public int process() {
        return process;
    }

    /** One attempt ({@code wait == null}) or a wait of up to {@code wait}; empty when not acquired or unknown. */
    public Optional<Lease> acquire(String name, Duration wait) throws InterruptedException {
        return recordAcquire(
                name,
                wait == null ? "try" : "wait " + wait.toMillis() + "ms",
                () -> wait == null ? client.tryAcquire(name) : client.acquire(name, wait),
                false);
    }

    /** One acquisition, e.g. {@code rw.write(wait)}; empty when not granted or unknown. */
    public interface SharedAttempt {
        Optional<Lease> run() throws InterruptedException;
    }

    /**
     * A shared acquisition recorded like {@link #acquire}: the OK event carries the grant's mode and
     * permits as its detail ({@code "WRITE 1"}, {@code "PERMITS 2"}), for {@link #grantOf}.
     */
    public Optional<Lease> acquireShared(String name, String how, SharedAttempt attempt) throws InterruptedException {
        return recordAcquire(name, how, attempt, true);
    }

    private Optional<Lease> recordAcquire(String name, String how, SharedAttempt attempt, boolean shared)
            throws InterruptedException {
        long op = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.ACQUIRE, name, null, 0, false, 0, how);
        try {
            Optional<Lease> got = attempt.run();
            if (got.isPresent()) {
                Lease lease = got.get();
                history.record(
                        process,
                        op,
                        Type.OK,
                        Kind.ACQUIRE,
                        name,
                        lease.leaseId(),
                        lease.fencingToken(),
                        false,
                        deadline(lease),
                        shared ? lease.mode() + " " + lease.permits() : null);
            } else {
                history.record(process, op, Type.FAIL, Kind.ACQUIRE, name, null, 0, false, 0, null);
            }
            return got;
        } catch (RuntimeException e) {
            history.record(process, op, Type.INFO, Kind.ACQUIRE, name, null, 0, false, 0, e.toString());
            return Optional.empty();
        }
    }

    /** The mode and permits a shared grant's ACQUIRE OK detail names, or null for another detail. */
    public static Map.Entry<io.fencelock.LockMode, Integer> grantOf(String detail) {
        String[] f = detail == null ? new String[0] : detail.split(" ");
        if (f.length != 2) {
            return null;
        }
        try {
            return Map.entry(io.fencelock.LockMode.valueOf(f[0]), Integer.parseInt(f[1]));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * {@link LockClient#runExclusively} with the acquisition and the release recorded: the grant when
     * the task starts (so the recorded deadline can only be earlier than the true one), the release's
     * invocation when the task ends (runExclusively releases right after) and its outcome as the
     * client reported it.
     */
    public <T> Optional<T> runExclusively(String name, Duration wait, LeaseTask<T> task) throws Exception {
        return runHolding(name, "runExclusively", t -> client.runExclusively(name, wait, t), task);
    }

    /** How a task runs under one grant: {@code runExclusively}, or a shared handle's {@code runWriting}, say. */
    public interface Runner<T> {
        Optional<T> run(LeaseTask<T> task) throws Exception;
    }

    /** Like {@link #runExclusively}, for a task run under a grant of any kind by {@code runner}, recorded as {@code how}. */
    public <T> Optional<T> runHolding(String name, String how, Runner<T> runner, LeaseTask<T> task) throws Exception {
        long op = history.newOpId();
        long releaseOp = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.ACQUIRE, name, null, 0, false, 0, how);
        AtomicReference<Lease> granted = new AtomicReference<>();
        try {
            Optional<T> result = runner.run(lease -> {
                granted.set(lease);
                history.record(
                        process,
                        op,
                        Type.OK,
                        Kind.ACQUIRE,
                        name,
                        lease.leaseId(),
                        lease.fencingToken(),
                        false,
                        deadline(lease),
                        how);
                try {
                    return task.run(lease);
                } finally {
                    history.record(
                            process, releaseOp, Type.INVOKE, Kind.RELEASE, name, lease.leaseId(), 0, false, 0, how);
                }
            });
            if (granted.get() == null) {
                history.record(process, op, Type.FAIL, Kind.ACQUIRE, name, null, 0, false, 0, null);
            }
            return result;
        } catch (RuntimeException e) {
            if (granted.get() == null) {
                history.record(process, op, Type.INFO, Kind.ACQUIRE, name, null, 0, false, 0, e.toString());
            }
            throw e;
        } finally {
            Lease lease = granted.get();
            if (lease != null) {
                Boolean freed = releasedOnBackend.remove(lease.leaseId());
                history.record(
                        process,
                        releaseOp,
                        freed == null ? Type.INFO : Type.OK,
                        Kind.RELEASE,
                        name,
                        lease.leaseId(),
                        0,
                        freed != null && freed,
                        0,
                        freed == null ? "outcome not reported" : how);
            }
        }
    }

    /** A manual renewal; returns whether it certainly renewed. */
    public boolean renew(Lease lease) {
        long op = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.RENEW, lease.name(), lease.leaseId(), 0, false, 0, "manual");
        inManualRenew.set(true);
        try {
            boolean renewed = lease.renew();
            history.record(
                    process,
                    op,
                    renewed ? Type.OK : Type.FAIL,
                    Kind.RENEW,
                    lease.name(),
                    lease.leaseId(),
                    renewed ? lease.fencingToken() : 0,
                    false,
                    renewed ? deadline(lease) : 0,
                    null);
            return renewed;
        } catch (RuntimeException e) {
            history.record(
                    process, op, Type.INFO, Kind.RENEW, lease.name(), lease.leaseId(), 0, false, 0, e.toString());
            return false;
        } finally {
            inManualRenew.set(false);
        }
    }

    /** Releases through the lease (owner-checked by the engine and the backend). */
    public void release(Lease lease) {
        long op = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.RELEASE, lease.name(), lease.leaseId(), 0, false, 0, null);
        try {
            boolean freed = lease.release();
            releasedOnBackend.remove(lease.leaseId());
            history.record(process, op, Type.OK, Kind.RELEASE, lease.name(), lease.leaseId(), 0, freed, 0, null);
        } catch (RuntimeException e) {
            history.record(
                    process, op, Type.INFO, Kind.RELEASE, lease.name(), lease.leaseId(), 0, false, 0, e.toString());
        }
    }

    /** A release of an old lease straight through the backend: tests the backend's owner check. */
    public void releaseStale(Lease old) {
        long op = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.RELEASE, old.name(), old.leaseId(), 0, false, 0, "stale");
        try {
            boolean freed = backend.release(old.name(), old.leaseId());
            history.record(process, op, Type.OK, Kind.RELEASE, old.name(), old.leaseId(), 0, freed, 0, "stale");
        } catch (RuntimeException e) {
            history.record(process, op, Type.INFO, Kind.RELEASE, old.name(), old.leaseId(), 0, false, 0, e.toString());
        }
    }

    /**
     * Writes to {@code resource} with the lease's token. {@code believedValid} says whether the
     * writer thinks it holds the lock (a zombie write says false); returns whether it was accepted.
     */
    public boolean write(FencedResource resource, Lease lease, boolean believedValid) {
        return recordWrite(
                history, process, resource, lease.name(), lease.leaseId(), lease.fencingToken(), believedValid);
    }

    /** Records a write with a given token, e.g. one a holder in another JVM asked for. */
    public static boolean recordWrite(
            History history,
            int process,
            FencedResource resource,
            String name,
            String leaseId,
            long token,
            boolean believedValid) {
        long op = history.newOpId();
        history.record(process, op, Type.INVOKE, Kind.WRITE, name, leaseId, token, believedValid, 0, null);
        boolean accepted = resource.write(token);
        history.record(process, op, Type.OK, Kind.WRITE, name, leaseId, token, accepted, 0, null);
        return accepted;
    }

    /** The local deadline, read so that it can only be earlier than the true one. */
    private static long deadline(Lease lease) {
        long now = System.nanoTime();
        return now + lease.remainingValidity().toNanos();
    }

    @Override
    public void renewed(Lease lease, long sentNanos) {
        if (inManualRenew.get()) {
            return;
        }
        long op = history.newOpId();
        // stamped when the renewal was sent, not when its answer came: it may predate a release's invoke
        history.recordAt(
                sentNanos,
                process,
                op,
                Type.INVOKE,
                Kind.RENEW,
                lease.name(),
                lease.leaseId(),
                0,
                false,
                0,
                "watchdog");
        history.record(
                process,
                op,
                Type.OK,
                Kind.RENEW,
                lease.name(),
                lease.leaseId(),
                lease.fencingToken(),
                false,
                deadline(lease),
                "watchdog");
    }

    @Override
    public void released(Lease lease, boolean freedOnBackend) {
        releasedOnBackend.put(lease.leaseId(), freedOnBackend);
    }

    @Override
    public void lost(LeaseLoss loss) {
        history.record(
                process,
                history.newOpId(),
                Type.OK,
                Kind.LOST,
                loss.lease().name(),
                loss.lease().leaseId(),
                0,
                false,
                0,
                loss.reason().toString());
    }

    /** Closes the client (releasing what it holds) and its backend. */
    @Override
    public void close() {
        client.close();
    }
}
