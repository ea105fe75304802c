package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.inmemory.InMemoryLockBackend;
import io.fencelock.spi.MetadataCodec;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LockMetadataTest {

    @Test
    void roundTripsThroughTheCodec() {
        LockMetadata m = new LockMetadata(
                "host-1/42/fencelock-3", "job", Map.of("b", "\"quoted\" \\ {x}", "a", "caf\u00e9", "e", ""));
        String json = MetadataCodec.encode(m);
        assertThat(json).startsWith("{\"owner\":\"host-1/42/fencelock-3\",\"type\":\"job\",\"data\":{\"a\"");
        assertThat(MetadataCodec.decode(json)).isEqualTo(m);
        LockMetadata other = m.withOwner("host-2/43/fencelock-4");
        assertThat(MetadataCodec.encode(other))
                .as("another metadata, its own text")
                .startsWith("{\"owner\":\"host-2/");
        assertThat(MetadataCodec.encode(m))
                .as("the same metadata again, the same text")
                .isEqualTo(json);
        assertThat(MetadataCodec.decodeData(MetadataCodec.encodeData(m.data()))).isEqualTo(m.data());
        assertThat(MetadataCodec.decode(MetadataCodec.encode(LockMetadata.NONE)))
                .isEqualTo(LockMetadata.NONE);
        assertThat(MetadataCodec.decode("not json")).isEqualTo(LockMetadata.NONE);
        assertThat(MetadataCodec.decode(null)).isEqualTo(LockMetadata.NONE);
    }

    @Test
    void dataIsSortedAndImmutable() {
        Map<String, String> data = new LinkedHashMap<>();
        data.put("z", "1");
        data.put("a", "2");
        LockMetadata m = new LockMetadata(null, null, data);
        assertThat(m.data().keySet()).containsExactly("a", "z");
        assertThatThrownBy(() -> m.data().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void badMetadataIsNamedWithItsRule() {
        assertThatThrownBy(() -> new LockMetadata("a\u0007b", null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("owner 'a\\u0007b'")
                .hasMessageContaining("U+0007");
        assertThatThrownBy(() -> new LockMetadata("x".repeat(201), null, null))
                .hasMessageContaining("201 characters")
                .hasMessageContaining("200");
        assertThatThrownBy(() -> new LockMetadata(null, "a b", null)).hasMessageContaining("'a b'");
        assertThatThrownBy(() -> new LockMetadata(null, null, Map.of("bad key", "v")))
                .hasMessageContaining("'bad key'");
        Map<String, String> many = new LinkedHashMap<>();
        for (int i = 0; i < 17; i++) {
            many.put("k" + i, "v");
        }
        assertThatThrownBy(() -> new LockMetadata(null, null, many)).hasMessageContaining("17 entries");
        assertThatThrownBy(() -> new LockMetadata(null, null, Map.of("k", "x".repeat(2048))))
                .hasMessageContaining("2049 bytes");
        assertThatThrownBy(() -> LockOptions.builder().owner("line\nbreak").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character");
    }

    @Test
    void theClientFillsInItsOwner() {
        try (LockClient named = LockClient.create(
                        InMemoryLockBackend.builder().build(),
                        LockOptions.builder().owner("billing worker 3").build());
                LockClient unnamed =
                        LockClient.create(InMemoryLockBackend.builder().build(), LockOptions.defaults())) {
            assertThat(named.tryAcquire("a").orElseThrow().metadata().owner()).isEqualTo("billing worker 3");
            Lease lease = unnamed.tryAcquire("a").orElseThrow();
            assertThat(lease.metadata().owner())
                    .contains("/" + ProcessHandle.current().pid() + "/")
                    .endsWith(unnamed.clientId());
            assertThat(unnamed.inspect("a").orElseThrow().owner())
                    .contains(lease.metadata().owner());
            assertThat(unnamed.backendName()).isEqualTo("InMemoryLockBackend");
        }
    }
}
