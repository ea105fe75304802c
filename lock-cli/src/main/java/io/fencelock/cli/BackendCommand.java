package io.fencelock.cli;

import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.spi.Redaction;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A command that reads or changes locks on one backend: checks its own arguments, opens the client
 * (the provider checks the URI and properties before any I/O), runs, and closes the client. A
 * backend failure becomes exit code 3 with the URI redacted.
 */
abstract class BackendCommand implements Callable<Integer> {
    @ParentCommand
    FencelockCli root;

    @Spec
    CommandSpec spec;

    @Mixin
    Connection connection;

    @Option(names = "--json", description = "machine output: JSON instead of a table")
    boolean json;

    /** Checks what parsing could not, before any I/O; throws {@link CommandLine.ParameterException}. */
    void validate() {}

    /** The command's work on an open client; returns the exit code. */
    abstract int run(LockClient locks) throws Exception;

    @Override
    public final Integer call() throws Exception {
        validate();
        String uri = connection.uri(spec.commandLine(), root.env);
        try (LockClient locks = connection.open(spec.commandLine(), root.env)) {
            return run(locks);
        } catch (LockBackendException e) {
            String message = Redaction.message(e.getMessage(), uri);
            String where = Redaction.uri(uri);
            throw new Failure(
                    ExitCodes.BACKEND,
                    "the backend " + (message.contains(where) ? "" : "at " + where + " ") + "failed"
                            + (e.isRetryable() ? " (it may work when tried again)" : "") + ": " + message);
        }
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
