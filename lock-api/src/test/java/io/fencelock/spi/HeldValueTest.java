package io.fencelock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LockMetadata;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeldValueTest {
    @Test
    void roundTripsAndChecksOwnersByTheLeaseIdAlone() {
        LockMetadata metadata = LockMetadata.of("host/1/c", "job", Map.of("note", "line\\nfeed \"q\""));
        String value = HeldValue.encode("lease-1", 1_700_000_000_123L, metadata);
        assertThat(value).startsWith("lease-1\n1700000000123\n{");
        assertThat(value.chars().filter(c -> c == '\n'))
                .as("line feeds: the two separators only")
                .hasSize(2);
        assertThat(HeldValue.decode(value))
                .isEqualTo(new HeldValue("lease-1", Instant.ofEpochMilli(1_700_000_000_123L), metadata));
        assertThat(HeldValue.decode(HeldValue.encode("l", 5, LockMetadata.NONE)))
                .isEqualTo(new HeldValue("l", Instant.ofEpochMilli(5), LockMetadata.NONE));
        assertThat(HeldValue.decode("bare-lease-id"))
                .as("a value written before metadata")
                .isEqualTo(new HeldValue("bare-lease-id", null, LockMetadata.NONE));

        assertThat(HeldValue.heldBy(value, "lease-1")).isTrue();
        assertThat(HeldValue.heldBy(value, "lease-")).isFalse();
        assertThat(HeldValue.heldBy(value, "lease-12")).isFalse();
        assertThat(HeldValue.heldBy("lease-1", "lease-1")).isFalse();
        assertThatThrownBy(() -> HeldValue.requireLeaseId("lease-1\n1700000000123"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'lease-1\\n1700000000123'")
                .hasMessageContaining("line feed");
    }
}
