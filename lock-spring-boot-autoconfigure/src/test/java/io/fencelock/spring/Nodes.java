package io.fencelock.spring;

import io.fencelock.AcquireEvent;
import io.fencelock.Lease;
import io.fencelock.LockEventListener;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** The applications the tests start as "nodes". */
final class Nodes {
    private Nodes() {}

    /** Starts {@code app} with {@code properties} and {@code shared} objects (e.g. the ledger other nodes share) as beans. */
    static ConfigurableApplicationContext start(
            Class<?> app, Map<String, Object> properties, Map<String, Object> shared) {
        return new SpringApplicationBuilder(app)
                .properties(properties)
                .initializers(context -> shared.forEach(context.getBeanFactory()::registerSingleton))
                .run();
    }

    /** Counts this node's acquire outcomes. */
    static final class Outcomes implements LockEventListener {
        final AtomicInteger granted = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public void acquireFinished(AcquireEvent event) {
            (event.outcome() == AcquireEvent.Outcome.GRANTED ? granted : refused).incrementAndGet();
        }
    }

    /** A node whose scheduled job runs on one node at a time, every slot held at least {@code test.min-hold}. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SchedulingNode {
        @Bean
        SlotJob slotJob(Ledger ledger, @Value("${test.node}") String node) {
            return new SlotJob(ledger, node);
        }

        @Bean
        Outcomes outcomes() {
            return new Outcomes();
        }
    }

    static class SlotJob {
        private final Ledger ledger;
        private final String node;

        SlotJob(Ledger ledger, String node) {
            this.ledger = ledger;
            this.node = node;
        }

        @Scheduled(fixedDelay = 20)
        @Exclusive(name = "'jobs:slot'", minHold = "${test.min-hold}", type = "job")
        public void run() throws Exception {
            ledger.run(node, ExclusiveContext.currentLease(), 20);
        }
    }

    /** A node with exclusive methods the tests call: one that works until interrupted, one declared on an interface. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WorkNode {
        @Bean
        WorkProbe workProbe() {
            return new WorkProbe();
        }

        @Bean
        SlowWork slowWork(WorkProbe probe) {
            return new SlowWork(probe);
        }

        @Bean
        Reports reports() {
            return new DailyReports();
        }
    }

    /** What the exclusive method saw, outside its (proxied) bean. */
    static final class WorkProbe {
        final CountDownLatch started = new CountDownLatch(1);
        volatile long parameterToken;
        volatile long contextToken;
        volatile boolean interrupted;
    }

    static class SlowWork {
        private final WorkProbe probe;

        SlowWork(WorkProbe probe) {
            this.probe = probe;
        }

        @Exclusive(name = "'work:' + #id", ttl = "1s", type = "work", owner = "node-under-test")
        public String work(String id, Lease lease) {
            probe.parameterToken = lease.fencingToken();
            probe.contextToken = ExclusiveContext.currentLease().fencingToken();
            probe.started.countDown();
            try {
                // works until its lease is lost (the test forces that), bounded
                new CountDownLatch(1).await(20, TimeUnit.SECONDS);
                return "finished";
            } catch (InterruptedException e) {
                probe.interrupted = true;
                return "interrupted";
            }
        }
    }

    /** Exclusive on the interface: the implementation inherits it. */
    interface Reports {
        @Exclusive(name = "'report:' + #day", waitFor = "5s")
        String build(String day, Lease lease);
    }

    static class DailyReports implements Reports {
        @Override
        public String build(String day, Lease lease) {
            return lease.name() + "@" + lease.fencingToken();
        }
    }
}
