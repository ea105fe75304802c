package io.fencelock.tck.fault;

import io.fencelock.Lease;
import io.fencelock.LeaseLostException;
import io.fencelock.LeaseState;
import io.fencelock.LockInfo;
import io.fencelock.LockOptions;
import io.fencelock.spi.LockBackend;
import io.fencelock.tck.BackendFixture;
import io.fencelock.tck.ClientConnection;
import io.fencelock.tck.FencedResource;
import io.fencelock.tck.InstrumentedBackend;
import io.fencelock.tck.RecordedClient;
import io.fencelock.tck.SideBySide;
import io.fencelock.tck.TckSettings;
import io.fencelock.tck.fixture.FixtureSelfCheck;
import io.fencelock.tck.fixture.ReplicaSetControl;
import io.fencelock.tck.fixture.ServerControl;
import io.fencelock.tck.history.Event;
import io.fencelock.tck.history.History;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The fault scenarios of the TCK, each run against the fixture's real server with recorded
 * clients: a holder frozen past its TTL (a child JVM under {@code SIGSTOP}, and an in-process
 * watchdog whose renewals stall), one client's connections broken in the ways a network breaks
 * them (through {@link FaultProxy}, and answers lost at the SPI), and the server stopped, killed
 * and restarted on its data (every member at once, or one follower or the leader of a cluster).
 *
 * <p>A scenario never asserts; it returns a {@link FaultRun} that the properties judge, so that one
 * run of a slow fault (a restart) serves every property it bears on.
 */
public final class FaultScenarios {
    private final BackendFixture fixture;
    private final Supplier<String> names;
    private boolean clientConnectionChecked;

    /** @param names fresh lock names, unused by any other test */
    public FaultScenarios(BackendFixture fixture, Supplier<String> names) {
        this.fixture = fixture;
        this.names = names;
    }

    /** Leases of the pause and connection scenarios: short, so that each fault outlasts several renewals. */
    static final Duration TTL = Duration.ofMillis(1000);
    /** The skewed-clock holders' leases: long enough that a busy machine cannot starve their renewals (4 per hold). */
    static final Duration SKEWED_HOLDER_TTL = Duration.ofSeconds(2);
    /** Leases held across a restart: long enough to survive a quick restart on a backend that keeps its data. */
    static final Duration RESTART_TTL = Duration.ofSeconds(4);

    static LockOptions options(Duration ttl) {
        return LockOptions.builder()
                .ttl(ttl)
                .autoRenew(true)
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(100))
                .build();
    }

    // ------------------------------------------------------------------ holder pauses

    /** Why {@link #holderJvmFrozen()} cannot run on this fixture, or empty when it can. */
    public Optional<String> holderJvmUnavailable() {
        if (fixture.inThisJvmOnly().isPresent()) {
            return fixture.inThisJvmOnly();
        }
        return fixture.clientConnection().isPresent()
                ? Optional.empty()
                : Optional.of("the fixture gives no clientConnection() for a holder in another JVM");
    }

    /**
     * A holder in a child JVM is frozen with SIGSTOP while it holds the lock and writes; another
     * client takes the lock over after the TTL and writes; the holder is thawed. It must learn
     * that it lost the lease (its task cancelled), and its writes must be turned away.
     */
    public FaultRun holderJvmFrozen() throws Exception {
        ClientConnection connection = checkedClientConnection();
        History history = new History();
        FaultRun run = new FaultRun("holder JVM frozen (SIGSTOP) past its TTL", history);
        FencedResource resource = new FencedResource();
        String name = names.get();
        try (HolderJvm holder = HolderJvm.start(connection, HolderJvm.Spec.untilLost(name, TTL, 1), history, resource);
                RecordedClient successor = new RecordedClient(2, history, fixture.openBackend(), options(TTL))) {
            holder.awaitHolding(TckSettings.hangBound());
            holder.awaitWrites(3);
            holder.pause();
            long frozenAt = System.nanoTime();
            Optional<Lease> taken = successor.acquire(name, TckSettings.hangBound());
            run.note("taken over " + (System.nanoTime() - frozenAt) / 1_000_000 + " ms after the freeze");
            taken.ifPresent(lease -> successor.write(resource, lease, lease.isValid()));
            holder.resume();
            boolean finished = holder.awaitDone(TckSettings.hangBound());
            String cancelled = holder.cancelled().getNow(null);
            run.check(
                    FaultRun.TASK_CANCELLED,
                    cancelled != null,
                    cancelled != null
                            ? "runExclusively threw: " + cancelled
                            : "the task was never cancelled" + (finished ? "" : " (the holder JVM did not finish)")
                                    + "\n" + holder.diagnostics());
            checkLostSignalled(run, 1);
            taken.ifPresent(lease -> {
                successor.write(resource, lease, lease.isValid());
                successor.release(lease);
            });
            run.check(
                    FaultRun.RECOVERED,
                    taken.isPresent(),
                    taken.isPresent()
                            ? "another client took the lock over"
                            : "nobody could take the lock over from the frozen holder within "
                                    + TckSettings.hangBound());
        }
        return run;
    }

    /**
     * The holder's watchdog stalls (its renewals hang, as behind a frozen socket) past the TTL;
     * another client takes over; then the stalled renewal reaches the server late and must be
     * refused. The holder's lost signal must come from its own deadline, not from the stuck I/O.
     */
    public FaultRun watchdogStalled() throws Exception {
        History history = new History();
        FaultRun run = new FaultRun("watchdog renewals stalled in-process past the TTL", history);
        FencedResource resource = new FencedResource();
        String name = names.get();
        InstrumentedBackend stalling = new InstrumentedBackend(fixture.openBackend());
        try (RecordedClient holder = new RecordedClient(1, history, stalling, options(TTL));
                RecordedClient successor = new RecordedClient(2, history, fixture.openBackend(), options(TTL))) {
            CompletableFuture<Lease> holding = new CompletableFuture<>();
            CompletableFuture<Throwable> task = CompletableFuture.supplyAsync(() -> {
                try {
                    holder.runExclusively(name, TckSettings.hangBound(), lease -> {
                        holding.complete(lease);
                        while (true) {
                            holder.write(resource, lease, lease.isValid());
                            Thread.sleep(10); // pacing the writes; interrupted when the lease is lost
                        }
                    });
                    return null;
                } catch (Throwable e) {
                    return e;
                } finally {
                    holding.completeExceptionally(new IllegalStateException("the holder never held the lock"));
                }
            });
            Lease lease = holding.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
            await("the holder's first writes", () -> resource.acceptedWrites() >= 3);
            stalling.stallRenewals();
            Optional<Lease> taken = successor.acquire(name, TckSettings.hangBound());
            taken.ifPresent(l -> successor.write(resource, l, l.isValid()));
            stalling.resumeRenewals(); // the stalled renewal now reaches the server, late
            Throwable ended = task.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
            run.check(
                    FaultRun.TASK_CANCELLED,
                    ended instanceof LeaseLostException,
                    ended instanceof LeaseLostException
                            ? "runExclusively threw " + ended.getMessage()
                            : "the task ended with " + ended);
            checkLostSignalled(run, 1);
            holder.write(resource, lease, false); // the zombie's write, with its old token
            taken.ifPresent(l -> {
                successor.write(resource, l, l.isValid());
                successor.release(l);
            });
            run.check(
                    FaultRun.RECOVERED,
                    taken.isPresent(),
                    taken.isPresent()
                            ? "another client took the lock over"
                            : "nobody could take the lock over from the stalled holder within "
                                    + TckSettings.hangBound());
        } finally {
            stalling.resumeRenewals();
        }
        return run;
    }

    /** The fixture's client connection, once checked to open the same backend as {@link BackendFixture#openBackend()}. */
    ClientConnection checkedClientConnection() {
        if (!clientConnectionChecked) {
            FixtureSelfCheck.clientConnectionOpensTheSameBackend(fixture);
            clientConnectionChecked = true;
        }
        return fixture.clientConnection().orElseThrow();
    }

    // ------------------------------------------------------------------ clocks

    /** Why {@link #skewedWallClocks()} cannot run here, or empty when it can. */
    public Optional<String> skewedClocksUnavailable() {
        if (fixture.clientConnection().isEmpty()) {
            return holderJvmUnavailable();
        }
        return HolderJvm.faketime().isPresent()
                ? Optional.empty()
                : Optional.of("faketime is not installed (Debian package faketime; scripts/test-all.sh installs it)");
    }

    /**
     * Two holders in child JVMs whose wall clocks are two hours ahead and two hours behind the
     * server's hold the lock in turn, each for one and a half TTLs (four renewals), while a client on the true clock keeps
     * trying to take it. Only server time and the monotonic clock may matter: the skewed holders
     * keep their leases to the end, the rival never gets in, and the tokens rise.
     */
    public FaultRun skewedWallClocks() throws Exception {
        ClientConnection connection = checkedClientConnection();
        History history = new History();
        FaultRun run = new FaultRun("holders' wall clocks 2 h ahead and 2 h behind (faketime)", history);
        FencedResource resource = new FencedResource();
        String name = names.get();
        List<String> lostHolds = new ArrayList<>();
        try (RecordedClient rival = new RecordedClient(3, history, fixture.openBackend(), options(SKEWED_HOLDER_TTL))) {
            int process = 1;
            for (String offset : List.of("+2h", "-2h")) {
                HolderJvm.Spec spec = new HolderJvm.Spec(
                        name,
                        SKEWED_HOLDER_TTL,
                        process++,
                        SKEWED_HOLDER_TTL.multipliedBy(3).dividedBy(2),
                        offset);
                try (HolderJvm holder = HolderJvm.start(connection, spec, history, resource)) {
                    holder.awaitHolding(TckSettings.hangBound());
                    while (!holder.finished().isDone()) {
                        rival.acquire(name, null).ifPresent(stolen -> {
                            rival.write(resource, stolen, stolen.isValid());
                            rival.release(stolen);
                        });
                        Thread.sleep(50); // pacing the rival's attempts
                    }
                    if (!holder.finished().get() || !holder.awaitDone(TckSettings.hangBound())) {
                        lostHolds.add(offset + ": " + holder.cancelled().getNow(null) + "\n" + holder.diagnostics());
                    }
                }
            }
        }
        run.check(
                FaultRun.HELD_THROUGHOUT,
                lostHolds.isEmpty(),
                lostHolds.isEmpty()
                        ? "both skewed holders kept their leases for 1.5 TTLs (renewed 4 times) and released"
                        : "lost or failed: " + lostHolds);
        return run;
    }

    // ------------------------------------------------------------------ connection faults

    /** One way a client's connection breaks: applied to the client's backend, then healed. */
    record ConnectionFault(String name, boolean leaseCannotSurvive, Runnable inject, Runnable heal) {}

    /** A fault injected through a {@link FaultProxy}: named before any proxy exists. */
    record ProxyFault(
            String name, boolean leaseCannotSurvive, java.util.function.Function<FaultProxy, Runnable> inject) {
        ConnectionFault on(FaultProxy proxy) {
            return new ConnectionFault(name, leaseCannotSurvive, inject.apply(proxy), proxy::heal);
        }
    }

    /** The faults injected through {@link FaultProxy}, each on a fresh proxy. */
    static final List<ProxyFault> PROXY_FAULTS = List.of(
            new ProxyFault("responses dropped, requests delivered (proxy)", true, p -> p::dropResponses),
            new ProxyFault("blackhole, sockets left open (proxy)", true, p -> p::blackhole),
            new ProxyFault("connections reset (proxy)", false, p -> p::reset),
            new ProxyFault("connections refused (proxy)", true, p -> p::refuse),
            new ProxyFault(
                    "latency of 0.6 TTL each way (proxy)",
                    true,
                    p -> () -> p.latency(TTL.multipliedBy(6).dividedBy(10))));

    /** The fault that loses the answers of {@code losing}'s calls after the backend acted. */
    static ConnectionFault lostAnswers(InstrumentedBackend losing) {
        return new ConnectionFault(
                "answers lost after the backend acted (SPI)",
                true,
                () -> losing.loseAnswers(true),
                () -> losing.loseAnswers(false));
    }

    /**
     * Every connection fault this fixture allows, each in its own scenario: answers lost after the
     * backend acted (at the SPI, on every topology), and, through {@link FaultProxy} where the
     * fixture has a {@link BackendFixture#proxyTarget()}, dropped responses, a blackhole, reset and
     * refused connections, and latency beyond the TTL.
     */
    public List<FaultRun> connectionFaults() throws Exception {
        if (fixture.proxyTarget().isPresent()) {
            FixtureSelfCheck.openBackendViaGoesThroughVia(fixture);
        }
        return connectionScenarios(PROXY_FAULTS, this::connectionScenario);
    }

    /** One connection-fault scenario: the faulted client's backend and the fault to inject and heal. */
    interface ConnectionScenario {
        FaultRun run(LockBackend faultedBackend, ConnectionFault fault) throws Exception;
    }

    /**
     * {@code scenario} under answers lost at the SPI, and under each of {@code proxyFaults} through a proxy
     * of its own where the fixture has a proxy target, side by side ({@link TckSettings#parallelFaults()}):
     * each has its own proxy, clients, names and history, and mostly sleeps through its fault.
     */
    List<FaultRun> connectionScenarios(List<ProxyFault> proxyFaults, ConnectionScenario scenario) throws Exception {
        List<Callable<FaultRun>> scenarios = new ArrayList<>();
        scenarios.add(() -> {
            InstrumentedBackend losing = new InstrumentedBackend(fixture.openBackend());
            return scenario.run(losing, lostAnswers(losing));
        });
        Optional<InetSocketAddress> target = fixture.proxyTarget();
        for (ProxyFault fault : target.isPresent() ? proxyFaults : List.<ProxyFault>of()) {
            scenarios.add(() -> {
                try (FaultProxy proxy = FaultProxy.start(target.get())) {
                    return scenario.run(fixture.openBackendVia(proxy.address()), fault.on(proxy));
                }
            });
        }
        return SideBySide.run(scenarios, TckSettings.parallelFaults(), "tck-connection-fault");
    }

    /** Why the proxy faults cannot run on this fixture, or empty when they can. */
    public Optional<String> proxyUnavailable() {
        return fixture.proxyTarget().isPresent()
                ? Optional.empty()
                : Optional.of("the fixture gives no proxyTarget() (its clients cannot be routed through one address)");
    }

    /**
     * Client 1, whose connections suffer the fault, holds a lock and writes while it believes it
     * holds it, and tries another lock during the fault (an outcome it cannot know); client 2, on
     * a healthy connection, competes for both. After the fault heals, client 1 must recover by
     * itself, and its lease must be renewed or declared lost, never silently assumed.
     */
    private FaultRun connectionScenario(LockBackend faultedBackend, ConnectionFault fault) throws Exception {
        History history = new History();
        FaultRun run = new FaultRun(fault.name(), history);
        FencedResource held = new FencedResource();
        FencedResource contested = new FencedResource();
        String heldName = names.get();
        String contestedName = names.get();
        try (RecordedClient faulted = new RecordedClient(1, history, faultedBackend, options(TTL));
                RecordedClient healthy = new RecordedClient(2, history, fixture.openBackend(), options(TTL))) {
            Lease lease = faulted.acquire(heldName, TckSettings.hangBound())
                    .orElseThrow(() -> new AssertionError("a free lock was not granted before the fault:\n" + history));
            faulted.write(held, lease, lease.isValid());
            fault.inject().run();
            long injectedAt = System.nanoTime();
            CompletableFuture<Optional<Lease>> blindAttempt = SideBySide.onOwnThread(
                    () -> {
                        try {
                            return faulted.acquire(contestedName, null);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return Optional.empty();
                        }
                    },
                    "tck-blind-attempt");
            // the faulted holder keeps working while it believes it holds the lock
            while (System.nanoTime() - injectedAt < TTL.multipliedBy(2).toNanos()) {
                if (lease.isValid()) {
                    faulted.write(held, lease, true);
                }
                Thread.sleep(20); // pacing the holder's writes
            }
            Optional<Lease> takeover =
                    healthy.acquire(heldName, fault.leaseCannotSurvive() ? TckSettings.hangBound() : null);
            takeover.ifPresent(l -> healthy.write(held, l, l.isValid()));
            faulted.write(held, lease, lease.isValid());
            Optional<Lease> contestedLease = healthy.acquire(contestedName, TTL.multipliedBy(3));
            contestedLease.ifPresent(l -> healthy.write(contested, l, l.isValid()));
            fault.heal().run();
            long healedAt = System.nanoTime();
            Optional<Lease> blind = blindAttempt.get(TckSettings.hangBound().toMillis(), TimeUnit.MILLISECONDS);
            blind.ifPresent(l -> faulted.write(contested, l, l.isValid()));
            if (fault.leaseCannotSurvive()) {
                run.check(
                        FaultRun.RECOVERED + " (takeover)",
                        takeover.isPresent(),
                        takeover.isPresent()
                                ? "the healthy client took the lock over"
                                : "the healthy client never got the faulted client's lock");
            }
            checkRecovered(run, faulted, healedAt);
            checkNotAssumed(run, lease, healthy);
            if (lease.state() == LeaseState.LOST) {
                checkLostSignalled(run, 1);
            }
            takeover.ifPresent(healthy::release);
            contestedLease.ifPresent(healthy::release);
            blind.ifPresent(faulted::release);
            if (lease.state() == LeaseState.HELD) {
                faulted.release(lease);
            }
        }
        return run;
    }

    // ------------------------------------------------------------------ crash and restart

    /** A crash of the backend (or part of it) and the recovery from it; both block until done. */
    record ServerFault(String name, Runnable crash, Runnable recover) {}

    /** Why the restart faults cannot run on this fixture, or empty when they can. */
    public Optional<String> restartUnavailable() {
        return fixture.control().isPresent() || fixture.replicaSet().isPresent()
                ? Optional.empty()
                : Optional.of("the fixture gives no control() or replicaSet() to stop and restart its server");
    }

    /**
     * Graceful stop and restart, and kill -9 and restart, of the whole backend; for a replicated
     * one also a follower and then the leader killed and restarted, with clients working meanwhile.
     */
    public List<FaultRun> restarts() throws Exception {
        List<FaultRun> runs = new ArrayList<>();
        for (ServerFault fault : serverFaults()) {
            runs.add(restartScenario(fault));
        }
        return runs;
    }

    /** The restarts this fixture allows: the whole backend's, and a follower's and the leader's of a cluster. */
    List<ServerFault> serverFaults() {
        List<ServerFault> faults = new ArrayList<>();
        fixture.control().ifPresent(c -> {
            faults.add(new ServerFault("graceful stop and restart", c::stop, c::start));
            faults.add(new ServerFault("kill -9 and restart", c::kill, c::start));
        });
        fixture.replicaSet().ifPresent(rs -> {
            AtomicReference<ServerControl> victim = new AtomicReference<>();
            faults.add(new ServerFault(
                    "follower killed, then restarted",
                    () -> {
                        victim.set(rs.follower().orElseThrow(() -> new IllegalStateException("no follower to kill")));
                        victim.get().kill();
                    },
                    () -> restartMember(rs, victim.get())));
            faults.add(new ServerFault(
                    "leader killed, then restarted",
                    () -> {
                        victim.set(rs.leader().orElseThrow(() -> new IllegalStateException("no leader to kill")));
                        victim.get().kill();
                    },
                    () -> restartMember(rs, victim.get())));
        });
        return faults;
    }

    private static void restartMember(ReplicaSetControl rs, ServerControl member) {
        rs.awaitHealthy(
                TckSettings.hangBound()); // the rest of the cluster serves meanwhile (with a new leader if needed)
        member.start();
        rs.awaitHealthy(TckSettings.hangBound());
    }

    /**
     * Client 1 takes a lock and releases it (its token is the one to exceed), and holds another
     * across the fault; right after the recovery client 2 tries the held lock once; client 1 must
     * then recover by itself, its lease be renewed or lost, and a new grant exceed the old token.
     */
    private FaultRun restartScenario(ServerFault fault) throws Exception {
        History history = new History();
        FaultRun run = new FaultRun(fault.name(), history);
        String releasedName = names.get();
        String heldName = names.get();
        FencedResource resource = new FencedResource();
        try (RecordedClient client = new RecordedClient(1, history, fixture.openBackend(), options(RESTART_TTL));
                RecordedClient other = new RecordedClient(2, history, fixture.openBackend(), options(RESTART_TTL))) {
            Lease before = client.acquire(releasedName, TckSettings.hangBound())
                    .orElseThrow(() -> new AssertionError("not granted:\n" + history));
            client.release(before);
            Lease lease = client.acquire(heldName, TckSettings.hangBound())
                    .orElseThrow(() -> new AssertionError("not granted:\n" + history));
            client.write(resource, lease, lease.isValid());
            fault.crash().run();
            fault.recover().run();
            long recoveredAt = System.nanoTime();
            // a rival keeps trying for half the holder's TTL: a backend that kept its records refuses it
            // (the holder still renews), one that lost them grants it while the holder believes it holds
            Optional<Lease> rival = retryAcquire(other, heldName, RESTART_TTL.dividedBy(2));
            rival.ifPresent(l -> other.write(resource, l, l.isValid()));
            if (lease.isValid()) {
                client.write(resource, lease, true);
            }
            Optional<Lease> after = retryAcquire(client, releasedName, TckSettings.hangBound());
            run.check(
                    FaultRun.RECOVERED,
                    after.isPresent(),
                    after.isPresent()
                            ? "acquired again " + (System.nanoTime() - recoveredAt) / 1_000_000
                                    + " ms after the restart"
                            : "no acquire succeeded within " + TckSettings.hangBound() + " after the restart");
            after.ifPresent(l -> run.check(
                    FaultRun.TOKENS_MONOTONE,
                    l.fencingToken() > before.fencingToken(),
                    "token " + before.fencingToken() + " before the fault, " + l.fencingToken() + " after it"));
            // the lease held across the fault: wait until the watchdog renewed it after the restart, or it was lost
            await(
                    "the lease held across the fault to be renewed or lost",
                    () -> lease.state() != LeaseState.HELD || renewedSince(history, lease, recoveredAt));
            checkNotAssumed(run, lease, other);
            if (lease.state() == LeaseState.LOST) {
                checkLostSignalled(run, 1);
            }
            after.ifPresent(client::release);
            rival.ifPresent(other::release);
            if (lease.state() == LeaseState.HELD) {
                client.release(lease);
            }
        }
        return run;
    }

    // ------------------------------------------------------------------ checks shared by the scenarios

    /** Makes an attempt every 50 ms until one succeeds or {@code bound} passes. */
    private static Optional<Lease> retryAcquire(RecordedClient client, String name, Duration bound)
            throws InterruptedException {
        return retry(() -> client.acquire(name, null), bound);
    }

    /** Makes {@code attempt} every 50 ms until one succeeds or {@code bound} passes. */
    static Optional<Lease> retry(RecordedClient.SharedAttempt attempt, Duration bound) throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() - end < 0) {
            Optional<Lease> got = attempt.run();
            if (got.isPresent()) {
                return got;
            }
            Thread.sleep(50); // pacing the attempts while the client reconnects
        }
        return Optional.empty();
    }

    private static void checkRecovered(FaultRun run, RecordedClient client, long healedAt) throws InterruptedException {
        String fresh = "recovery-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        Optional<Lease> got = retryAcquire(client, fresh, TckSettings.hangBound());
        run.check(
                FaultRun.RECOVERED,
                got.isPresent(),
                got.isPresent()
                        ? "acquired a fresh lock " + (System.nanoTime() - healedAt) / 1_000_000
                                + " ms after the fault healed"
                        : "no acquire succeeded within " + TckSettings.hangBound() + " after the fault healed");
        got.ifPresent(client::release);
    }

    /** A lease the client still takes as held must be the backend's holder of its lock. */
    private static void checkNotAssumed(FaultRun run, Lease lease, RecordedClient observer) {
        if (lease.state() != LeaseState.HELD || !lease.isValid()) {
            run.check(FaultRun.LEASE_NOT_ASSUMED, true, "lease " + lease.state());
            return;
        }
        Optional<LockInfo> info = observer.client().inspect(lease.name());
        boolean holds =
                info.map(i -> i.held() && lease.leaseId().equals(i.leaseId())).orElse(false);
        run.check(
                FaultRun.LEASE_NOT_ASSUMED,
                holds,
                holds
                        ? "renewed, and the backend shows it as the holder"
                        : "the client takes its lease as valid but the backend shows "
                                + info.map(Object::toString).orElse("no record"));
    }

    /** A lease of {@code process} was signalled lost; the detail says how long after its last local deadline. */
    static void checkLostSignalled(FaultRun run, int process) throws InterruptedException {
        BooleanSupplier signalled = () ->
                run.history().events().stream().anyMatch(e -> e.process() == process && e.kind() == Event.Kind.LOST);
        try {
            await("the lost signal", signalled);
        } catch (AssertionError e) {
            run.check(
                    FaultRun.LOST_SIGNALLED,
                    false,
                    "no lost signal within " + TckSettings.hangBound() + " of the lease's end");
            return;
        }
        List<Event> events = run.history().events();
        Event lost = events.stream()
                .filter(e -> e.process() == process && e.kind() == Event.Kind.LOST)
                .findFirst()
                .orElseThrow();
        long deadline = events.stream()
                .filter(e -> lost.leaseId().equals(e.leaseId()) && e.deadlineNanos() != 0)
                .mapToLong(Event::deadlineNanos)
                .max()
                .orElse(lost.timeNanos());
        run.check(
                FaultRun.LOST_SIGNALLED,
                true,
                String.format(
                        java.util.Locale.ROOT,
                        "lost signal %.1f ms after the lease's local deadline",
                        (lost.timeNanos() - deadline) / 1e6));
    }

    private static boolean renewedSince(History history, Lease lease, long since) {
        return history.events().stream()
                .anyMatch(e -> e.kind() == Event.Kind.RENEW
                        && e.type() == Event.Type.INVOKE
                        && lease.leaseId().equals(e.leaseId())
                        && e.timeNanos() - since > 0);
    }

    /** Waits for a condition, bounded only to stop a hang. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TckSettings.hangBound().toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out after " + TckSettings.hangBound() + " waiting for " + what);
            }
            Thread.sleep(5); // polling the condition
        }
    }
}
