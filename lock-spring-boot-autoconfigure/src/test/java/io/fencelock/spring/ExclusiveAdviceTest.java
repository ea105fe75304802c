package io.fencelock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The advice's own rules, on lock-api's in-memory backend: a held lock skips the run and returns
 * "nothing" in the method's type, the minimum hold outlives a failing method, nested exclusive methods
 * each see their own lease, and interface-based (JDK) proxies work.
 */
class ExclusiveAdviceTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FencelockAutoConfiguration.class))
            .withPropertyValues("fencelock.uri=inmemory:advice-" + UUID.randomUUID())
            .withUserConfiguration(Beans.class);

    @Test
    void aHeldLockSkipsTheRunAndTheMethodReturnsNothingInItsType() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(AopUtils.isJdkDynamicProxy(jobs))
                    .as("an interface-based proxy")
                    .isTrue();
            LockClient client = context.getBean(LockClient.class);
            assertThat(jobs.count()).isEqualTo(1);
            try (Lease held = client.tryAcquire("jobs:a").orElseThrow()) {
                assertThat(jobs.count()).isZero();
                assertThat(jobs.maybe()).isEmpty();
                assertThat(jobs.done()).isFalse();
                assertThat(jobs.name()).isNull();
            }
            assertThat(jobs.maybe()).contains("ran");
            assertThat(jobs.done()).isTrue();
            assertThat(jobs.name()).isEqualTo("jobs:a");
            assertThat(context.getBean(Counter.class).runs)
                    .as("runs of the skipped methods")
                    .hasValue(3);
        });
    }

    @Test
    void theMinimumHoldOutlivesAFailingMethodWithoutAWaitingThread() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            LockClient client = context.getBean(LockClient.class);
            long start = System.nanoTime();
            assertThatThrownBy(jobs::fails)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("boom");
            assertThat(client.held()).as("the client let go after one renewal").isEmpty();
            assertThat(client.inspect("jobs:held").orElseThrow().held())
                    .as("the backend keeps the lock for the rest of the hold")
                    .isTrue();
            assertThat(jobs.count()).as("other locks are not held back").isEqualTo(1);
            Await.until(
                    "the lock is free once the hold ends",
                    Duration.ofSeconds(10),
                    () -> !client.inspect("jobs:held").orElseThrow().held());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(299));
        });
    }

    @Test
    void nestedExclusiveMethodsEachSeeTheirOwnLease() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(jobs.outer()).isEqualTo("outer:inner:outer");
            assertThat(ExclusiveContext.findCurrentLease()).isEmpty();
            assertThatThrownBy(ExclusiveContext::currentLease).isInstanceOf(IllegalStateException.class);
        });
    }

    interface Jobs {
        @Exclusive(name = "'jobs:a'")
        int count();

        @Exclusive(name = "'jobs:a'")
        Optional<String> maybe();

        @Exclusive(name = "'jobs:a'")
        boolean done();

        @Exclusive(name = "#root.method.name == 'name' ? 'jobs:a' : 'x'")
        String name();

        @Exclusive(name = "'jobs:held'", minHold = "300ms")
        void fails();

        @Exclusive(name = "'jobs:outer'")
        String outer();
    }

    interface Inner {
        @Exclusive(name = "'jobs:' + #part")
        String inner(String part);
    }

    static final class Counter {
        final AtomicInteger runs = new AtomicInteger();
    }

    static class JobsImpl implements Jobs {
        private final Counter counter;
        private final Inner inner;

        JobsImpl(Counter counter, Inner inner) {
            this.counter = counter;
            this.inner = inner;
        }

        @Override
        public int count() {
            return 1;
        }

        @Override
        public Optional<String> maybe() {
            counter.runs.incrementAndGet();
            return Optional.of("ran");
        }

        @Override
        public boolean done() {
            counter.runs.incrementAndGet();
            return true;
        }

        @Override
        public String name() {
            counter.runs.incrementAndGet();
            return ExclusiveContext.currentLease().name();
        }

        @Override
        public void fails() {
            counter.runs.incrementAndGet();
            throw new IllegalStateException("boom");
        }

        @Override
        public String outer() {
            String before = tail(ExclusiveContext.currentLease().name());
            String during = inner.inner("inner");
            return before + ":" + during + ":"
                    + tail(ExclusiveContext.currentLease().name());
        }
    }

    static class InnerImpl implements Inner {
        @Override
        public String inner(String part) {
            return tail(ExclusiveContext.currentLease().name());
        }
    }

    private static String tail(String name) {
        return name.substring(name.indexOf(':') + 1);
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Counter counter() {
            return new Counter();
        }

        @Bean
        Inner inner() {
            return new InnerImpl();
        }

        @Bean
        Jobs jobs(Counter counter, Inner inner) {
            return new JobsImpl(counter, inner);
        }
    }
}
