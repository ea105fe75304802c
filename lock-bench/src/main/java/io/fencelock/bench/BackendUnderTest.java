package io.fencelock.bench;

import io.fencelock.spi.LockBackend;
import io.fencelock.tck.InstrumentedBackend;
import io.fencelock.testservers.common.ServerProcess;
import io.fencelock.testservers.common.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * One backend of the comparison on one real server (found by lock-tck's fixtures): how to open
 * fencelock's provider on it, its raw primitive, the peer libraries that run on it, and how to fill
 * it with many lock names at once for the scale workload.
 */
public abstract class BackendUnderTest implements AutoCloseable {
    /** TTL of every lease the throughput and latency workloads take: long enough never to expire mid-cycle. */
    static final Duration WORK_TTL = Duration.ofSeconds(30);
    /** Prefix of the names the scale workload fills in. */
    static final String FILL_PREFIX = "bench-fill-";

    private final String key;
    private final String title;
    private final String providerPackage;
    private final String waitsBy;
    private final TestServer server;

    /**
     * @param key             the short name used in {@code -Dfencelock.bench.backends}, e.g. "postgres"
     * @param providerPackage the provider's package, which names the guarantee-matrix files of this backend
     * @param waitsBy         how fencelock's waiters learn of a release on this backend
     * @param server          the server's fixture, which describes the server and controls one the run started
     */
    protected BackendUnderTest(String key, String providerPackage, String waitsBy, TestServer server) {
        this.key = key;
        this.title = BenchSettings.TITLES.get(key);
        this.providerPackage = providerPackage;
        this.waitsBy = waitsBy;
        this.server = server;
    }

    public final String key() {
        return key;
    }

    public String title() {
        return title;
    }

    public final String providerPackage() {
        return providerPackage;
    }

    /** The fixture's description: version, origin, address, never credentials. */
    public final String description() {
        return server.description();
    }

    /** A new fencelock backend (its own connections) on this server. */
    public abstract LockBackend openBackend();

    /** A new raw primitive (its own connections) on this server. */
    protected abstract RawPrimitive openRaw() throws Exception;

    /** What the raw primitive is, in a few words, for the report. */
    public abstract String rawPrimitiveDescription();

    /** The peer libraries that run on this backend, plus why others are not measured. */
    protected abstract List<LockContender.Factory> peers();

    /** The peers' semaphores and read-write locks on this backend, for the shared-lock workloads (none by default). */
    protected List<SharedMeasurements.Factory> sharedPeers() {
        return List.of();
    }

    /** Peers one might expect here that are not measured, each with why. */
    public List<String> peersNotMeasured() {
        return List.of();
    }

    /**
     * Adds free lock records for names {@link #FILL_PREFIX}{@code from} to {@code to - 1} the way the
     * provider leaves them after a release, in bulk through the raw driver; where the raw primitive keeps
     * its own table or collection, the same names go there too, so that the scale workload measures both
     * at the same population.
     */
    public abstract void fill(long from, long to) throws Exception;

    /** The most names the scale workload fills on this backend in a full run, and why fewer than 1M if so. */
    public long maxScaleNames() {
        return 1_000_000;
    }

    /** Why {@link #maxScaleNames()} or {@link #maxRenewedLeases()} is below what the run asks. */
    public String limitReason() {
        return "";
    }

    /** The most leases the renewal workload holds on this backend, and why fewer than asked if so. */
    public int maxRenewedLeases() {
        return Integer.MAX_VALUE;
    }

    /** The server's process, where this run started it as a child process: its CPU is measured per cycle. */
    public final OptionalLong serverPid() {
        return server.control()
                .filter(ServerProcess.class::isInstance)
                .map(c -> ((ServerProcess) c).pid())
                .orElse(OptionalLong.empty());
    }

    /** fencelock, its provider alone, the raw primitive, then the peers: everything measured on this backend. */
    public List<LockContender.Factory> contenders() {
        List<LockContender.Factory> all = new ArrayList<>();
        all.add(new LockContender.Factory(
                FencelockContender.LABEL,
                LockContender.Kind.FENCELOCK,
                waitsBy,
                () -> FencelockContender.timed(openBackend()),
                () -> FencelockContender.counted(openBackend())));
        // Counted, the provider alone runs through the same wrapper as fencelock: the engine's ratio to it (the
        // throughput cells open both counting) compares like with like.
        all.add(new LockContender.Factory(
                ProviderSpiContender.LABEL,
                LockContender.Kind.FENCELOCK,
                RawContender.WAITS_BY,
                () -> ProviderSpiContender.timed(openBackend()),
                () -> new ProviderSpiContender(new InstrumentedBackend(openBackend()))));
        all.add(new LockContender.Factory(
                "raw primitive",
                LockContender.Kind.RAW,
                RawContender.WAITS_BY,
                () -> new RawContender(openRaw(), WORK_TTL)));
        all.addAll(peers());
        return all;
    }

    /** Stops what this backend started itself (the shared servers stop in the fixtures' shutdown hooks). */
    @Override
    public abstract void close();
}
