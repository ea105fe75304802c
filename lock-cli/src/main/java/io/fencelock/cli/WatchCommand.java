package io.fencelock.cli;

import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(
        name = "watch",
        mixinStandardHelpOptions = true,
        description = {
            "A live view: lists the locks under PREFIX every --interval and prints what changed, one line each:"
                    + " held (at the start), acquired, released, token-changed (a new grant, or a token-period"
                    + " renewal, between two looks). Times are this machine's clock at the look.",
            "A change undone between two looks is not seen. A failed look that may work again is reported and"
                    + " the watch goes on; runs until stopped, or for --iterations looks."
        },
        footer = ExitCodes.HELP)
final class WatchCommand extends BackendCommand {
    private static final Duration MIN_INTERVAL = Duration.ofMillis(10);

    @Mixin
    Names.PrefixArgument prefix;

    @Option(
            names = "--interval",
            paramLabel = "DURATION",
            converter = Durations.class,
            defaultValue = "1s",
            description = "time between two looks (default ${DEFAULT-VALUE}), at least 10ms")
    Duration interval;

    @Option(names = "--iterations", paramLabel = "N", description = "stop after N looks (default: run until stopped)")
    Integer iterations;

    /** One change between two looks. */
    record Change(String kind, LockInfo lock, Long previousToken) {}

    @Override
    void validate() {
        if (interval.compareTo(MIN_INTERVAL) < 0) {
            throw usage("--interval " + interval + " is too short: at least " + MIN_INTERVAL.toMillis() + "ms");
        }
        if (iterations != null && iterations < 1) {
            throw usage("--iterations " + iterations + " must be 1 or more");
        }
    }

    @Override
    int run(LockClient locks) {
        Map<String, LockInfo> last = null;
        for (int look = 0; iterations == null || look < iterations; look++) {
            if (look > 0) {
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException stopped) {
                    Thread.currentThread().interrupt();
                    return ExitCodes.OK; // stopped from outside: the end of a live view
                }
            }
            List<LockInfo> now;
            try {
                now = locks.list(prefix.value);
            } catch (RuntimeException e) {
                if (Thread.currentThread().isInterrupted()) {
                    return ExitCodes.OK; // stopped from outside in the middle of a look
                }
                if (!(e instanceof LockBackendException failure) || !failure.isRetryable()) {
                    throw e;
                }
                err().println("fencelock: " + Instant.now() + " look failed, trying again: "
                        + root.secrets.scrub(e.getMessage()));
                err().flush();
                continue;
            }
            Map<String, LockInfo> current = new LinkedHashMap<>();
            now.forEach(info -> current.put(info.name(), info));
            Instant at = Instant.now();
            for (Change change : changes(last, current)) {
                out().println(json ? json(at, change) : text(at, change));
            }
            out().flush();
            last = current;
        }
        return ExitCodes.OK;
    }

    /** What differs between two looks, by name; everything is "held" at the first look ({@code before} null). */
    static List<Change> changes(Map<String, LockInfo> before, Map<String, LockInfo> now) {
        List<Change> out = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(now.keySet());
        if (before != null) {
            names.addAll(before.keySet());
        }
        for (String name : names) {
            LockInfo was = before == null ? null : before.get(name);
            LockInfo is = now.get(name);
            if (before == null) {
                out.add(new Change("held", is, null));
            } else if (was == null) {
                out.add(new Change("acquired", is, null));
            } else if (is == null) {
                out.add(new Change("released", was, null));
            } else if (is.token() != was.token()) {
                out.add(new Change("token-changed", is, was.token()));
            }
        }
        return out;
    }

    private static String text(Instant at, Change c) {
        LockInfo i = c.lock();
        StringBuilder s = new StringBuilder(at.truncatedTo(ChronoUnit.MILLIS).toString())
                .append("  ")
                .append(String.format("%-13s", c.kind()))
                .append("  ")
                .append(i.name())
                .append("  token ");
        if (c.previousToken() != null) {
            s.append(c.previousToken()).append(" -> ");
        }
        s.append(i.token());
        if (!c.kind().equals("released")) {
            i.owner().ifPresent(o -> s.append("  owner ").append(o));
            i.type().ifPresent(t -> s.append("  type ").append(t));
            if (!i.data().isEmpty()) {
                s.append("  data ").append(Rendering.data(i.data()));
            }
            s.append("  expires ").append(Rendering.expires(i));
        }
        return s.toString();
    }

    private static String json(Instant at, Change c) {
        return "{\"time\":" + Rendering.instant(at) + ",\"event\":\"" + c.kind() + "\",\"previousToken\":"
                + c.previousToken() + ",\"lock\":" + Rendering.json(c.lock()) + "}";
    }
}
