package io.fencelock.tck.fault;

import io.fencelock.tck.history.Event;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The line protocol between the TCK and a holder in a child JVM: history events and requests as
 * space-separated fields, free text Base64-encoded so that a line is always one line. Both JVMs
 * stamp events with {@link System#nanoTime()}; {@link HolderJvm} measures the offset between the
 * two clocks (none, unless libfaketime moved the child's) and merges the child's events into the
 * parent's history in true time order.
 */
final class EventLines {
    private EventLines() {}

    static String encode(String s) {
        return s == null
                ? "-"
                : "=" + Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static String decode(String field) {
        return field.equals("-")
                ? null
                : new String(Base64.getUrlDecoder().decode(field.substring(1)), StandardCharsets.UTF_8);
    }

    static String event(Event e) {
        return String.join(
                " ",
                "event",
                Integer.toString(e.process()),
                Long.toString(e.opId()),
                e.type().name(),
                e.kind().name(),
                encode(e.name()),
                encode(e.leaseId()),
                Long.toString(e.token()),
                Boolean.toString(e.flag()),
                Long.toString(e.deadlineNanos()),
                Long.toString(e.timeNanos()),
                encode(e.detail()));
    }

    /** Parses an {@code event} line; {@code opId} replaces the child's own (ids must be unique in the merged history). */
    static Event event(String[] f, long opId) {
        return new Event(
                Integer.parseInt(f[1]),
                opId,
                Event.Type.valueOf(f[3]),
                Event.Kind.valueOf(f[4]),
                decode(f[5]),
                decode(f[6]),
                Long.parseLong(f[7]),
                Boolean.parseBoolean(f[8]),
                Long.parseLong(f[9]),
                Long.parseLong(f[10]),
                decode(f[11]));
    }
}
