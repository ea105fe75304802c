package io.fencelock.bench;

import java.util.List;

/** What one comparison run found: plain records, written to report.json as they are. */
public final class Figures {
    private Figures() {}

    /**
     * Uncontended acquire + release cycles of one contender, in microseconds; {@code p50MinUs} and
     * {@code p50MaxUs} are the lowest and highest p50 of its interleaved rounds (the spread), and
     * {@code roundP50sUs} each round's p50 in round order (NaN for a round it did not finish): the
     * contenders of one measurement ran each round side by side, so round k of two of them pairs.
     * {@code outsideCallsP50Us}: see {@link #outsideCalls()}.
     */
    public record Latency(
            String contender,
            String kind,
            long cycles,
            double p50Us,
            double p99Us,
            double p999Us,
            double meanUs,
            double p50MinUs,
            double p50MaxUs,
            List<Double> roundP50sUs,
            double outsideCallsP50Us) {
        /**
         * The p50 of the cycles less the time they spent inside the backend's calls (fencelock: the engine's
         * time on the path; the provider alone: the bench's loop), or NaN where the calls are not timed (or a
         * report from before they were: read as 0).
         */
        public double outsideCalls() {
            return outsideCallsP50Us > 0 ? outsideCallsP50Us : Double.NaN;
        }
    }

    /**
     * Completed acquire + release cycles per second: the median of the passes ({@code cyclesPerSecond}),
     * their lowest and highest, and whether they spread more than {@link #UNSTEADY_SPREAD} of the median
     * (the cell is then flagged in the report: the machine was too noisy to settle it).
     * {@code longestWaitMs}: the longest any one thread waited for a grant within the measured time of
     * any pass (the report shows it for the hot name, where a starving waiter would show; NaN where not
     * measured). {@code passesPerSecond}: each pass in the order run; pass k of every contender of a
     * backend ran in the same round of alternating order, so pass k of two of them pairs.
     * {@code clientCpuMicros}, {@code serverCpuMicros}: CPU microseconds per cycle of the bench's process (the
     * client, and an in-JVM server) and of the server's processes, the medians of the passes' (NaN where not
     * read: the server's only where this run started it as a child process; see {@link CpuMeter}).
     */
    public record Throughput(
            String contender,
            String kind,
            String names,
            int clients,
            double cyclesPerSecond,
            double minPerSecond,
            double maxPerSecond,
            int passes,
            boolean unsteady,
            double longestWaitMs,
            List<Double> passesPerSecond,
            double clientCpuMicros,
            double serverCpuMicros,
            List<Double> clientCpuMicrosPerPass,
            List<Double> serverCpuMicrosPerPass,
            double attemptsPerGrant,
            List<Double> attemptsPerGrantPerPass) {

        /** One cell from its passes (at least one). */
        static Throughput of(String contender, String kind, String names, int clients, List<Double> passes) {
            return of(contender, kind, names, clients, passes, Double.NaN);
        }

        /** One cell from its passes (at least one) and the longest wait seen in any of them. */
        static Throughput of(
                String contender, String kind, String names, int clients, List<Double> passes, double longestWaitMs) {
            List<Double> unread = java.util.Collections.nCopies(passes.size(), Double.NaN);
            return of(contender, kind, names, clients, passes, longestWaitMs, unread, unread, unread);
        }

        /**
         * One cell from its passes (at least one), the longest wait seen in any of them, and per pass: the CPU
         * microseconds per cycle of the client's process and of the server's, and the attempts per grant (the
         * lock attempts the client sent its backend, a hand-over being one, per cycle completed); NaN where not
         * read or not countable.
         */
        static Throughput of(
                String contender,
                String kind,
                String names,
                int clients,
                List<Double> passes,
                double longestWaitMs,
                List<Double> clientCpuMicros,
                List<Double> serverCpuMicros,
                List<Double> attemptsPerGrant) {
            double[] sorted =
                    passes.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            int n = sorted.length;
            double median = median(sorted);
            double min = sorted[0];
            double max = sorted[n - 1];
            boolean unsteady = n > 1 && median > 0 && (max - min) / median > UNSTEADY_SPREAD;
            return new Throughput(
                    contender,
                    kind,
                    names,
                    clients,
                    median,
                    min,
                    max,
                    n,
                    unsteady,
                    longestWaitMs,
                    List.copyOf(passes),
                    medianOfRead(clientCpuMicros),
                    medianOfRead(serverCpuMicros),
                    List.copyOf(clientCpuMicros),
                    List.copyOf(serverCpuMicros),
                    medianOfRead(attemptsPerGrant),
                    List.copyOf(attemptsPerGrant));
        }

        /** The median of the finite values, or NaN when there are none. */
        private static double medianOfRead(List<Double> values) {
            double[] read = values.stream()
                    .mapToDouble(Double::doubleValue)
                    .filter(Double::isFinite)
                    .sorted()
                    .toArray();
            return read.length == 0 ? Double.NaN : median(read);
        }

        private static double median(double[] sorted) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        /** Whether the client's CPU per cycle was read (reports written before it was have 0 here). */
        public boolean hasClientCpu() {
            return Double.isFinite(clientCpuMicros) && clientCpuMicros > 0;
        }

        /** Whether the server's CPU per cycle was read: only for a server this run started as a child process. */
        public boolean hasServerCpu() {
            return Double.isFinite(serverCpuMicros) && serverCpuMicros > 0;
        }

        /** Whether attempts per grant were counted: a grant takes at least one (reports written before have 0). */
        public boolean hasAttempts() {
            return Double.isFinite(attemptsPerGrant) && attemptsPerGrant > 0;
        }

        /** (max - min) / median, or 0 for one pass. */
        public double spread() {
            return cyclesPerSecond > 0 ? (maxPerSecond - minPerSecond) / cyclesPerSecond : 0;
        }
    }

    /** Passes of one throughput cell that spread more than this fraction of their median are flagged. */
    public static final double UNSTEADY_SPREAD = 0.15;

    /**
     * Release by the holder to the waiting client holding the lock, in milliseconds; and what the waiter
     * cost its backend: its acquire attempts per hand-off and per second of waiting (from its call to
     * its grant, the holder's time included), both {@link #NOT_COUNTED} where the bench cannot count them.
     */
    public record HandOff(
            String contender,
            String kind,
            String waitsBy,
            int samples,
            double p50Ms,
            double p99Ms,
            double maxMs,
            double attemptsPerHandOff,
            double attemptsPerSecondWaiting) {
        public static final double NOT_COUNTED = -1;

        public boolean counted() {
            return attemptsPerHandOff >= 0;
        }
    }

    /**
     * One client holding {@code leases} leases: renew round trips per renewal interval (TTL / 3), the
     * mean and largest batch, how long the watchdog's largest batch took (median), and how many leases
     * were lost on the way (renewals that could not keep up).
     */
    public record Renewal(
            int leases,
            double roundTripsPerInterval,
            double meanBatch,
            int largestBatch,
            double renewCallMs,
            double acquireAllSeconds,
            int leasesLost) {}

    /** A holder that crashed (never renews, never releases): when did a waiter get the lock. */
    public record Takeover(
            long ttlMs, int samples, double medianTakeoverMs, double medianAfterTtlMs, double maxAfterTtlMs) {}

    /** Leader election and task spreading (fencelock): medians of the time leadership and tasks take to move. */
    public record Coordination(
            long ttlMs,
            long monitorPeriodMs,
            int samples,
            double leaderFailoverMs,
            double resignHandOverMs,
            double crashedInstanceTasksMovedMs,
            double joinRebalanceMs) {}

    /**
     * Acquire + release with {@code existingNames} lock records on the backend: fencelock and the raw
     * primitive, interleaved (the latency workload's method), each with its rounds' spread.
     */
    public record Scale(long existingNames, double fillSeconds, List<Latency> latency) {}

    /** One backend's section of the report. */
    public record BackendSection(
            String key,
            String title,
            boolean available,
            String description,
            String unavailableReason,
            List<String> capabilities,
            List<String> notClaimed,
            String rawPrimitive,
            List<Latency> latency,
            List<Throughput> throughput,
            List<HandOff> handOff,
            List<Renewal> renewal,
            List<Takeover> takeover,
            List<Coordination> coordination,
            List<Scale> scale,
            List<Throughput> shared,
            List<String> notes,
            List<String> peersNotMeasured,
            List<TckMatrices.Suite> guarantees,
            List<String> errors,
            double seconds) {}

    /** The whole run. */
    public record Run(
            String schema,
            String generatedAt,
            String machine,
            String java,
            boolean quick,
            String settings,
            String matrixNote,
            List<BackendSection> backends,
            double seconds) {}
}
