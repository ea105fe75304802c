package io.fencelock.cli;

import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(
        name = "release",
        mixinStandardHelpOptions = true,
        description = {
            "Ends the current grant of NAME, whoever holds it (needs --force). The next grant gets a higher"
                    + " fencing token, so the old holder's late writes are rejected by a fenced resource; its"
                    + " next renewal is refused and it learns of the loss.",
            "Exit code 1 when the lock is free, or changed hands between the read and the release."
        },
        footer = ExitCodes.HELP)
final class ReleaseCommand extends BackendCommand {
    @Parameters(index = "0", paramLabel = "NAME", converter = Names.Name.class, description = "the lock name")
    String name;

    @Option(names = "--force", description = "yes, end another process's grant")
    boolean force;

    @Override
    void validate() {
        if (!force) {
            throw usage("release ends another process's grant of '" + name
                    + "': add --force to do it (its holder may still be working; only a fenced resource stops"
                    + " its late writes)");
        }
    }

    @Override
    int run(LockClient locks) {
        Optional<LockInfo> ended = locks.forceRelease(name);
        if (ended.isEmpty()) {
            Optional<LockInfo> now = locks.inspect(name);
            if (now.isPresent() && now.get().held()) {
                throw new Failure(
                        ExitCodes.NOT_FOUND,
                        "lock '" + name + "' changed hands while it was being released; nothing done (run again to"
                                + " end the new grant, token " + now.get().token() + ")");
            }
            throw new Failure(ExitCodes.NOT_FOUND, "lock '" + name + "' is free; nothing to release");
        }
        LockInfo info = ended.get();
        if (json) {
            out().println("{\"released\":true,\"lock\":" + Rendering.json(info) + "}");
        } else {
            out().println("released '" + name + "': ended the grant with token " + info.token() + " (owner "
                    + info.owner().orElse("unknown") + "); the next grant gets a higher token");
        }
        out().flush();
        return ExitCodes.OK;
    }
}
