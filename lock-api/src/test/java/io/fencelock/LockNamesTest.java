package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LockNamesTest {

    @Test
    void acceptsTheDocumentedCharacters() {
        assertThat(LockNames.requireValid("billing:invoice/2026-11_a.b@c+d=e#f"))
                .isNotEmpty();
        assertThat(LockNames.requireValid("x".repeat(255))).hasSize(255);
    }

    @Test
    void rejectsEmptyLongAndOddNamesNamingValueAndRule() {
        assertThatThrownBy(() -> LockNames.requireValid(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("''")
                .hasMessageContaining("1 to 255 characters");
        assertThatThrownBy(() -> LockNames.requireValid("x".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("length 256");
        assertThatThrownBy(() -> LockNames.requireValid("a b")).hasMessageContaining("'a b'");
        assertThatThrownBy(() -> LockNames.requireValid("{tag}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNames.requireValid("a'; drop table x;--"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockNames.requireValid("tab\there")).hasMessageContaining("tab?here");
        assertThatThrownBy(() -> LockNames.requireValid(null)).hasMessageContaining("null");
    }

    @Test
    void prefixesMayBeEmpty() {
        assertThat(LockNames.requireValidPrefix("")).isEmpty();
        assertThatThrownBy(() -> LockNames.requireValidPrefix("a%")).isInstanceOf(IllegalArgumentException.class);
    }
}
