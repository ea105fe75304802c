package io.fencelock.bench;

import java.io.PrintStream;
import java.util.Locale;

/** The progress display: one line per step, with the time since the start, so a reader sees what runs. */
final class Progress {
    private final PrintStream out;
    private final long start = System.nanoTime();

    Progress(PrintStream out) {
        this.out = out;
    }

    double elapsedSeconds() {
        return (System.nanoTime() - start) / 1e9;
    }

    void line(String backend, String text) {
        out.printf(Locale.ROOT, "[%6.1f s] %-8s %s%n", elapsedSeconds(), backend, text);
        out.flush();
    }
}
