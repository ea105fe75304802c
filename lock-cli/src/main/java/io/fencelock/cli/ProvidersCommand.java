package io.fencelock.cli;

import io.fencelock.LockClient;
import io.fencelock.spi.LockBackendProvider;
import io.fencelock.spi.MetadataCodec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "providers",
        mixinStandardHelpOptions = true,
        description = "The providers in this build and the connection strings each accepts (connects to nothing).",
        footer = ExitCodes.HELP)
final class ProvidersCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--json", description = "machine output: JSON instead of a table")
    boolean json;

    @Override
    public Integer call() {
        List<LockBackendProvider> providers = new ArrayList<>(LockClient.providers());
        providers.sort(Comparator.comparing(LockBackendProvider::name));
        if (json) {
            spec.commandLine()
                    .getOut()
                    .println(providers.stream()
                            .map(p -> "{\"name\":" + MetadataCodec.quote(p.name()) + ",\"uriPrefixes\":"
                                    + p.uriPrefixes().stream()
                                            .map(MetadataCodec::quote)
                                            .collect(Collectors.joining(",", "[", "]"))
                                    + "}")
                            .collect(Collectors.joining(",", "[", "]")));
        } else {
            List<List<String>> rows = new ArrayList<>();
            rows.add(List.of("PROVIDER", "URI PREFIXES"));
            providers.forEach(p -> rows.add(List.of(p.name(), String.join(" ", p.uriPrefixes()))));
            spec.commandLine().getOut().print(Rendering.grid(rows));
        }
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
