package io.fencelock.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;

/** Finding and formatting the figures of one backend section, shared by the report's parts. */
final class Cells {
    static final String FENCELOCK = "fencelock";
    static final String RAW = "raw primitive";
    static final String OWN = "independent names";
    static final String HOT = "one hot name";

    private Cells() {}

    /**
     * One figure with the spread of its passes (or rounds): NaN min and max where it has none.
     * {@code noisy}: the passes spread more than {@link Figures#UNSTEADY_SPREAD} of the median.
     */
    record Value(double median, double min, double max, boolean noisy) {
        static Value single(double v) {
            return new Value(v, Double.NaN, Double.NaN, false);
        }

        static Value of(Figures.Throughput t) {
            return t.passes() > 1
                    ? new Value(t.cyclesPerSecond(), t.minPerSecond(), t.maxPerSecond(), t.unsteady())
                    : single(t.cyclesPerSecond());
        }

        /** The p50 with the lowest and highest p50 of the interleaved rounds (reports before them have none). */
        static Value p50(Figures.Latency l) {
            if (!(l.p50MaxUs() > 0)) {
                return single(l.p50Us());
            }
            boolean noisy = l.p50Us() > 0 && (l.p50MaxUs() - l.p50MinUs()) / l.p50Us() > Figures.UNSTEADY_SPREAD;
            return new Value(l.p50Us(), l.p50MinUs(), l.p50MaxUs(), noisy);
        }

        boolean hasSpread() {
            return !Double.isNaN(min);
        }

        /** "1,234 (1,100–1,300)", with a * when noisy. */
        String text() {
            return hasSpread()
                    ? number(median) + " (" + number(min) + "–" + number(max) + ")" + (noisy ? " *" : "")
                    : number(median);
        }
    }

    /** In how many of the counted pairs something held; {@link #text} is empty with fewer than two pairs. */
    record Pairs(int held, int counted) {
        boolean any() {
            return counted >= 2;
        }

        /** "k of n passes" (or rounds), or nothing. */
        String text(String unit) {
            return any() ? held + " of " + counted + " " + unit : "";
        }
    }

    /**
     * Pairs values that ran side by side: pair k is the k-th value of every series (pass or round k), given to
     * {@code holds} in the order of the series. None when the series differ in length (one missed a pass) or
     * have fewer than two values; a pair with a NaN (a round one of them did not finish) is not counted.
     */
    static Pairs pairs(List<List<Double>> series, Predicate<double[]> holds) {
        if (series.isEmpty() || series.stream().anyMatch(v -> v == null)) {
            return new Pairs(0, 0); // a report written before passes were kept
        }
        int n = series.get(0).size();
        if (n < 2 || series.stream().anyMatch(v -> v.size() != n)) {
            return new Pairs(0, 0);
        }
        int counted = 0;
        int held = 0;
        for (int k = 0; k < n; k++) {
            double[] values = new double[series.size()];
            for (int j = 0; j < values.length; j++) {
                values[j] = series.get(j).get(k);
            }
            if (Arrays.stream(values).anyMatch(Double::isNaN)) {
                continue;
            }
            counted++;
            held += holds.test(values) ? 1 : 0;
        }
        return new Pairs(held, counted);
    }

    static String number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "–";
        }
        double a = Math.abs(v);
        return a >= 100
                ? String.format(Locale.ROOT, "%,.0f", v)
                : a >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    static String ratio(double num, double den) {
        return den > 0 && !Double.isNaN(num) ? String.format(Locale.ROOT, "%.2fx", num / den) : "–";
    }

    static Optional<Figures.Latency> latency(Figures.BackendSection s, String label) {
        return s.latency().stream().filter(l -> l.contender().equals(label)).findFirst();
    }

    /** The raw primitive's latency: the first contender of kind raw. */
    static Optional<Figures.Latency> rawLatency(Figures.BackendSection s) {
        return s.latency().stream().filter(l -> l.kind().equals("raw")).findFirst();
    }

    /** fencelock's ("fencelock") or the raw primitive's ("raw") figure at one population of the scale workload. */
    static Optional<Figures.Latency> scale(Figures.Scale scale, String kind) {
        return scale.latency().stream().filter(l -> l.kind().equals(kind)).findFirst();
    }

    static Optional<Figures.Throughput> throughput(Figures.BackendSection s, String label, String names, int clients) {
        return s.throughput().stream()
                .filter(t -> t.contender().equals(label)
                        && t.clients() == clients
                        && t.names().equals(names))
                .findFirst();
    }

    static double perSecond(Figures.BackendSection s, String label, String names, int clients) {
        return throughput(s, label, names, clients)
                .map(Figures.Throughput::cyclesPerSecond)
                .orElse(Double.NaN);
    }

    /**
     * A cell's CPU microseconds per cycle, "client · server" (the medians of its passes): "–" for a side not
     * read, and "–" alone for a cell of a run that read neither.
     */
    static String cpuPerCycle(Optional<Figures.Throughput> cell) {
        return cell.filter(Figures.Throughput::hasClientCpu)
                .map(t -> number(t.clientCpuMicros()) + " · " + (t.hasServerCpu() ? number(t.serverCpuMicros()) : "–"))
                .orElse("–");
    }

    /** A contender's attempts per grant on {@code names} at 8 and 64 clients, "1.00 · 3.42"; "–" where not counted. */
    static String attemptsPerGrant(Figures.BackendSection s, String label, String names) {
        List<String> at = new java.util.ArrayList<>();
        for (int clients : new int[] {8, 64}) {
            at.add(throughput(s, label, names, clients)
                    .filter(Figures.Throughput::hasAttempts)
                    .map(t -> String.format(Locale.ROOT, "%.2f", t.attemptsPerGrant()))
                    .orElse("–"));
        }
        return at.stream().allMatch("–"::equals) ? "–" : String.join(" · ", at);
    }

    static Optional<Figures.HandOff> handOff(Figures.BackendSection s, String label) {
        return s.handOff().stream().filter(h -> h.contender().equals(label)).findFirst();
    }

    /** What a contender is, for colours and rankings: fencelock, provider (the SPI alone), raw or peer. */
    static String role(String label, String kind) {
        if (label.equals(FENCELOCK)) {
            return "fencelock";
        }
        return kind.equals("peer") || kind.equals("raw") ? kind : "provider";
    }

    /** fencelock and the peer libraries: what the summary ranks (baselines are not libraries). */
    static boolean isLibrary(String label, String kind) {
        return label.equals(FENCELOCK) || kind.equals("peer");
    }

    static List<String> clientsText(List<Integer> clients) {
        return clients.stream().map(c -> c + (c == 1 ? " client" : " clients")).toList();
    }
}
