package io.fencelock.spi;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpiHelpersTest {

    @Test
    void plainIdentifiersPassOthersAreRefused() {
        assertThat(SqlIdentifiers.require("table", "fencelock_locks")).isEqualTo("fencelock_locks");
        assertThat(SqlIdentifiers.require("schema", "_s1")).isEqualTo("_s1");
        for (String bad : new String[] {"", "1abc", "a-b", "a.b", "a b", "x\"; drop", "a".repeat(64)}) {
            assertThatThrownBy(() -> SqlIdentifiers.require("table", bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table").hasMessageContaining("plain SQL identifier");
        }
        assertThatThrownBy(() -> SqlIdentifiers.require("schema", null)).hasMessageContaining("schema null");
    }

    @Test
    void redactionHidesCredentials() {
        assertThat(Redaction.uri("jdbc:postgresql://db:5432/app?user=bob&password=s3cret&ssl=true"))
                .doesNotContain("s3cret").doesNotContain("bob").contains("ssl=true").contains("db:5432/app");
        assertThat(Redaction.uri("postgresql://bob:s3cret@db/app")).isEqualTo("postgresql://***@db/app");
        assertThat(Redaction.uri("redis://:pw@host:6379")).isEqualTo("redis://***@host:6379");
        assertThat(Redaction.uri("jdbc:oracle:thin:scott/tiger@//db:1521/x")).isEqualTo("jdbc:oracle:thin:***@//db:1521/x");
        assertThat(Redaction.uri("jdbc:postgresql://db/app?password=a@b")).isEqualTo("jdbc:postgresql://db/app?password=***");
    }
}
