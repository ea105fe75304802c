package io.fencelock.bench.jmh;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * An interleaved A/B of two engine builds in one JVM: each build (a lock-api jar or classes
 * directory) gets a class loader of its own with {@link EngineLoop}, and their passes alternate (A B B
 * A ...) so that a noisy moment of a shared machine falls on both. Prints, per workload, the median
 * nanoseconds per acquire + release of each build with its min-max, and the ratio B/A of the medians,
 * next to the load average.
 *
 * <pre>
 * java -cp lock-bench/target/classes:... io.fencelock.bench.jmh.EngineCostAB \
 *     -Dab.a=/path/lock-api-base.jar [-Dab.b=lock-api/target/classes] [-Dab.passes=8] [-Dab.millis=1000] \
 *     [-Dab.specs=granting:try:1,granting:acquire:1,inmemory:try:1,granting:try:8]
 * </pre>
 */
public final class EngineCostAB {
    private EngineCostAB() {}

    public static void main(String[] args) throws Exception {
        URL harness = EngineLoop.class.getProtectionDomain().getCodeSource().getLocation();
        URL slf4j = org.slf4j.LoggerFactory.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation();
        URL a = Path.of(required("ab.a")).toUri().toURL();
        String bPath = System.getProperty("ab.b");
        URL b = bPath != null
                ? Path.of(bPath).toUri().toURL()
                : io.fencelock.LockClient.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation();
        int passes = Integer.getInteger("ab.passes", 8);
        long millis = Long.getLong("ab.millis", 1000);
        List<String> specs = Arrays.asList(System.getProperty(
                        "ab.specs",
                        "granting:try:1,granting:acquire:1,inmemory:try:1,inmemory:acquire:1,granting:try:8")
                .split(","));
        ToDoubleFunction<String> sideA = load(a, harness, slf4j);
        ToDoubleFunction<String> sideB = load(b, harness, slf4j);
        System.out.printf(
                Locale.ROOT,
                "A = %s%nB = %s%n%d passes of %d ms per side and workload, load %s%n",
                a,
                b,
                passes,
                millis,
                load());
        for (String spec : specs) {
            String run = spec + ":" + millis;
            // warm both: the JIT compiles each build's classes separately
            for (int i = 0; i < 2; i++) {
                sideA.applyAsDouble(run);
                sideB.applyAsDouble(run);
            }
            List<Double> resultsA = new ArrayList<>();
            List<Double> resultsB = new ArrayList<>();
            for (int p = 0; p < passes; p++) {
                boolean aFirst = p % 2 == 0;
                double first = (aFirst ? sideA : sideB).applyAsDouble(run);
                double second = (aFirst ? sideB : sideA).applyAsDouble(run);
                resultsA.add(aFirst ? first : second);
                resultsB.add(aFirst ? second : first);
            }
            double medA = median(resultsA);
            double medB = median(resultsB);
            System.out.printf(
                    Locale.ROOT,
                    "%-22s A %8.0f ns/cycle [%.0f-%.0f]   B %8.0f ns/cycle [%.0f-%.0f]   B/A %.2f   load %s%n",
                    spec,
                    medA,
                    min(resultsA),
                    max(resultsA),
                    medB,
                    min(resultsB),
                    max(resultsB),
                    medB / medA,
                    load());
        }
        System.exit(0); // the clients' daemon threads are left behind on purpose
    }

    @SuppressWarnings("unchecked")
    private static ToDoubleFunction<String> load(URL lockApi, URL harness, URL slf4j) throws Exception {
        ClassLoader loader =
                new URLClassLoader(new URL[] {lockApi, harness, slf4j}, ClassLoader.getPlatformClassLoader());
        return (ToDoubleFunction<String>) loader.loadClass(EngineLoop.class.getName())
                .getDeclaredConstructor()
                .newInstance();
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("system property " + key + " is required: the baseline lock-api jar");
        }
        return v;
    }

    private static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static double median(List<Double> values) {
        double[] s = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double min(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }
}
