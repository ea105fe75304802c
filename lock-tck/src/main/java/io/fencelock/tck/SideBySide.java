package io.fencelock.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * Runs the TCK's independent runs (random schedules, connection-fault scenarios) side by side. Each
 * run has its own lock names, clients and history and is judged alone, so running several at once
 * changes no verdict; it only adds load, and saves the time the runs spend sleeping through holds,
 * pauses and faults.
 */
public final class SideBySide {
    private SideBySide() {}

    /**
     * The runs' results in the runs' order, {@code atOnce} of them at a time, each on a thread of its
     * own. A run that throws fails the whole: its {@link Error} or {@link Exception} is rethrown as is
     * (an {@link AssertionError} keeps the history it reports), once every run has ended.
     */
    public static <T> List<T> run(List<? extends Callable<T>> runs, int atOnce, String threadName) throws Exception {
        ExecutorService pool =
                Executors.newFixedThreadPool(Math.max(1, Math.min(atOnce, runs.size())), r -> daemon(r, threadName));
        try {
            List<Future<T>> running = new ArrayList<>();
            for (Callable<T> r : runs) {
                running.add(pool.submit(r));
            }
            List<T> results = new ArrayList<>();
            Throwable first = null;
            for (Future<T> f : running) {
                try {
                    results.add(f.get()); // each run bounds itself: a hang fails it
                } catch (ExecutionException e) {
                    if (first == null) {
                        first = e.getCause();
                    }
                }
            }
            if (first instanceof Error error) {
                throw error;
            }
            if (first instanceof Exception exception) {
                throw exception;
            }
            if (first != null) {
                throw new AssertionError(first);
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * {@code call} on a thread of its own, not the common pool: a call blocked on a broken connection
     * must not hold up another run's calls that queue behind it.
     */
    public static <T> CompletableFuture<T> onOwnThread(Supplier<T> call, String threadName) {
        return CompletableFuture.supplyAsync(call, r -> daemon(r, threadName).start());
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
