package io.fencelock.cli;

import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The operator's command line: {@code list}, {@code inspect}, {@code watch}, {@code release --force},
 * {@code purge} and {@code providers} on any provider's backend. {@link #main} is the executable
 * jar's entry; {@link #run} is the same without {@code System.exit}, for tests and embedding.
 */
@Command(
        name = "fencelock",
        mixinStandardHelpOptions = true,
        versionProvider = FencelockCli.Version.class,
        description = "Look at and manage fencelock locks on any backend.",
        subcommands = {
            ListCommand.class,
            InspectCommand.class,
            WatchCommand.class,
            ReleaseCommand.class,
            PurgeCommand.class,
            ProvidersCommand.class
        },
        footer = ExitCodes.HELP)
public final class FencelockCli implements Callable<Integer> {
    final Map<String, String> env;
    final Secrets secrets;

    @Spec
    CommandSpec spec;

    private FencelockCli(Map<String, String> env, Secrets secrets) {
        this.env = Map.copyOf(env);
        this.secrets = secrets;
    }

    public static void main(String[] args) {
        if (System.getProperty("java.util.logging.config.file") == null) {
            // gRPC (etcd) logs through java.util.logging: as with the drivers' SLF4J lines, only errors
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.SEVERE);
        }
        PrintWriter out = new PrintWriter(System.out, true, Charset.defaultCharset());
        PrintWriter err = new PrintWriter(System.err, true, Charset.defaultCharset());
        System.exit(run(args, System.getenv(), out, err));
    }

    /**
     * Runs one command with {@code env} as the environment ({@code FENCELOCK_URI},
     * {@code FENCELOCK_USER}, {@code FENCELOCK_PASSWORD}) and returns its exit code (see
     * {@link ExitCodes}). Nothing printed to {@code out} or {@code err} holds a credential or an
     * unredacted connection string.
     */
    public static int run(String[] args, Map<String, String> env, PrintWriter out, PrintWriter err) {
        Secrets secrets = Secrets.of(args, env);
        CommandLine cli = new CommandLine(new FencelockCli(env, secrets));
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, arguments) -> {
            CommandLine failed = e.getCommandLine();
            err.println("fencelock: " + secrets.scrub(describe(e)));
            err.println("Try '" + failed.getCommandSpec().qualifiedName() + " --help' for usage.");
            err.flush();
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((e, failed, parsed) -> {
            int code;
            String message;
            if (e instanceof Failure f) {
                code = f.exitCode();
                message = f.getMessage();
            } else if (e instanceof IllegalArgumentException) {
                code = ExitCodes.USAGE; // the library's checks before any I/O
                message = e.getMessage();
            } else if (e instanceof UnsupportedOperationException) {
                code = ExitCodes.UNSUPPORTED;
                message = e.getMessage();
            } else {
                code = ExitCodes.BACKEND;
                message = "failed: " + e;
            }
            err.println("fencelock: " + secrets.scrub(message));
            err.flush();
            return code;
        });
        try {
            return cli.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Picocli's message, except that an unknown option is named without its value (it may be a secret). */
    private static String describe(CommandLine.ParameterException e) {
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched) {
            List<String> names = unmatched.getUnmatched().stream()
                    .map(arg -> arg.startsWith("-") && arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg)
                    .map(arg -> "'" + arg + "'")
                    .collect(Collectors.toList());
            return "unknown option or argument " + String.join(", ", names);
        }
        return e.getMessage();
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    /** The jar's version where its manifest names one. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = FencelockCli.class.getPackage().getImplementationVersion();
            return new String[] {"fencelock " + (version == null ? "(development build)" : version)};
        }
    }
}
