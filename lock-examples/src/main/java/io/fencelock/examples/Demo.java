package io.fencelock.examples;

import io.fencelock.Lease;
import io.fencelock.LockClient;
import io.fencelock.LockOptions;
import io.fencelock.fencing.JdbcFence;
import io.fencelock.fencing.SqlDialect;
import io.fencelock.fencing.StaleTokenException;
import io.fencelock.postgres.PostgresLockBackend;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

/**
 * The README's first command: two clients contend for one lock on an embedded PostgreSQL (real
 * PostgreSQL binaries from Maven Central, nothing to install), and the fencing token rises with
 * every new holder, including after a holder that stopped renewing is taken over. The report table
 * is fenced by lock-fencing's {@link JdbcFence}: the frozen holder's late write is refused there.
 */
public final class Demo {
    private static final String LOCK = "demo:nightly-report";
    private static final JdbcFence FENCE =
            JdbcFence.builder(SqlDialect.POSTGRESQL).build();
    private static DataSource storage;

    private Demo() {}

    public static void main(String[] args) throws Exception {
        System.out.println("Starting an embedded PostgreSQL...");
        // zonky turns fsync and synchronous_commit off; on, a grant is on disk before it returns (DURABLE_TOKENS)
        try (EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .start()) {
            String url = pg.getJdbcUrl("postgres", "postgres");
            storage = pg.getPostgresDatabase();
            try (Connection c = storage.getConnection();
                    Statement s = c.createStatement()) {
                FENCE.createTable(c);
                s.execute("CREATE TABLE IF NOT EXISTS report (id INT PRIMARY KEY, written_by TEXT NOT NULL)");
            }
            LockOptions options =
                    LockOptions.builder().ttl(Duration.ofSeconds(2)).build();
            try (LockClient a = client(pg, options);
                    LockClient b = client(pg, options)) {
                System.out.println(
                        "PostgreSQL at " + url.replaceAll("\\?.*", "") + "; capabilities " + a.capabilities());
                System.out.println();
                contend(a, b);
                takeover(pg, b);
            }
        }
    }

    private static LockClient client(EmbeddedPostgres pg, LockOptions options) {
        PostgresLockBackend backend = PostgresLockBackend.builder()
                .dataSource(pg.getPostgresDatabase())
                .createTable(true)
                .build();
        return LockClient.create(backend, options);
    }

    /** Both clients loop: wait for the lock, write with its token, hold it briefly, release. */
    private static void contend(LockClient a, LockClient b) throws InterruptedException {
        System.out.println("1. Two workers contend; each new holder gets a higher token:");
        CountDownLatch done = new CountDownLatch(2);
        for (LockClient client : new LockClient[] {a, b}) {
            String worker = client == a ? "worker-A" : "worker-B";
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < 3; i++) {
                        Optional<Lease> lease = client.acquire(LOCK, Duration.ofSeconds(10));
                        if (lease.isEmpty()) {
                            continue;
                        }
                        try (Lease held = lease.get()) {
                            write(worker, held.fencingToken());
                            Thread.sleep(150);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
            t.start();
        }
        done.await();
        System.out.println();
    }

    /** A holder stops renewing (a crashed or frozen process); the other takes over after the TTL. */
    private static void takeover(EmbeddedPostgres pg, LockClient b) throws InterruptedException {
        System.out.println("2. worker-A freezes while holding the lock (it stops renewing):");
        LockOptions frozen = b.options().toBuilder().autoRenew(false).build();
        try (LockClient stuck = client(pg, frozen)) {
            Lease zombie = stuck.tryAcquire(LOCK).orElseThrow();
            write("worker-A", zombie.fencingToken());
            long start = System.nanoTime();
            Lease next = b.acquire(LOCK, Duration.ofSeconds(10)).orElseThrow();
            System.out.printf(
                    "   worker-B took over after %d ms (TTL %d ms) with token %d%n",
                    (System.nanoTime() - start) / 1_000_000, frozen.ttl().toMillis(), next.fencingToken());
            write("worker-B", next.fencingToken());
            System.out.println("   worker-A wakes up, its lease valid? " + zombie.isValid() + " — it writes anyway:");
            write("worker-A", zombie.fencingToken());
            next.release();
        }
    }

    /** Writes the report row through the fence: only if no higher token has written it before. */
    private static void write(String worker, long token) {
        try (Connection c = storage.getConnection()) {
            FENCE.write(c, LOCK, token, tx -> {
                try (PreparedStatement ps = tx.prepareStatement("INSERT INTO report (id, written_by) VALUES (1, ?)"
                        + " ON CONFLICT (id) DO UPDATE SET written_by = EXCLUDED.written_by")) {
                    ps.setString(1, worker + " with token " + token);
                    return ps.executeUpdate();
                }
            });
            System.out.printf("   %s holds the lock with token %d -> write accepted%n", worker, token);
        } catch (StaleTokenException e) {
            System.out.printf(
                    "   %s writes with stale token %d (the report table has accepted %d) -> write REJECTED%n",
                    worker, e.offeredToken(), e.currentToken());
        } catch (SQLException e) {
            throw new IllegalStateException("cannot write the report: " + e.getMessage(), e);
        }
    }
}
