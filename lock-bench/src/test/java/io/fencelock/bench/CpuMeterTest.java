package io.fencelock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The server side of {@link CpuMeter}: a process and its descendants, read from /proc. */
class CpuMeterTest {

    @Test
    void aServersCpuIncludesItsChildren() throws Exception {
        // the parent only waits; its child spins: all the CPU the meter sees is a descendant's
        Process server = new ProcessBuilder("sh", "-c", "sh -c 'while :; do :; done' & wait").start();
        try {
            CpuMeter meter = new CpuMeter(OptionalLong.of(server.pid()));
            CpuMeter.Reading start = meter.read();
            assertThat(start.serverNanos()).isNotNaN();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            CpuMeter.Reading now = start;
            while (now.serverNanos() - start.serverNanos() < 50e6 && System.nanoTime() < deadline) {
                now = meter.read(); // the spinning child accrues CPU ticks: this loop ends well before the deadline
            }
            assertThat(now.serverNanos() - start.serverNanos()).isGreaterThanOrEqualTo(50e6);
            double[] perCycle = start.perCycleMicros(now, 10);
            assertThat(perCycle[0]).as("this process spent CPU reading").isGreaterThan(0);
            assertThat(perCycle[1]).isGreaterThanOrEqualTo(5_000); // 50 ms over 10 cycles
        } finally {
            server.descendants().forEach(ProcessHandle::destroyForcibly);
            server.destroyForcibly();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void withoutAServerProcessOnlyTheClientIsRead() {
        CpuMeter.Reading r = new CpuMeter(OptionalLong.empty()).read();
        assertThat(r.clientNanos()).isPositive();
        assertThat(r.serverNanos()).isNaN();
        assertThat(new CpuMeter(OptionalLong.of(Long.MAX_VALUE)).read().serverNanos())
                .as("a process that is gone")
                .isNaN();
    }
}
