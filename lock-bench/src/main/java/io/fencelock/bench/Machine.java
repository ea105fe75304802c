package io.fencelock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** The machine a run was on, for the report: CPU model, cores, memory, OS. */
final class Machine {
    private Machine() {}

    static String describe() {
        String cpu = firstValue(Path.of("/proc/cpuinfo"), "model name");
        String memory = firstValue(Path.of("/proc/meminfo"), "MemTotal");
        return Runtime.getRuntime().availableProcessors() + " cores" + (cpu.isEmpty() ? "" : " (" + cpu + ")")
                + (memory.isEmpty() ? "" : ", " + memory + " memory") + ", " + System.getProperty("os.name") + " "
                + System.getProperty("os.version");
    }

    private static String firstValue(Path file, String key) {
        if (!Files.isReadable(file)) {
            return "";
        }
        try (Stream<String> lines = Files.lines(file)) {
            return lines.filter(l -> l.startsWith(key))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("");
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
