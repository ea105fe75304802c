package io.fencelock.tck.history;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * A broken safety property found in a history.
 *
 * @param property the property's contract name, e.g. {@code certainHoldsNeverOverlap}
 * @param message  what went wrong, in terms of leases, tokens and times
 * @param evidence the events that show it, in time order
 */
public record Violation(String property, String message, List<Event> evidence) {

    public Violation {
        Objects.requireNonNull(property, "property");
        Objects.requireNonNull(message, "message");
        // distinct: one event may be evidence twice (it ends one hold and is a grant)
        evidence = evidence.stream()
                .distinct()
                .sorted(Comparator.comparingLong(Event::timeNanos))
                .toList();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(property).append(": ").append(message);
        for (Event event : evidence) {
            sb.append("\n    ").append(event);
        }
        return sb.toString();
    }
}
