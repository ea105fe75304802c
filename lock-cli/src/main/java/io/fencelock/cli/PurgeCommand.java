package io.fencelock.cli;

import io.fencelock.Capability;
import io.fencelock.LockClient;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
        name = "purge",
        mixinStandardHelpOptions = true,
        description = "Deletes the records of locks free for at least DURATION, on a backend that can do so without"
                + " ever lowering a later token (PURGE_FREE). Exit code 4 on a backend that cannot.",
        footer = ExitCodes.HELP)
final class PurgeCommand extends BackendCommand {
    @Option(
            names = "--free-for",
            required = true,
            paramLabel = "DURATION",
            converter = Durations.class,
            description = "how long a lock must have been free, e.g. 30s, 5m, 1h, PT1H")
    Duration freeFor;

    @Override
    int run(LockClient locks) {
        if (!locks.capabilities().contains(Capability.PURGE_FREE)) {
            throw new Failure(
                    ExitCodes.UNSUPPORTED,
                    "the " + locks.backendName() + " backend cannot purge free lock records (it does not declare"
                            + " PURGE_FREE: deleting them could let a later token be lower); nothing done");
        }
        int purged = locks.purgeFree(freeFor);
        out().println(
                        json
                                ? "{\"purged\":" + purged + ",\"freeFor\":\"" + freeFor + "\"}"
                                : "purged " + purged + " record(s) of locks free for at least " + freeFor);
        out().flush();
        return ExitCodes.OK;
    }
}
