package io.fencelock.cli;

import io.fencelock.LockInfo;
import io.fencelock.spi.MetadataCodec;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Lock records as a table for people and as JSON for scripts (written here: no JSON library for this). */
final class Rendering {
    static final List<String> COLUMNS =
            List.of("NAME", "HELD", "TOKEN", "OWNER", "TYPE", "HELD SINCE", "EXPIRES", "DATA");
    private static final String NONE = "-";

    private Rendering() {}

    /** The records as a table with a header row; columns as wide as their widest cell. */
    static String table(List<LockInfo> locks) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(COLUMNS);
        for (LockInfo info : locks) {
            rows.add(row(info));
        }
        return grid(rows);
    }

    static List<String> row(LockInfo info) {
        return List.of(
                info.name(),
                info.held() ? "yes" : "no",
                Long.toString(info.token()),
                info.owner().filter(o -> !o.isBlank()).orElse(NONE), // a blank cell would shift the columns
                info.type().orElse(NONE),
                info.held() && info.heldSince() != null ? time(info.heldSince()) : NONE,
                info.held() ? expires(info) : NONE,
                data(info.data()));
    }

    /** Rows of cells, left-aligned, two spaces apart, without trailing blanks. */
    static String grid(List<List<String>> rows) {
        int columns = rows.get(0).size();
        int[] width = new int[columns];
        for (List<String> row : rows) {
            for (int c = 0; c < columns; c++) {
                width[c] = Math.max(width[c], row.get(c).length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                line.append(row.get(c));
                if (c < columns - 1) {
                    line.append(" ".repeat(width[c] - row.get(c).length() + 2));
                }
            }
            out.append(line.toString().stripTrailing()).append(System.lineSeparator());
        }
        return out.toString();
    }

    /** A server time to the second, in UTC. */
    static String time(Instant instant) {
        return instant.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** Time left on the holder's lease, judged by the server's clock when it answered (never this machine's). */
    static String expires(LockInfo info) {
        if (info.expiresAt() == null) {
            return NONE;
        }
        if (info.serverTime() == null) {
            return time(info.expiresAt());
        }
        Duration left = Duration.between(info.serverTime(), info.expiresAt());
        if (left.isNegative()) {
            return "expired";
        }
        long tenths = left.toMillis() / 100;
        return tenths < 600
                ? "in " + tenths / 10 + "." + tenths % 10 + "s"
                : "in " + left.toMinutes() + "m" + left.toSecondsPart() + "s";
    }

    static String data(Map<String, String> data) {
        return data.isEmpty()
                ? NONE
                : data.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining(","));
    }

    // ---------------------------------------------------------------- JSON

    static String json(List<LockInfo> locks) {
        return locks.stream().map(Rendering::json).collect(Collectors.joining(",", "[", "]"));
    }

    static String json(LockInfo info) {
        return "{\"name\":" + MetadataCodec.quote(info.name())
                + ",\"held\":" + info.held()
                + ",\"token\":" + info.token()
                + ",\"owner\":" + string(info.owner().orElse(null))
                + ",\"type\":" + string(info.type().orElse(null))
                + ",\"heldSince\":" + instant(info.held() ? info.heldSince() : null)
                + ",\"expiresAt\":" + instant(info.held() ? info.expiresAt() : null)
                + ",\"serverTime\":" + instant(info.serverTime())
                + ",\"data\":" + MetadataCodec.encodeData(info.data())
                + "}";
    }

    static String string(String s) {
        return s == null ? "null" : MetadataCodec.quote(s);
    }

    static String instant(Instant instant) {
        return instant == null ? "null" : MetadataCodec.quote(instant.toString());
    }
}
