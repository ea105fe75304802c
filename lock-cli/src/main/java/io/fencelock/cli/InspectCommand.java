package io.fencelock.cli;

import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(
        name = "inspect",
        mixinStandardHelpOptions = true,
        description = "The backend's record of one lock: held or free, its last token, and the holder's"
                + " owner, type, data, grant time and expiry. Exit code 1 when the backend has no record of it.",
        footer = ExitCodes.HELP)
final class InspectCommand extends BackendCommand {
    @Parameters(index = "0", paramLabel = "NAME", converter = Names.Name.class, description = "the lock name")
    String name;

    @Override
    int run(LockClient locks) {
        Optional<LockInfo> info = locks.inspect(name);
        if (info.isEmpty()) {
            throw new Failure(ExitCodes.NOT_FOUND, "no record of lock '" + name + "' on this backend");
        }
        out().print(json ? Rendering.json(info.get()) + System.lineSeparator() : Rendering.table(List.of(info.get())));
        out().flush();
        return ExitCodes.OK;
    }
}
