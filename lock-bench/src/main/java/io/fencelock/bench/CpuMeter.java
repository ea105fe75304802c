package io.fencelock.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.stream.LongStream;

/**
 * CPU time spent by this process (the bench's JVM: the contender's client, and an in-JVM server) and by
 * the backend's server process with its descendants (PostgreSQL's backends), read at the start and the
 * end of a throughput cell's measured time. On a machine where client and server share the cores, a
 * throughput ratio is a ratio of CPU per cycle; these readings say on which side a gap lies.
 *
 * <p>The server's time comes from {@code /proc/<pid>/stat} (user + system, in clock ticks), so it is
 * there only for a server this run started as a child process on Linux; a descendant that exits within
 * the cell takes its time with it (the servers keep their processes for the cell's connections).
 */
final class CpuMeter {
    /** Clock ticks per second of {@code /proc/<pid>/stat}: 100 on every Linux the JDK runs on (USER_HZ). */
    private static final double TICKS_PER_SECOND = 100;

    private final com.sun.management.OperatingSystemMXBean os;
    private final OptionalLong serverPid;

    /** A meter that reads nothing (NaN on both sides): for load that is not measured, such as a warm-up. */
    static final CpuMeter NONE = new CpuMeter(null, OptionalLong.empty());

    /** A meter of this process, and of the server process {@code serverPid} where there is one. */
    CpuMeter(OptionalLong serverPid) {
        this(
                ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean o
                        ? o
                        : null,
                serverPid);
    }

    private CpuMeter(com.sun.management.OperatingSystemMXBean os, OptionalLong serverPid) {
        this.os = os;
        this.serverPid = serverPid;
    }

    /** Nanoseconds of CPU of each side at one moment; NaN where a side cannot be read. */
    record Reading(double clientNanos, double serverNanos) {
        /** CPU microseconds per cycle of each side between {@code this} and {@code end}; NaN where unread. */
        double[] perCycleMicros(Reading end, long cycles) {
            return new double[] {
                (end.clientNanos - clientNanos) / 1e3 / cycles, (end.serverNanos - serverNanos) / 1e3 / cycles
            };
        }
    }

    Reading read() {
        double client = os == null ? Double.NaN : os.getProcessCpuTime();
        return new Reading(client < 0 ? Double.NaN : client, serverNanos());
    }

    private double serverNanos() {
        if (serverPid.isEmpty()) {
            return Double.NaN;
        }
        long pid = serverPid.getAsLong();
        ProcessHandle server = ProcessHandle.of(pid).orElse(null);
        if (server == null) {
            return Double.NaN;
        }
        long ticks = 0;
        for (long p : LongStream.concat(LongStream.of(pid), server.descendants().mapToLong(ProcessHandle::pid))
                .toArray()) {
            long own = ticksOf(p);
            if (own < 0 && p == pid) {
                return Double.NaN;
            }
            ticks += Math.max(0, own);
        }
        return ticks / TICKS_PER_SECOND * 1e9;
    }

    /** utime + stime of one process, or -1 when it cannot be read (gone, or not Linux). */
    private static long ticksOf(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // the fields after the command, which is in parentheses and may hold spaces
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14, 15 of proc(5))
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
