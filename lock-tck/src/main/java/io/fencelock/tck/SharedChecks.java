package io.fencelock.tck;

import static io.fencelock.tck.LockBackendContract.awaitCondition;

import io.fencelock.Lease;
import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.LockMode;
import io.fencelock.LockOptions;
import io.fencelock.LockRequest;
import io.fencelock.ReadWriteLockHandle;
import io.fencelock.SemaphoreHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The properties of semaphores and read-write locks ({@code SHARED_LOCKS}) and fair waiting
 * ({@code FAIR_ORDER}), on real threads and clients of one backend. Random schedules record every
 * grant as a hold (see {@link Hold}) and are judged afterwards; the targeted checks drive one
 * situation each and judge what the clients saw. Each check throws an {@link AssertionError} naming
 * its property and, for random schedules, the seed ({@code -Dfencelock.tck.seed} replays it).
 * Used by {@link LockBackendContract} on every backend that claims the capability, and directly on
 * deliberately flawed backends to show that the checks catch them.
 */
public final class SharedChecks implements AutoCloseable {
    static final int THREADS_PER_CLIENT = 2;
    private static final int CLIENTS = 3;
    private static final int STEPS = 8;

    private final BackendFixture fixture;
    private final Supplier<String> freshName;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    public SharedChecks(BackendFixture fixture, Supplier<String> freshName) {
        this.fixture = fixture;
        this.freshName = freshName;
    }

    /**
     * One grant as the clients saw it, in {@link System#nanoTime()}: the acquire call's invocation,
     * its return with the grant, the end of the write right ({@code writeEnd}: the downgrade's
     * invocation, or {@code end}), and the end of the certain hold ({@code end}: the earlier of the
     * release's invocation and a lower bound of the lease's local validity deadline).
     */
    public record Hold(
            String leaseId,
            LockMode mode,
            int permits,
            long token,
            long invoked,
            long granted,
            long writeEnd,
            long end) {
        boolean overlaps(Hold o, long myEnd, long theirEnd) {
            return granted < theirEnd && o.granted < myEnd;
        }
    }

    // ------------------------------------------------------------------ random schedules

    /** A semaphore of {@code limit} permits under random requests, TTLs, renewal, holds past the TTL and releases. */
    public List<Hold> randomPermits(long seed, int limit) throws Exception {
        String name = freshName.get();
        return runSchedule(seed, (client, random) -> {
            SemaphoreHandle semaphore = client.semaphore(name, limit);
            int k = 1 + random.nextInt(limit);
            Duration ttl = Duration.ofMillis(150 + random.nextInt(250));
            SemaphoreHandle h = semaphore.withTtl(ttl).withAutoRenew(random.nextInt(3) > 0);
            return new Request(wait -> h.acquire(k, wait), ttl, null);
        });
    }

    /** A read-write lock under random readers and writers, some of which downgrade halfway. */
    public List<Hold> randomReadWrite(long seed) throws Exception {
        String name = freshName.get();
        return runSchedule(seed, (client, random) -> {
            Duration ttl = Duration.ofMillis(150 + random.nextInt(250));
            ReadWriteLockHandle rw = client.readWriteLock(name).withTtl(ttl).withAutoRenew(random.nextInt(3) > 0);
            boolean write = random.nextInt(10) < 3;
            return new Request(
                    wait -> write ? rw.write(wait) : rw.read(wait), ttl, write && random.nextBoolean() ? rw : null);
        });
    }

    private interface Acquire {
        Optional<Lease> acquire(Duration wait) throws InterruptedException;
    }

    /** One step's request; {@code downgradeBy} set: downgrade halfway through the hold. */
    private record Request(Acquire acquire, Duration ttl, ReadWriteLockHandle downgradeBy) {}

    private interface RequestMaker {
        Request make(LockClient client, Random random);
    }

    /**
     * A mutex under random TTLs, renewal, holds past the TTL and releases, by {@link #THREADS_PER_CLIENT}
     * threads of each of {@code clients} clients from {@code open} (closed afterwards): a holder's release
     * with a waiter of its own client is a hand-over where the backend claims it. Grants and releases that
     * fail (an injected fault) count as not granted and as let go.
     */
    public List<Hold> randomMutex(long seed, List<LockClient> clients) throws Exception {
        String name = freshName.get();
        return runSchedule(seed, clients, (client, random) -> {
            Duration ttl = Duration.ofMillis(150 + random.nextInt(250));
            LockRequest request = client.lock(name).ttl(ttl).autoRenew(random.nextInt(3) > 0);
            return new Request(request::acquire, ttl, null);
        });
    }

    private List<Hold> runSchedule(long seed, RequestMaker maker) throws Exception {
        List<LockClient> own = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            own.add(client());
        }
        return runSchedule(seed, own, maker);
    }

    private List<Hold> runSchedule(long seed, List<LockClient> own, RequestMaker maker) throws Exception {
        int clientCount = own.size();
        List<Hold> holds = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clientCount * THREADS_PER_CLIENT);
        try {
            List<Future<?>> tasks = new ArrayList<>();
            for (int t = 0; t < clientCount * THREADS_PER_CLIENT; t++) {
                LockClient client = own.get(t % clientCount);
                Random random = new Random(seed * 31 + t);
                tasks.add(pool.submit(() -> {
                    for (int step = 0; step < STEPS; step++) {
                        Request r = maker.make(client, random);
                        long invoked = System.nanoTime();
                        Optional<Lease> got;
                        try {
                            got = r.acquire().acquire(Duration.ofSeconds(2));
                        } catch (LockBackendException faulted) {
                            got = Optional.empty(); // an injected fault: not known to hold
                        }
                        if (got.isEmpty()) {
                            continue;
                        }
                        Lease lease = got.get();
                        long granted = System.nanoTime();
                        long token = lease.fencingToken();
                        // a lower bound of the local validity deadline: read the clock, then the time left
                        long bound = granted + lease.remainingValidity().toNanos();
                        // sometimes past the TTL: an unrenewed lease then ends at its deadline
                        long holdMillis = random.nextInt((int) (r.ttl().toMillis() * 13 / 10));
                        long writeEnd = Long.MAX_VALUE;
                        if (r.downgradeBy() != null) {
                            sleepMillis(holdMillis / 2);
                            writeEnd = System.nanoTime();
                            if (r.downgradeBy().downgrade(lease)) {
                                long now = System.nanoTime(); // the downgrade renewed: a later bound
                                bound = Math.max(
                                        bound, now + lease.remainingValidity().toNanos());
                            }
                            sleepMillis(holdMillis / 2);
                        } else {
                            sleepMillis(holdMillis);
                        }
                        long releasing = System.nanoTime();
                        long end = lease.isValid() ? releasing : Math.min(releasing, bound);
                        try {
                            lease.release();
                        } catch (LockBackendException faulted) {
                            // an injected fault: the engine releases in the background; the hold ended here
                        }
                        holds.add(new Hold(
                                lease.leaseId(),
                                r.downgradeBy() != null ? LockMode.WRITE : lease.mode(),
                                lease.permits(),
                                token,
                                invoked,
                                granted,
                                Math.min(writeEnd, end),
                                end));
                    }
                    return null;
                }));
            }
            for (Future<?> f : tasks) {
                f.get(TckSettings.hangBound().toSeconds() * STEPS, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            own.forEach(this::closeClient);
        }
        return holds;
    }

    // ------------------------------------------------------------------ judging histories

    public static final String PERMITS_NEVER_EXCEEDED = "permitsNeverExceeded";
    public static final String WRITERS_EXCLUDE_EVERYONE = "writersExcludeEveryone";
    public static final String SHARED_TOKENS_RESPECT_REAL_TIME_ORDER = "sharedTokensRespectRealTimeOrder";

    /** The properties judged on the grants of a semaphore and of a read-write lock, also under faults. */
    public static final List<String> PROPERTIES =
            List.of(PERMITS_NEVER_EXCEEDED, WRITERS_EXCLUDE_EVERYONE, SHARED_TOKENS_RESPECT_REAL_TIME_ORDER);

    /** One of {@link #PROPERTIES} judged on a semaphore's grants (of {@code limit} permits) and a read-write lock's. */
    public static List<String> violations(
            String property, int limit, List<Hold> permitHolds, List<Hold> readWriteHolds) {
        List<String> out = new ArrayList<>();
        switch (property) {
            case PERMITS_NEVER_EXCEEDED -> out.addAll(permitsExceeded(permitHolds, limit));
            case WRITERS_EXCLUDE_EVERYONE -> out.addAll(writerOverlaps(readWriteHolds));
            case SHARED_TOKENS_RESPECT_REAL_TIME_ORDER -> {
                out.addAll(tokenOrderViolations(permitHolds));
                out.addAll(tokenOrderViolations(readWriteHolds));
            }
            default -> throw new IllegalArgumentException("no shared property named " + property);
        }
        return out;
    }

    /** permitsNeverExceeded: at no instant do certain holds take more than {@code limit} permits together. */
    public static List<String> permitsExceeded(List<Hold> holds, int limit) {
        List<String> out = new ArrayList<>();
        List<Hold> judged = holds.stream().filter(h -> h.end() > h.granted()).toList();
        List<long[]> points = new ArrayList<>(); // time, +permits / -permits (ends sort before starts), hold index
        for (int i = 0; i < judged.size(); i++) {
            Hold h = judged.get(i);
            points.add(new long[] {h.granted(), h.permits(), i});
            points.add(new long[] {h.end(), -h.permits(), i});
        }
        points.sort(Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[1]));
        long held = 0;
        java.util.Set<Integer> holding = new java.util.LinkedHashSet<>();
        for (long[] p : points) {
            held += p[1];
            if (p[1] > 0) {
                holding.add((int) p[2]);
            } else {
                holding.remove((int) p[2]);
            }
            if (held > limit) {
                long origin = judged.stream().mapToLong(Hold::invoked).min().orElse(0);
                StringBuilder which = new StringBuilder();
                for (int i : holding) {
                    Hold h = judged.get(i);
                    which.append("\n  lease ")
                            .append(h.leaseId())
                            .append(" token ")
                            .append(h.token())
                            .append(" asked at ")
                            .append((h.invoked() - origin) / 1_000)
                            .append(" µs, granted at ")
                            .append((h.granted() - origin) / 1_000)
                            .append(" µs, certain until ")
                            .append((h.end() - origin) / 1_000)
                            .append(" µs");
                }
                out.add(held + " permits held together at once, of " + limit + ":" + which);
                break;
            }
        }
        return out;
    }

    /** writersExcludeEveryone: a certain write hold overlaps no certain hold of another lease. */
    public static List<String> writerOverlaps(List<Hold> holds) {
        List<String> out = new ArrayList<>();
        for (Hold w : holds) {
            if (w.mode() != LockMode.WRITE) {
                continue;
            }
            for (Hold o : holds) {
                if (o != w && w.overlaps(o, w.writeEnd(), o.end())) {
                    out.add("writer " + w.leaseId() + " (token " + w.token() + ") overlaps " + o.mode() + " "
                            + o.leaseId() + " (token " + o.token() + ")");
                    return out;
                }
            }
        }
        return out;
    }

    /** sharedTokensRespectRealTimeOrder: a grant asked for after another grant completed has a higher token. */
    public static List<String> tokenOrderViolations(List<Hold> holds) {
        List<String> out = new ArrayList<>();
        for (Hold a : holds) {
            for (Hold b : holds) {
                if (a != b && a.granted() < b.invoked() && b.token() <= a.token()) {
                    out.add("grant " + b.leaseId() + " asked after " + a.leaseId() + " was granted has token "
                            + b.token() + " <= " + a.token());
                    return out;
                }
            }
        }
        return out;
    }

    /** Throws when {@code violations} is not empty, naming the property and the seed. */
    public static void require(String property, long seed, List<String> violations, List<Hold> holds) {
        if (!violations.isEmpty()) {
            throw new AssertionError("property " + property + " failed (replay with -Dfencelock.tck.seed=" + seed
                    + "): " + violations + "\n" + holds.size() + " grants judged");
        }
    }

    // ------------------------------------------------------------------ targeted checks

    /**
     * waitingWriterIsNotStarved: readers of several clients hold in a relay (each lets go only once the
     * next holds, or after a bound when the next cannot get in), so the name is never free while readers
     * keep being admitted; a writer that waits must still be granted within its wait. Also: a refused
     * {@code tryWrite} leaves no intent behind, and a writer that gave up holds no reader back.
     */
    public void waitingWriterIsNotStarved() throws Exception {
        String name = freshName.get();
        List<LockClient> readers = List.of(client(), client(), client());
        LockClient writerClient = client();
        ReadWriteLockHandle writer = writerClient.readWriteLock(name);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong readsDuringWait = new AtomicLong();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Lease first = readers.get(0)
                    .readWriteLock(name)
                    .read(TckSettings.hangBound())
                    .orElseThrow();
            assertThat(writer.tryWrite().isEmpty(), "a writer is refused while a reader holds");
            assertThat(
                    readers.get(1)
                            .readWriteLock(name)
                            .tryRead()
                            .map(Lease::release)
                            .orElse(false),
                    "a refused tryWrite leaves no intent: a new reader still gets in");
            assertThat(writer.write(Duration.ofMillis(30)).isEmpty(), "a writer times out while a reader holds");
            Lease late = readers.get(1)
                    .readWriteLock(name)
                    .read(TckSettings.hangBound())
                    .orElse(null);
            assertThat(late != null, "a writer that gave up holds no reader back once its intent is withdrawn");
            late.release();
            Future<?> relay = pool.submit(() -> {
                Lease current = first;
                int i = 0;
                while (!stop.get()) {
                    i++;
                    ReadWriteLockHandle next = readers.get(i % readers.size()).readWriteLock(name);
                    Optional<Lease> taken = next.read(Duration.ofMillis(150));
                    current.release();
                    if (taken.isEmpty()) {
                        return null; // the writer's intent held the next reader back: the relay ends
                    }
                    readsDuringWait.incrementAndGet();
                    current = taken.get();
                }
                current.release();
                return null;
            });
            // let the relay run a few hand-overs first, so the writer meets readers that keep coming
            awaitCondition("the relay of readers", () -> readsDuringWait.get() >= 3);
            Optional<Lease> written = writer.write(Duration.ofSeconds(5));
            stop.set(true);
            relay.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
            assertThat(
                    written.isPresent(),
                    "waitingWriterIsNotStarved: a writer waiting 5 s was never granted while readers kept coming ("
                            + readsDuringWait.get() + " reads admitted)");
            written.get().release();
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    /**
     * downgradeLeavesNoGap: a writer downgrades while another client tries to write as fast as it can;
     * no such write is granted before the downgraded reader released; the lease keeps its id and
     * token and reads as READ on the backend; a reader of another client gets in after the downgrade.
     */
    public void downgradeLeavesNoGap(int rounds) throws Exception {
        String name = freshName.get();
        LockClient a = client();
        LockClient b = client();
        ReadWriteLockHandle mine = a.readWriteLock(name);
        ReadWriteLockHandle theirs = b.readWriteLock(name);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < rounds; round++) {
                Lease write = mine.write(TckSettings.hangBound())
                        .orElseThrow(() -> new AssertionError("a free lock not granted"));
                long token = write.fencingToken();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong grantedAt = new AtomicLong();
                Future<?> hammer = pool.submit(() -> {
                    while (!stop.get()) {
                        Optional<Lease> w = theirs.tryWrite();
                        if (w.isPresent()) {
                            grantedAt.set(System.nanoTime());
                            w.get().release();
                            return;
                        }
                    }
                });
                assertThat(mine.downgrade(write), "downgradeLeavesNoGap: the downgrade of a held write lease");
                assertThat(write.mode() == LockMode.READ, "downgradeLeavesNoGap: the lease reads as READ");
                assertThat(write.fencingToken() == token, "downgradeLeavesNoGap: the token stays");
                assertThat(
                        a.inspect(name).orElseThrow().holders().stream()
                                .anyMatch(h -> h.leaseId().equals(write.leaseId()) && h.mode() == LockMode.READ),
                        "downgradeLeavesNoGap: the backend shows the lease as a reader");
                Optional<Lease> reader = theirs.tryRead();
                assertThat(reader.isPresent(), "downgradeLeavesNoGap: a reader gets in after the downgrade");
                reader.get().release();
                long releasing = System.nanoTime();
                write.release();
                hammer.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
                stop.set(true);
                assertThat(
                        grantedAt.get() - releasing > 0,
                        "downgradeLeavesNoGap: another writer was granted before the downgraded lease let go");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * renewalKeepsEveryKindOfGrant: the watchdog keeps every kind of grant, together in its batches. A
     * mutex, a reader, a writer, a semaphore's permits and (with {@code fair}) a fair mutex of one client
     * stay valid past twice their TTL while a rival client is refused on each name, each then renews by
     * hand, and once they are released the rival is granted each name at once. A renewal and a release say
     * which call granted the lease ({@code GrantKind}): a backend that looked for a lease in the wrong place
     * would lose it, or fail to free it, here.
     */
    public void renewalKeepsEveryKindOfGrant(boolean fair) throws Exception {
        // room for stalls, as renewExtendsExclusivity's: the watchdog renews at a third of it
        Duration ttl = Duration.ofMillis(1500);
        LockClient holder = register(LockClient.create(fixture.openBackend(), options(ttl))); // renews by default
        LockClient rival = client();
        String mutex = freshName.get();
        String read = freshName.get();
        String write = freshName.get();
        String permits = freshName.get();
        String fairMutex = freshName.get();
        Map<String, Lease> held = new LinkedHashMap<>();
        held.put("mutex", holder.lock(mutex).acquire(TckSettings.hangBound()).orElseThrow());
        held.put(
                "reader",
                holder.readWriteLock(read).read(TckSettings.hangBound()).orElseThrow());
        held.put(
                "writer",
                holder.readWriteLock(write).write(TckSettings.hangBound()).orElseThrow());
        held.put(
                "permits",
                holder.semaphore(permits, 2).acquire(2, TckSettings.hangBound()).orElseThrow());
        Map<String, Supplier<Optional<Lease>>> rivals = new LinkedHashMap<>();
        rivals.put("mutex", () -> rival.tryAcquire(mutex));
        rivals.put("reader", () -> rival.readWriteLock(read).tryWrite());
        rivals.put("writer", () -> rival.readWriteLock(write).tryRead());
        rivals.put("permits", () -> rival.semaphore(permits, 2).tryAcquire(1));
        if (fair) {
            held.put(
                    "fair mutex",
                    holder.lock(fairMutex)
                            .fair(true)
                            .acquire(TckSettings.hangBound())
                            .orElseThrow());
            rivals.put("fair mutex", () -> rival.lock(fairMutex).fair(true).tryAcquire());
        }
        long start = System.nanoTime();
        int rounds = 0;
        while (System.nanoTime() - start < ttl.multipliedBy(2).toNanos()) {
            for (Map.Entry<String, Supplier<Optional<Lease>>> r : rivals.entrySet()) {
                Optional<Lease> taken = r.getValue().get();
                taken.ifPresent(Lease::release);
                assertThat(
                        taken.isEmpty(),
                        "renewalKeepsEveryKindOfGrant: a rival was granted the " + r.getKey()
                                + "'s name while it was renewed");
            }
            for (Map.Entry<String, Lease> h : held.entrySet()) {
                assertThat(
                        h.getValue().isValid(),
                        "renewalKeepsEveryKindOfGrant: the " + h.getKey() + " was lost while renewed: " + h.getValue()
                                + ", "
                                + h.getValue().lost().toCompletableFuture().getNow(null));
            }
            rounds++;
            Thread.sleep(50); // pacing the rival's attempts
        }
        assertThat(rounds > 5, "renewalKeepsEveryKindOfGrant: the rival tried " + rounds + " times only");
        for (Map.Entry<String, Lease> h : held.entrySet()) {
            assertThat(
                    h.getValue().renew(),
                    "renewalKeepsEveryKindOfGrant: the " + h.getKey() + "'s renewal by hand was rejected");
        }
        for (Map.Entry<String, Lease> h : held.entrySet()) {
            assertThat(h.getValue().release(), "renewalKeepsEveryKindOfGrant: the " + h.getKey() + "'s release");
        }
        for (Map.Entry<String, Supplier<Optional<Lease>>> r : rivals.entrySet()) {
            Optional<Lease> taken = r.getValue().get();
            assertThat(
                    taken.isPresent(),
                    "renewalKeepsEveryKindOfGrant: the rival was refused the " + r.getKey()
                            + "'s name right after its release");
            taken.get().release();
        }
    }

    /**
     * sharedNamesKeepTheirKind: a semaphore's N is recorded with its live grants (a request with
     * another N, or for another kind of lock, is refused with an IllegalArgumentException naming
     * both, and changes nothing); inspect shows every holder with its mode and permits; once the
     * name is free, its next grant decides its kind again.
     */
    public void sharedNamesKeepTheirKind() throws Exception {
        String name = freshName.get();
        LockClient a = client();
        LockClient b = client();
        Lease two = a.semaphore(name, 3).tryAcquire(2).orElseThrow(() -> new AssertionError("2 of 3 free permits"));
        Lease one = b.semaphore(name, 3).tryAcquire(1).orElseThrow(() -> new AssertionError("the third permit"));
        assertThat(b.semaphore(name, 3).tryAcquire().isEmpty(), "a fourth permit of 3 is refused");
        io.fencelock.LockInfo info = a.inspect(name).orElseThrow();
        assertThat(
                info.held() && info.kind() == LockMode.PERMITS && info.limit() == 3 && info.permitsHeld() == 3,
                "inspect shows a semaphore of 3 with 3 permits held: " + info);
        assertThat(
                info.holders().stream().anyMatch(h -> h.leaseId().equals(two.leaseId()) && h.permits() == 2)
                        && info.holders().stream().anyMatch(h -> h.leaseId().equals(one.leaseId())),
                "inspect shows both holders: " + info.holders());
        assertThat(two.mode() == LockMode.PERMITS && two.permits() == 2, "the lease says its mode and permits");
        expectRefused(() -> b.semaphore(name, 5).tryAcquire(), "3", "a semaphore of another N");
        expectRefused(() -> b.readWriteLock(name).tryRead(), "3", "a read-write lock on a semaphore's name");
        expectRefused(() -> b.tryAcquire(name), "3", "a mutex on a semaphore's name");
        assertThat(a.inspect(name).orElseThrow().permitsHeld() == 3, "a refused request changes nothing");
        two.release();
        one.release();
        Lease mutex = b.tryAcquire(name).orElseThrow(() -> new AssertionError("a free name takes a new kind"));
        assertThat(mutex.fencingToken() > two.fencingToken(), "the next grant's token rises");
        mutex.release();
    }

    private interface Attempt {
        Object run() throws Exception;
    }

    private static void expectRefused(Attempt attempt, String mentions, String what) throws Exception {
        try {
            attempt.run();
        } catch (IllegalArgumentException expected) {
            assertThat(
                    String.valueOf(expected.getMessage()).contains(mentions),
                    "sharedNamesKeepTheirKind: the refusal of " + what + " names the recorded kind: "
                            + expected.getMessage());
            return;
        }
        throw new AssertionError("sharedNamesKeepTheirKind: " + what + " was not refused");
    }

    /**
     * fairGrantsFollowRequestOrder: while one client holds a fair semaphore, waiters of other
     * clients arrive one after another (each after the previous has been refused by the backend
     * twice); once the holder lets go, they are granted in their order of arrival.
     */
    public void fairGrantsFollowRequestOrder(int waiters) throws Exception {
        String name = freshName.get();
        int limit = 2;
        Lease holder =
                client().semaphore(name, limit).fair(true).tryAcquire(limit).orElseThrow();
        List<Integer> order = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(waiters);
        try {
            List<Future<?>> tasks = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                InstrumentedBackend counted = new InstrumentedBackend(fixture.openBackend());
                LockClient c = register(LockClient.create(counted, options(Duration.ofSeconds(5))));
                SemaphoreHandle fair = c.semaphore(name, limit).fair(true);
                int index = i;
                int permits = 1 + i % limit; // a large request is not overtaken by smaller ones behind it
                tasks.add(pool.submit(() -> {
                    Lease lease = fair.acquire(permits, TckSettings.hangBound()).orElseThrow();
                    order.add(index);
                    lease.release();
                    return null;
                }));
                awaitCondition("waiter " + i + " refused twice", () -> counted.acquireCalls() >= 2);
            }
            holder.release();
            for (Future<?> f : tasks) {
                f.get(TckSettings.hangBound().toSeconds(), TimeUnit.SECONDS);
            }
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                expected.add(i);
            }
            assertThat(
                    order.equals(expected),
                    "fairGrantsFollowRequestOrder: granted in order " + order + ", waiters arrived " + expected);
        } finally {
            pool.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ machinery

    private static LockOptions options(Duration ttl) {
        return LockOptions.builder()
                .ttl(ttl)
                .initialPollInterval(Duration.ofMillis(2))
                .maxPollInterval(Duration.ofMillis(50))
                .build();
    }

    private LockClient client() {
        return register(LockClient.create(fixture.openBackend(), options(Duration.ofSeconds(5))));
    }

    private LockClient register(LockClient c) {
        clients.add(c);
        return c;
    }

    private void closeClient(LockClient c) {
        clients.remove(c);
        c.close();
    }

    private static void assertThat(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    private static void sleepMillis(long millis) throws InterruptedException {
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    /** Closes every client these checks opened. */
    @Override
    public void close() {
        clients.forEach(LockClient::close);
        clients.clear();
    }
}
