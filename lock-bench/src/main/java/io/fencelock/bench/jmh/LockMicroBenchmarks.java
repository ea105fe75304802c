package io.fencelock.bench.jmh;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.postgres.PostgresLockBackend;
import io.fencelock.redis.RedisLockBackend;
import io.fencelock.spi.LockBackend;
import io.fencelock.spi.RenewRequest;
import io.fencelock.testservers.postgres.PostgresServer;
import io.fencelock.testservers.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Micro-level figures of the comparison run, under JMH: one acquire + release through the engine,
 * and one batched renew of 100 held leases, on PostgreSQL and Redis from lock-tck's fixtures.
 * {@code ./mvnw -q -Pjmh -DskipTests verify -pl lock-bench -am}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
public class LockMicroBenchmarks {
    private static final int RENEW_BATCH = 100;

    @Param({"postgres", "redis"})
    public String backend;

    private AutoCloseable server;
    private LockBackend lockBackend;
    private LockClient client;
    private List<RenewRequest> renewBatch;

    @Setup(Level.Trial)
    public void start() {
        if (backend.equals("postgres")) {
            PostgresServer pg = PostgresServer.start();
            server = pg;
            String url = pg.createDatabase("jmh");
            PostgresLockBackend.builder()
                    .jdbcUrl(url)
                    .user(pg.user())
                    .password(pg.password())
                    .createTable(true)
                    .build()
                    .close();
            lockBackend = PostgresLockBackend.builder()
                    .jdbcUrl(url)
                    .user(pg.user())
                    .password(pg.password())
                    .build();
        } else {
            RedisServer redis = RedisServer.start(RedisServer.Persistence.NONE);
            server = redis;
            lockBackend = RedisLockBackend.builder().uri(redis.uri()).build();
        }
        client = LockClient.create(
                lockBackend, LockOptions.builder().autoRenew(false).build());
        renewBatch = new ArrayList<>();
        for (int i = 0; i < RENEW_BATCH; i++) {
            Lease lease = client.tryAcquire("jmh-renew-" + i).orElseThrow();
            renewBatch.add(new RenewRequest(lease.name(), lease.leaseId(), Duration.ofSeconds(30), null));
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        client.close();
        server.close();
    }

    @Benchmark
    public boolean acquireRelease() {
        return client.tryAcquire("jmh-cycle").orElseThrow().release();
    }

    @Benchmark
    public int renewBatchOf100() {
        return lockBackend.renew(renewBatch).size();
    }
}
