package io.fencelock.tck.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.fencelock.tck.history.Event;
import org.junit.jupiter.api.Test;

class EventLinesTest {

    @Test
    void anEventSurvivesTheLineProtocol() {
        Event e = new Event(
                3,
                17,
                Event.Type.OK,
                Event.Kind.ACQUIRE,
                "name:with/odd chars",
                "lease id",
                42,
                true,
                123_456_789L,
                987_654_321L,
                "detail with spaces\nand a newline");
        String line = EventLines.event(e);
        assertThat(line).doesNotContain("\n").startsWith("event ");
        Event back = EventLines.event(line.split(" "), 99);
        assertThat(back)
                .isEqualTo(new Event(
                        3,
                        99,
                        Event.Type.OK,
                        Event.Kind.ACQUIRE,
                        "name:with/odd chars",
                        "lease id",
                        42,
                        true,
                        123_456_789L,
                        987_654_321L,
                        "detail with spaces\nand a newline"));
    }

    @Test
    void nullFieldsStayNull() {
        Event e = new Event(1, 2, Event.Type.INVOKE, Event.Kind.LOST, null, null, 0, false, 0, 5, null);
        Event back = EventLines.event(EventLines.event(e).split(" "), 2);
        assertThat(back).isEqualTo(e);
    }
}
