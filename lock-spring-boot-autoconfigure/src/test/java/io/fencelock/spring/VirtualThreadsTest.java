package io.fencelock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.LockClient;
import io.fencelock.testservers.redis.RedisServer;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * With {@code spring.threads.virtual.enabled} a {@code @Scheduled @Exclusive} job runs on a virtual
 * thread, holds its lease there, and a lost lease interrupts that thread. Runs in its own Surefire
 * execution on a JDK with virtual threads (21+; the build compiles for 17).
 */
@Tag("virtual-threads")
class VirtualThreadsTest {
    private static final String KEY_PREFIX =
            "vt-" + UUID.randomUUID().toString().substring(0, 8) + ":";

    @Test
    void aScheduledExclusiveJobRunsOnAVirtualThreadAndIsInterruptedWhenItsLeaseIsLost() throws Exception {
        assertThat(Runtime.version().feature())
                .as("this test runs on a JDK with virtual threads (see the pom's virtual-threads execution)")
                .isGreaterThanOrEqualTo(21);
        Probe probe = new Probe();
        try (LockClient operator = LockClient.builder()
                        .uri(RedisServer.shared().uri())
                        .property("keyPrefix", KEY_PREFIX)
                        .build();
                ConfigurableApplicationContext node = Nodes.start(
                        VirtualNode.class,
                        Map.of(
                                "spring.threads.virtual.enabled", "true",
                                "spring.main.web-application-type", "none",
                                "spring.autoconfigure.exclude",
                                        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
                                "fencelock.uri", RedisServer.shared().uri(),
                                "fencelock.properties.keyPrefix", KEY_PREFIX),
                        Map.of("probe", probe))) {
            assertThat(probe.started.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.virtual).as("the job's thread is virtual").isTrue();
            assertThat(probe.token).isPositive();

            assertThat(operator.forceRelease("vt:job")).isPresent();
            assertThat(probe.interrupted.await(20, TimeUnit.SECONDS))
                    .as("the virtual thread was interrupted when the lease was lost")
                    .isTrue();
        }
    }

    /** What the job saw. */
    static final class Probe {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch interrupted = new CountDownLatch(1);
        volatile boolean virtual;
        volatile long token;
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class VirtualNode {
        @Bean
        Job job(Probe probe) {
            return new Job(probe);
        }
    }

    static class Job {
        private final Probe probe;

        Job(Probe probe) {
            this.probe = probe;
        }

        @Scheduled(fixedDelay = 60_000)
        @Exclusive(name = "'vt:job'", ttl = "1s")
        public void run() throws Exception {
            probe.virtual = (boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread());
            probe.token = ExclusiveContext.currentLease().fencingToken();
            probe.started.countDown();
            try {
                new CountDownLatch(1).await(20, TimeUnit.SECONDS); // works until the lease is lost, bounded
            } catch (InterruptedException e) {
                probe.interrupted.countDown();
            }
        }
    }
}
