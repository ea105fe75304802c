package io.fencelock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SqlIdentifiersTest {

    @Test
    void plainIdentifiersPassOthersAreRefused() {
        assertThat(SqlIdentifiers.require("table", "fencelock_locks")).isEqualTo("fencelock_locks");
        assertThat(SqlIdentifiers.require("schema", "_s1")).isEqualTo("_s1");
        for (String bad : new String[] {"", "1abc", "a-b", "a.b", "a b", "x\"; drop", "a".repeat(64)}) {
            assertThatThrownBy(() -> SqlIdentifiers.require("table", bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table")
                    .hasMessageContaining("plain SQL identifier");
        }
        assertThatThrownBy(() -> SqlIdentifiers.require("schema", null)).hasMessageContaining("schema null");
    }
}
