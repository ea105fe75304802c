package io.fencelock.tck.matrix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.tck.matrix.GuaranteeMatrix.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GuaranteeMatrixTest {

    private static GuaranteeMatrix matrix() {
        return new GuaranteeMatrix(
                "SomeContractTest",
                "Backend \"x\" 1.0 [source 'binaries']",
                "com.example.Backend",
                List.of("FENCING", "SERVER_TIME"));
    }

    @Test
    void verdictsFollowClaimAndOutcome() {
        GuaranteeMatrix m = matrix();
        assertThat(m.record("p", "f", true, Outcome.HELD, "ok", null).verdict()).isEqualTo("pass");
        assertThat(m.record("p", "f", true, Outcome.VIOLATED, "bad", "history").verdict())
                .isEqualTo("fail");
        assertThat(m.record("p", "f", true, Outcome.NOT_RUN, "no control", null).verdict())
                .isEqualTo("not-run");
        assertThat(m.record("q", "f", false, Outcome.VIOLATED, "regressed", "history")
                        .verdict())
                .isEqualTo("not-claimed");
        assertThat(m.record("q", "f", false, Outcome.HELD, "held anyway", null).verdict())
                .isEqualTo("not-claimed");
    }

    @Test
    void onlyClaimedViolationsFailTheProperty() {
        GuaranteeMatrix m = matrix();
        m.record("durable", "kill -9 and restart", false, Outcome.VIOLATED, "token 1 after 7", "h1");
        m.assertClaimsHeld("durable");
        m.record("exclusion", "blackhole", true, Outcome.VIOLATED, "two holders", "the history");
        assertThatThrownBy(() -> m.assertClaimsHeld("exclusion"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("blackhole")
                .hasMessageContaining("two holders")
                .hasMessageContaining("the history");
    }

    @Test
    void writesEscapedJsonWithEveryField(@TempDir Path dir) throws Exception {
        GuaranteeMatrix m = matrix();
        m.settings(Map.of("schedules", 20));
        m.record("p", "none", true, Outcome.HELD, "tab\there", null);
        m.record("q", "kill -9", false, Outcome.VIOLATED, "line1\nline2 \\ \"quoted\" \u0001", "h");
        Path file = m.write(dir);
        assertThat(file.getFileName().toString()).isEqualTo("SomeContractTest.json");
        String json = Files.readString(file);
        assertThat(json)
                .contains("\"schema\": \"fencelock-tck-matrix/1\"")
                .contains("\"backend\": \"Backend \\\"x\\\" 1.0 [source 'binaries']\"")
                .contains("\"capabilities\": [")
                .contains("\"FENCING\"")
                .contains("\"schedules\": 20")
                .contains("\"detail\": \"tab\\there\"")
                .contains("\"detail\": \"line1\\nline2 \\\\ \\\"quoted\\\" \\u0001\"")
                .contains("\"verdict\": \"not-claimed\"")
                .contains("\"outcome\": \"violated\"")
                .contains("\"counterExample\": null")
                .contains("\"counterExample\": \"h\"");
        // structurally sound: brackets balance outside strings, no raw control characters inside them
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                assertThat(c).as("raw control character in a string").isGreaterThanOrEqualTo(' ');
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                assertThat(depth).isGreaterThanOrEqualTo(0);
            }
        }
        assertThat(depth).isZero();
        assertThat(inString).isFalse();
        assertThat(json).doesNotContain(",\n}").doesNotContain(",]").doesNotContain(", }");
    }
}
