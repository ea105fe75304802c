package io.fencelock.cli;

import io.fencelock.Capability;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = "The locks held now whose names start with PREFIX (default: all), sorted by name.",
        footer = ExitCodes.HELP)
final class ListCommand extends BackendCommand {
    @Mixin
    Names.PrefixArgument prefix;

    @Option(
            names = "--type",
            paramLabel = "TYPE",
            converter = Names.Type.class,
            description = "only locks of this lock type")
    String type;

    @Option(
            names = "--owner",
            paramLabel = "OWNER",
            converter = Names.Owner.class,
            description = "only locks with this owner description")
    String owner;

    @Option(names = "--count", description = "a summary instead: how many locks per type and owner")
    boolean count;

    @Override
    int run(LockClient locks) {
        Predicate<LockInfo> where = info -> true;
        if (type != null) {
            where = where.and(LockInfo.ofType(type));
        }
        if (owner != null) {
            where = where.and(LockInfo.ownedBy(owner));
        }
        if ((type != null || owner != null) && !locks.capabilities().contains(Capability.METADATA)) {
            err().println("fencelock: note: the " + locks.backendName()
                    + " backend keeps no lock metadata (no METADATA capability): --type and --owner match nothing");
        }
        List<LockInfo> found = locks.list(prefix.value, where);
        if (count) {
            printCounts(found);
        } else {
            out().print(json ? Rendering.json(found) + System.lineSeparator() : Rendering.table(found));
        }
        out().flush();
        return ExitCodes.OK;
    }

    private void printCounts(List<LockInfo> found) {
        Map<List<String>, Integer> groups = new TreeMap<>(
                Comparator.<List<String>, String>comparing(k -> k.get(0)).thenComparing(k -> k.get(1)));
        for (LockInfo info : found) {
            groups.merge(List.of(info.type().orElse("-"), info.owner().orElse("-")), 1, Integer::sum);
        }
        if (json) {
            StringBuilder s = new StringBuilder("{\"total\":" + found.size() + ",\"groups\":[");
            String sep = "";
            for (Map.Entry<List<String>, Integer> g : groups.entrySet()) {
                s.append(sep)
                        .append("{\"type\":")
                        .append(Rendering.string(absentIsNull(g.getKey().get(0))))
                        .append(",\"owner\":")
                        .append(Rendering.string(absentIsNull(g.getKey().get(1))))
                        .append(",\"locks\":")
                        .append(g.getValue())
                        .append('}');
                sep = ",";
            }
            out().println(s.append("]}"));
            return;
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("TYPE", "OWNER", "LOCKS"));
        groups.forEach((k, n) -> rows.add(List.of(k.get(0), k.get(1), Integer.toString(n))));
        rows.add(List.of("total", "", Integer.toString(found.size())));
        out().print(Rendering.grid(rows));
    }

    /** "-" marks an absent type or owner in the table; JSON says null. */
    private static String absentIsNull(String cell) {
        return cell.equals("-") ? null : cell;
    }
}
