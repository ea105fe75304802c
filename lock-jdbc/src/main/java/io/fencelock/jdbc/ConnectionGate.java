package io.fencelock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Admits at most as many borrowers to the backend's own pool as it has connections; the others wait here,
 * first come first served. HikariCP asks its connection adder for a new connection on every borrow that
 * finds none idle, even when the pool is full, and the returning thread spins until a waiter takes its
 * connection: with 64 threads on a pool of 8 the adder alone took 9 to 19 µs of CPU a lock cycle on
 * PostgreSQL and MariaDB (docs/comparison-history.md, "CPU per cycle by thread"). A borrower admitted here finds an idle connection, so neither happens.
 *
 * <p>The wait for a turn mirrors HikariCP's own: bounded by the pool's connection timeout (then a
 * {@link SQLTransientConnectionException}, retryable), and an interrupt ends it only when the caller must
 * wait (a free connection is handed out whatever the thread's interrupt status, which stays set). An
 * admitted borrower waits in HikariCP only while a connection is being made (one that broke is replaced),
 * again within the connection timeout.
 */
final class ConnectionGate {
    private final Semaphore admitted;
    private final int size;
    private final long timeoutMillis;
    private final String poolName;

    ConnectionGate(int size, long timeoutMillis, String poolName) {
        this.admitted = new Semaphore(size, true);
        this.size = size;
        this.timeoutMillis = timeoutMillis;
        this.poolName = poolName;
    }

    /** A connection of {@code pool} whose close (or abort) lets the next borrower in. */
    Connection borrow(DataSource pool) throws SQLException {
        admit();
        Connection c;
        try {
            c = pool.getConnection();
        } catch (SQLException | RuntimeException | Error e) {
            admitted.release();
            throw e;
        }
        return admittedWhile(c);
    }

    /** Permits not taken: the pool's size when no borrower is in (for tests). */
    int free() {
        return admitted.availablePermits();
    }

    private void admit() throws SQLException {
        boolean interrupted = Thread.interrupted();
        try {
            // an interrupted caller is admitted only if nobody waits before it and a connection is free
            boolean in = interrupted
                    ? admitted.tryAcquire(0, TimeUnit.MILLISECONDS)
                    : admitted.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS);
            if (in) {
                return;
            }
            if (interrupted) {
                throw new SQLException(poolName + " - interrupted while waiting for a connection");
            }
            throw new SQLTransientConnectionException(
                    poolName + " - no connection available within " + timeoutMillis + " ms (all " + size + " in use)");
        } catch (InterruptedException e) {
            interrupted = true;
            throw new SQLException(poolName + " - interrupted while waiting for a connection", e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code c}, whose first close or abort gives the permit back; every other call goes to {@code c}. */
    private Connection admittedWhile(Connection c) {
        AtomicBoolean out = new AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(
                ConnectionGate.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    String name = method.getName();
                    boolean leaving = name.equals("close") && method.getParameterCount() == 0
                            || name.equals("abort") && method.getParameterCount() == 1;
                    try {
                        return method.invoke(c, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (leaving && out.compareAndSet(false, true)) {
                            admitted.release();
                        }
                    }
                });
    }
}
