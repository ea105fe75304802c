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

    /** The character table accepts exactly what the documented rule's character class accepts, for every char. */
    @Test
    void everyCharacterIsJudgedAsTheRuleSays() {
        java.util.regex.Pattern rule = java.util.regex.Pattern.compile("[A-Za-z0-9._\\-:/@+=#]");
        for (int c = 0; c <= Character.MAX_VALUE; c++) {
            String name = "a" + (char) c;
            boolean allowed = rule.matcher(String.valueOf((char) c)).matches();
            if (allowed) {
                assertThat(LockNames.requireValid(name)).isEqualTo(name);
            } else {
                assertThatThrownBy(() -> LockNames.requireValid(name))
                        .as("character U+%04X", c)
                        .isInstanceOf(IllegalArgumentException.class);
            }
        }
    }
}
