package io.fencelock.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Runs the command line's entry in this JVM with its output captured, as a shell would see it. */
final class Cli {
    private Cli() {}

    /** Exit code, stdout and stderr of one run; {@code logs} is what went to System.err meanwhile (the drivers' logging). */
    record Result(int exitCode, String out, String err, String logs) {
        /** Everything the operator would see. */
        String all() {
            return out + err + logs;
        }

        /** The table's rows (header keys), cells split at two or more spaces. */
        List<Map<String, String>> rows() {
            String[] lines = out.split("\\R");
            String[] header = lines[0].split(" {2,}");
            List<Map<String, String>> rows = new ArrayList<>();
            for (int i = 1; i < lines.length; i++) {
                if (lines[i].isBlank()) {
                    continue;
                }
                String[] cells = lines[i].split(" {2,}");
                Map<String, String> row = new LinkedHashMap<>();
                for (int c = 0; c < header.length; c++) {
                    row.put(header[c], c < cells.length ? cells[c] : "");
                }
                rows.add(row);
            }
            return rows;
        }

        /** The row of lock {@code name}; fails when there is none. */
        Map<String, String> row(String name) {
            return rows().stream()
                    .filter(r -> r.get("NAME").equals(name))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no row for " + name + " in:\n" + out + err));
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- out:\n" + out + "--- err:\n" + err + "--- logs:\n" + logs;
        }
    }

    static Result run(Map<String, String> env, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        PrintStream systemErr = System.err;
        ByteArrayOutputStream logs = new ByteArrayOutputStream();
        // slf4j-simple writes to whatever System.err is at the time of each line
        System.setErr(new PrintStream(logs, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = FencelockCli.run(
                    args.toArray(String[]::new), env, new PrintWriter(out, true), new PrintWriter(err, true));
        } finally {
            System.setErr(systemErr);
        }
        return new Result(code, out.toString(), err.toString(), logs.toString(StandardCharsets.UTF_8));
    }

    static Result run(List<String> args) {
        return run(Map.of(), args);
    }

    /** {@code command} followed by the target's connection options and {@code more}. */
    static List<String> args(String command, Targets.Target target, String... more) {
        List<String> all = new ArrayList<>(List.of(command.split(" ")));
        all.addAll(target.cliArgs());
        all.addAll(List.of(more));
        return all;
    }
}
