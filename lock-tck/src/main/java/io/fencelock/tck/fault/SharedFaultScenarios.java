package io.fencelock.tck.fault;

import static io.fencelock.tck.fault.FaultScenarios.RESTART_TTL;
import static io.fencelock.tck.fault.FaultScenarios.TTL;
import static io.fencelock.tck.fault.FaultScenarios.await;
import static io.fencelock.tck.fault.FaultScenarios.checkLostSignalled;
import static io.fencelock.tck.fault.FaultScenarios.options;
import static io.fencelock.tck.fault.FaultScenarios.retry;

import io.fencelock.Capability;
import io.fencelock.Lease;
import io.fencelock.LeaseState;
import io.fencelock.LockMode;
import io.fencelock.ReadWriteLockHandle;
import io.fencelock.SemaphoreHandle;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.FencedResource;
import io.fencelock.tck.InstrumentedBackend;
import io.fencelock.tck.RecordedClient;
import io.fencelock.tck.SharedChecks;
import io.fencelock.tck.SideBySide;
import io.fencelock.tck.TckSettings;
import io.fencelock.tck.history.Event;
import io.fencelock.tck.history.History;
import io.fencelock.tck.history.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The fault scenarios of {@link FaultScenarios}, driven on shared grants ({@code SHARED_LOCKS}): a
 * semaphore of {@link #LIMIT} permits and a read-write lock, on which the faulted client (process 1)
 * holds a permit and the write grant while healthy clients keep taking permits, reads and writes.
 * Every grant is recorded as a certain hold and judged afterwards by the shared properties
 * ({@link SharedChecks#PROPERTIES}); writes go to a {@link FencedResource} only under write grants.
 */
public final class SharedFaultScenarios {
    /** The semaphore's N: small, so that the healthy clients' requests contend with the faulted holder's permit. */
    static final int LIMIT = 2;

    private final BackendFixture fixture;
    private final Supplier<String> names;
    private final FaultScenarios faults;
    /** Rounds of proxy faults driven so far: each takes the next ones in turn. */
    private int proxyFaultRounds;

    public SharedFaultScenarios(BackendFixture fixture, Supplier<String> names, FaultScenarios faults) {
        this.fixture = fixture;
        this.names = names;
        this.faults = faults;
    }

    /** The names, resource and clients of one run; the faulted client is process 1. */
    private final class Setting implements AutoCloseable {
        final History history = new History();
        final FaultRun run;
        final FencedResource resource = new FencedResource();
        final String semaphore = names.get();
        final String readWrite = names.get();
        final Map<String, Long> writeEnds = new ConcurrentHashMap<>();
        final List<RecordedClient> clients = new ArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final ExecutorService pool = Executors.newFixedThreadPool(4);
        private final List<Future<?>> load = new ArrayList<>();

        Setting(String fault) {
            run = new FaultRun(fault, history);
        }

        RecordedClient client(int process, LockBackend backend, Duration ttl) {
            RecordedClient c = new RecordedClient(process, history, backend, options(ttl));
            clients.add(c);
            return c;
        }

        /** Process 3 asks fairly where the backend claims FAIR_ORDER: queue places then live through the faults too. */
        private boolean fair(RecordedClient c) {
            return c.process() == 3 && c.client().capabilities().contains(Capability.FAIR_ORDER);
        }

        SemaphoreHandle semaphore(RecordedClient c) {
            return c.client().semaphore(semaphore, LIMIT).fair(fair(c));
        }

        ReadWriteLockHandle readWrite(RecordedClient c) {
            return c.client().readWriteLock(readWrite).fair(fair(c));
        }

        Optional<Lease> permits(RecordedClient c, int k, Duration wait) throws InterruptedException {
            SemaphoreHandle h = semaphore(c);
            return c.acquireShared(
                    semaphore, "permits " + k, () -> wait == null ? h.tryAcquire(k) : h.acquire(k, wait));
        }

        Optional<Lease> write(RecordedClient c, Duration wait) throws InterruptedException {
            ReadWriteLockHandle h = readWrite(c);
            return c.acquireShared(readWrite, "write", () -> wait == null ? h.tryWrite() : h.write(wait));
        }

        Optional<Lease> read(RecordedClient c, Duration wait) throws InterruptedException {
            ReadWriteLockHandle h = readWrite(c);
            return c.acquireShared(readWrite, "read", () -> wait == null ? h.tryRead() : h.read(wait));
        }

        /** Healthy clients (processes 2 and 3) that take random permits, reads and writes until {@link #close}. */
        void startLoad(long seed) {
            for (int p = 2; p <= 3; p++) {
                RecordedClient c = client(p, fixture.openBackend(), TTL);
                for (int kind = 0; kind < 2; kind++) {
                    boolean permits = kind == 0;
                    Random random = new Random(seed * 31 + p * 2L + kind);
                    load.add(pool.submit(() -> {
                        while (!stop.get()) {
                            boolean writing = !permits && random.nextInt(10) < 3;
                            Duration wait = Duration.ofMillis(300);
                            Optional<Lease> got = permits
                                    ? permits(c, 1 + random.nextInt(LIMIT), wait)
                                    : writing ? write(c, wait) : read(c, wait);
                            if (got.isPresent()) {
                                Lease lease = got.get();
                                if (writing) {
                                    c.write(resource, lease, lease.isValid());
                                }
                                Thread.sleep(random.nextInt((int) TTL.toMillis() / 2)); // the hold
                                c.release(lease);
                            }
                        }
                        return null;
                    }));
                }
            }
        }

        /** Writes with {@code lease} while it is valid and still writes, for {@code duration}. */
        void writeWhileValid(RecordedClient c, Lease lease, Duration duration) throws InterruptedException {
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() - end < 0) {
                if (lease.isValid() && lease.mode() == LockMode.WRITE) {
                    c.write(resource, lease, true);
                }
                Thread.sleep(20); // pacing the holder's writes
            }
        }

        /** Stops the load and judges the run: every grant of both names as a certain hold. */
        FaultRun finish() throws Exception {
            stop.set(true);
            for (Future<?> f : load) {
                f.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
            }
            List<SharedChecks.Hold> permitHolds = new ArrayList<>();
            List<SharedChecks.Hold> readWriteHolds = new ArrayList<>();
            for (HistoryChecker.CertainHeld held : HistoryChecker.certainHolds(history.events())) {
                var grant = RecordedClient.grantOf(held.acquired().detail());
                if (grant == null) {
                    continue;
                }
                long writeEnd = grant.getKey() == LockMode.WRITE
                        ? Math.min(held.end(), writeEnds.getOrDefault(held.leaseId(), Long.MAX_VALUE))
                        : held.end();
                SharedChecks.Hold hold = new SharedChecks.Hold(
                        held.leaseId(),
                        grant.getKey(),
                        grant.getValue(),
                        held.acquired().token(),
                        held.invoked(),
                        held.granted(),
                        writeEnd,
                        held.end());
                if (held.name().equals(semaphore)) {
                    permitHolds.add(hold);
                } else if (held.name().equals(readWrite)) {
                    readWriteHolds.add(hold);
                }
            }
            run.note(permitHolds.size() + " semaphore and " + readWriteHolds.size() + " read-write grants judged");
            run.shared(new FaultRun.SharedHolds(LIMIT, permitHolds, readWriteHolds));
            return run;
        }

        @Override
        public void close() {
            stop.set(true);
            pool.shutdownNow();
            clients.forEach(RecordedClient::close);
        }
    }

    // ------------------------------------------------------------------ holder pauses

    /** A shared holder's renewals stalled in this JVM, and (where the fixture allows) a frozen holder JVM. */
    public List<FaultRun> pauses(long seed) throws Exception {
        List<FaultRun> runs = new ArrayList<>();
        if (faults.holderJvmUnavailable().isEmpty()) {
            runs.add(holderJvmFrozen(seed));
        }
        runs.add(watchdogStalled(seed));
        return runs;
    }

    /**
     * The faulted client holds a permit and the write grant and writes; its renewals stall past the
     * TTL while the others take permits and, once its grants expired, a successor takes the write
     * grant and writes; then the stalled renewals reach the backend, late. The holder must be told
     * its grants are lost, and its write with the old token must be turned away.
     */
    private FaultRun watchdogStalled(long seed) throws Exception {
        InstrumentedBackend stalling = new InstrumentedBackend(fixture.openBackend());
        try (Setting s = new Setting("watchdog renewals stalled in-process past the TTL")) {
            RecordedClient holder = s.client(1, stalling, TTL);
            Lease permit = s.permits(holder, 1, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            Lease write = s.write(holder, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            holder.write(s.resource, write, write.isValid());
            s.startLoad(seed);
            try {
                stalling.stallRenewals();
                s.writeWhileValid(holder, write, TTL);
                takeOver(s, write);
            } finally {
                stalling.resumeRenewals(); // the stalled renewals now reach the backend, late
            }
            int sent = stalling.renewBatchSizes().size();
            await("the late renewals to be answered", () -> stalling.renewCallsFinished() >= sent);
            checkNotRevived(s.run, List.of(permit, write));
            holder.write(s.resource, write, false); // the zombie's write, with its old token
            checkLostSignalled(s.run, 1);
            checkLateWritesFenced(s.run);
            s.run.note("permit " + permit.state() + ", write grant " + write.state());
            return s.finish();
        }
    }

    /**
     * A holder in a child JVM takes the write grant and writes; it is frozen with SIGSTOP while the
     * others take permits and reads and, after its TTL, a successor takes the write grant and
     * writes; then it is thawed: it must learn the loss, and its late write must be turned away.
     */
    private FaultRun holderJvmFrozen(long seed) throws Exception {
        try (Setting s = new Setting("holder JVM frozen (SIGSTOP) past its TTL");
                HolderJvm holder = HolderJvm.start(
                        faults.checkedClientConnection(),
                        HolderJvm.Spec.writingUntilLost(s.readWrite, TTL, 1),
                        s.history,
                        s.resource)) {
            holder.awaitHolding(TckSettings.hangBound());
            holder.awaitWrites(3);
            s.startLoad(seed);
            holder.pause();
            try {
                takeOver(s, null);
            } finally {
                holder.resume();
            }
            boolean finished = holder.awaitDone(TckSettings.hangBound());
            String cancelled = holder.cancelled().getNow(null);
            s.run.check(
                    FaultRun.TASK_CANCELLED,
                    cancelled != null,
                    cancelled != null
                            ? "runWriting threw: " + cancelled
                            : "the task was never cancelled" + (finished ? "" : " (the holder JVM did not finish)")
                                    + "\n" + holder.diagnostics());
            checkLostSignalled(s.run, 1);
            checkLateWritesFenced(s.run);
            return s.finish();
        }
    }

    /** A successor (process 4) waits for the write grant, writes with it and lets go; the run notes when. */
    private void takeOver(Setting s, Lease lost) throws InterruptedException {
        RecordedClient successor = s.client(4, fixture.openBackend(), TTL);
        long from = System.nanoTime();
        Optional<Lease> taken = s.write(successor, TckSettings.hangBound());
        s.run.check(
                FaultRun.RECOVERED + " (takeover)",
                taken.isPresent(),
                taken.isPresent()
                        ? "another client took the write grant " + (System.nanoTime() - from) / 1_000_000 + " ms later"
                        : "nobody took the write grant over within " + TckSettings.hangBound());
        taken.ifPresent(l -> {
            successor.write(s.resource, l, l.isValid());
            successor.release(l);
        });
        if (lost != null) {
            await("the stalled holder's write grant to be lost", () -> lost.state() == LeaseState.LOST);
        }
    }

    /** The backend shows none of {@code lost} (grants lost to stalled renewals) as a holder, after those renewals arrived. */
    private void checkNotRevived(FaultRun run, List<Lease> lost) {
        List<String> shown = new ArrayList<>();
        try (LockBackend observer = fixture.openBackend()) {
            for (Lease lease : lost) {
                observer.inspect(lease.name()).stream()
                        .flatMap(i -> i.holders().stream())
                        .filter(h -> h.leaseId().equals(lease.leaseId()))
                        .forEach(h -> shown.add(h.mode() + " grant " + h.leaseId() + " of '" + lease.name() + "'"));
            }
        }
        run.check(
                FaultRun.LOST_GRANT_NOT_REVIVED,
                shown.isEmpty(),
                shown.isEmpty()
                        ? "the late renewals were refused: the backend shows none of the lost grants"
                        : "a renewal that arrived after the grant had expired brought it back: " + shown);
    }

    /** Every write of process 1 made once it no longer believed it held (its zombie writes) was rejected. */
    private static void checkLateWritesFenced(FaultRun run) {
        List<Event> late = run.history().events().stream()
                .filter(e -> e.process() == 1 && e.kind() == Event.Kind.WRITE && e.type() == Event.Type.INVOKE)
                .filter(e -> !e.flag())
                .toList();
        List<Event> accepted = run.history().events().stream()
                .filter(e -> e.kind() == Event.Kind.WRITE && e.type() == Event.Type.OK && e.flag())
                .filter(e -> late.stream().anyMatch(l -> l.opId() == e.opId()))
                .toList();
        run.check(
                FaultRun.LATE_WRITE_FENCED,
                !late.isEmpty() && accepted.isEmpty(),
                late.isEmpty()
                        ? "the holder made no write after its loss"
                        : accepted.isEmpty()
                                ? late.size() + " late write(s) with the lost write grant's token turned away"
                                : "a late write with the lost write grant's token was accepted: " + accepted.get(0));
    }

    // ------------------------------------------------------------------ connection faults

    /** Why the proxy faults cannot run on this fixture, or empty when they can. */
    public Optional<String> proxyUnavailable() {
        return faults.proxyUnavailable();
    }

    /**
     * Answers lost at the SPI (every topology, every round), and {@code proxyFaults} of the proxy's
     * faults where the fixture has a proxy target: taken in turn from an offset that the seed picks
     * and each further round advances, so successive runs (and rounds) cover all of them while a
     * default run stays short. The mutex's properties run under every proxy fault in every run.
     */
    public List<FaultRun> connectionFaults(long seed, int proxyFaults) throws Exception {
        List<FaultScenarios.ProxyFault> taken = new ArrayList<>();
        if (fixture.proxyTarget().isPresent()) {
            int all = FaultScenarios.PROXY_FAULTS.size();
            int offset = Math.floorMod(seed, all) + proxyFaultRounds++ * Math.min(proxyFaults, all);
            for (int i = 0; i < Math.min(proxyFaults, all); i++) {
                taken.add(FaultScenarios.PROXY_FAULTS.get((offset + i) % all));
            }
        }
        return faults.connectionScenarios(taken, (backend, fault) -> connectionScenario(backend, fault, seed));
    }

    /** The names of the proxy's faults, in the order they are taken. */
    public static List<String> proxyFaultNames() {
        return FaultScenarios.PROXY_FAULTS.stream()
                .map(FaultScenarios.ProxyFault::name)
                .toList();
    }

    /**
     * The faulted client holds a permit and the write grant; during the fault it writes while its
     * grant is valid, downgrades halfway and lets its permit go (outcomes it may not learn), and
     * asks blindly for a permit and a read; healthy clients keep working. After the fault heals the
     * faulted client must get grants again, and its read-write grant be renewed (and shown by the
     * backend) or lost.
     */
    private FaultRun connectionScenario(LockBackend faultedBackend, FaultScenarios.ConnectionFault fault, long seed)
            throws Exception {
        try (Setting s = new Setting(fault.name())) {
            RecordedClient faulted = s.client(1, faultedBackend, TTL);
            Lease permit = s.permits(faulted, 1, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            Lease write = s.write(faulted, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            faulted.write(s.resource, write, write.isValid());
            s.startLoad(seed);
            fault.inject().run();
            CompletableFuture<List<Lease>> blind = SideBySide.onOwnThread(
                    () -> {
                        try {
                            List<Lease> got = new ArrayList<>();
                            s.permits(faulted, 1, null).ifPresent(got::add);
                            s.read(faulted, null).ifPresent(got::add);
                            return got;
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return List.of();
                        }
                    },
                    "tck-blind-attempt");
            s.writeWhileValid(faulted, write, TTL.dividedBy(2));
            s.writeEnds.put(write.leaseId(), System.nanoTime());
            try {
                s.readWrite(faulted).downgrade(write);
            } catch (RuntimeException e) {
                s.run.note("downgrade during the fault: " + e.getClass().getSimpleName());
            }
            faulted.release(permit); // an outcome it may not learn either: the engine retries it in the background
            s.writeWhileValid(faulted, write, TTL.multipliedBy(3).dividedBy(2));
            if (fault.leaseCannotSurvive()) {
                takeOver(s, null);
            }
            fault.heal().run();
            long healedAt = System.nanoTime();
            List<Lease> blindGrants = blind.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
            Optional<Lease> again = retry(() -> s.permits(faulted, 1, null), TckSettings.hangBound());
            s.run.check(
                    FaultRun.RECOVERED,
                    again.isPresent(),
                    again.isPresent()
                            ? "a permit granted " + (System.nanoTime() - healedAt) / 1_000_000
                                    + " ms after the fault healed"
                            : "no permit granted within " + TckSettings.hangBound() + " after the fault healed");
            again.ifPresent(faulted::release);
            checkNotAssumed(s, List.of(write));
            if (write.state() == LeaseState.LOST) {
                checkLostSignalled(s.run, 1);
            }
            if (write.state() == LeaseState.HELD) {
                faulted.release(write);
            }
            blindGrants.forEach(faulted::release);
            return s.finish();
        }
    }

    // ------------------------------------------------------------------ crash and restart

    /**
     * The faulted client takes and lets go a write grant (its token is the one to exceed), and holds
     * a permit and the write grant across each restart the fixture allows; right after the recovery
     * a rival asks for every permit and the write grant for half a TTL. A backend that lost its
     * records grants them while the holder believes it holds: the shared properties catch it.
     */
    public List<FaultRun> restarts() throws Exception {
        List<FaultRun> runs = new ArrayList<>();
        for (FaultScenarios.ServerFault fault : faults.serverFaults()) {
            runs.add(restartScenario(fault));
        }
        return runs;
    }

    private FaultRun restartScenario(FaultScenarios.ServerFault fault) throws Exception {
        try (Setting s = new Setting(fault.name())) {
            RecordedClient client = s.client(1, fixture.openBackend(), RESTART_TTL);
            RecordedClient rival = s.client(2, fixture.openBackend(), RESTART_TTL);
            // a write grant of another name taken and let go before the fault: its token is the one to exceed
            String released = names.get();
            ReadWriteLockHandle other = client.client().readWriteLock(released);
            Lease before = client.acquireShared(released, "write", () -> other.write(TckSettings.hangBound()))
                    .orElseThrow(() -> notGranted(s));
            client.release(before);
            Lease permit = s.permits(client, 1, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            Lease write = s.write(client, TckSettings.hangBound()).orElseThrow(() -> notGranted(s));
            client.write(s.resource, write, write.isValid());
            fault.crash().run();
            fault.recover().run();
            long recoveredAt = System.nanoTime();
            List<Lease> rivals = new ArrayList<>();
            long end = recoveredAt + RESTART_TTL.dividedBy(2).toNanos();
            while (System.nanoTime() - end < 0 && rivals.size() < 2) {
                if (rivals.stream().noneMatch(l -> l.mode() == LockMode.PERMITS)) {
                    s.permits(rival, LIMIT, null).ifPresent(rivals::add);
                }
                if (rivals.stream().noneMatch(l -> l.mode() == LockMode.WRITE)) {
                    s.write(rival, null).ifPresent(l -> {
                        rivals.add(l);
                        rival.write(s.resource, l, l.isValid());
                    });
                }
                Thread.sleep(50); // pacing the rival's attempts while it reconnects
            }
            if (write.isValid()) {
                client.write(s.resource, write, true);
            }
            Optional<Lease> after =
                    retry(() -> client.acquireShared(released, "write", other::tryWrite), TckSettings.hangBound());
            s.run.check(
                    FaultRun.RECOVERED,
                    after.isPresent(),
                    after.isPresent()
                            ? "a write grant " + (System.nanoTime() - recoveredAt) / 1_000_000 + " ms after the restart"
                            : "no write grant within " + TckSettings.hangBound() + " after the restart");
            after.ifPresent(l -> s.run.check(
                    FaultRun.TOKENS_MONOTONE,
                    l.fencingToken() > before.fencingToken(),
                    "token " + before.fencingToken() + " before the fault, " + l.fencingToken() + " after it"));
            checkNotAssumed(s, List.of(permit, write));
            after.ifPresent(client::release);
            rivals.forEach(rival::release);
            for (Lease l : List.of(permit, write)) {
                if (l.state() == LeaseState.HELD) {
                    client.release(l);
                }
            }
            return s.finish();
        }
    }

    // ------------------------------------------------------------------ checks shared by the scenarios

    /**
     * Waits until each grant the faulted client held across the fault is renewed after it or lost;
     * one the client still takes as held must be among the backend's holders of its name.
     */
    private void checkNotAssumed(Setting s, List<Lease> leases) throws InterruptedException {
        long since = System.nanoTime();
        List<String> assumed = new ArrayList<>();
        for (Lease lease : leases) {
            await(
                    "a grant held across the fault to be renewed or lost",
                    () -> lease.state() != LeaseState.HELD || renewedSince(s.history, lease, since));
            if (lease.state() == LeaseState.HELD && lease.isValid()) {
                boolean shown;
                try (LockBackend observer = fixture.openBackend()) {
                    shown = observer.inspect(lease.name())
                            .map(i -> i.holders().stream()
                                    .anyMatch(h -> h.leaseId().equals(lease.leaseId())))
                            .orElse(false);
                }
                if (!shown) {
                    assumed.add(lease.mode() + " grant " + lease.leaseId());
                }
            }
        }
        s.run.check(
                FaultRun.LEASE_NOT_ASSUMED,
                assumed.isEmpty(),
                assumed.isEmpty()
                        ? leases.stream()
                                .map(l -> l.mode() + " grant " + l.state())
                                .toList()
                                .toString()
                        : "the client takes as held what the backend does not show: " + assumed);
    }

    private static boolean renewedSince(History history, Lease lease, long since) {
        return history.events().stream()
                .anyMatch(e -> e.kind() == Event.Kind.RENEW
                        && e.type() == Event.Type.OK
                        && lease.leaseId().equals(e.leaseId())
                        && e.timeNanos() - since > 0);
    }

    private static AssertionError notGranted(Setting s) {
        return new AssertionError("a free shared lock was not granted before the fault:\n" + s.history);
    }
}
