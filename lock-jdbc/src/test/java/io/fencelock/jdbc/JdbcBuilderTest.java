package io.fencelock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.spi.LockBackend;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class JdbcBuilderTest {

    /** A dialect that takes jdbc:test: URLs and tables of at most 10 characters; it builds nothing. */
    static final class TestBuilder extends JdbcBuilder<TestBuilder> {
        TestBuilder() {
            super("public", "locks", TestBuilder::checkTable);
        }

        @Override
        protected String checkUrl(String jdbcUrl) {
            if (!jdbcUrl.startsWith("jdbc:test:")) {
                throw new IllegalArgumentException("jdbcUrl must start with jdbc:test:");
            }
            return jdbcUrl;
        }

        private static void checkTable(String schema, String table) {
            SqlIdentifiers.require("table", table);
            if (table.length() > 10) {
                throw new IllegalArgumentException("table '" + table + "' is too long: at most 10 characters");
            }
        }

        @Override
        public LockBackend build() {
            throw new UnsupportedOperationException("settings only");
        }
    }

    @Test
    void badSettingsAreRefusedWhenSetNamingTheValueAndTheRule() {
        TestBuilder b = new TestBuilder();
        assertThatThrownBy(() -> b.jdbcUrl("jdbc:other://h")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.jdbcUrl(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("jdbcUrl");
        assertThatThrownBy(() -> b.schema(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema null");
        assertThatThrownBy(() -> b.schema("a;b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain SQL identifier");
        assertThatThrownBy(() -> b.table("much_too_long"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 10");
        assertThatThrownBy(() -> b.poolSize(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("poolSize must be at least 1, got 0");
        assertThatThrownBy(() -> b.connectTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connectTimeout must be positive");
        assertThatThrownBy(() -> b.socketTimeout(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("socketTimeout must be positive, got null");
        assertThatThrownBy(() -> b.dataSource(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(b::settings)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exactly one of jdbcUrl and dataSource");
    }

    @Test
    void theSettingsKeepWhatWasSetAndShowNoCredential() {
        JdbcSettings s = new TestBuilder()
                .jdbcUrl("jdbc:test://db:1/x?password=s3cret")
                .user("app")
                .password("s3cret")
                .schema("app")
                .table("locks")
                .createTable(true)
                .poolSize(3)
                .socketTimeout(Duration.ofSeconds(4))
                .settings();
        assertThat(s.ownPool()).isTrue();
        assertThat(s.schema()).isEqualTo("app");
        assertThat(s.table()).isEqualTo("locks");
        assertThat(s.createTable()).isTrue();
        assertThat(s.poolSize()).isEqualTo(3);
        assertThat(s.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.socketTimeout()).isEqualTo(Duration.ofSeconds(4));
        assertThat(s.where()).isEqualTo("jdbc:test://db:1/x?password=***");
        assertThat(s.toString()).doesNotContain("s3cret");
    }

    @Test
    void durationsBecomeMicrosAndWholeSeconds() {
        assertThat(SqlTime.micros(Duration.ofMillis(1500).plusNanos(999))).isEqualTo(1_500_000L);
        assertThat(SqlTime.seconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(SqlTime.seconds(Duration.ofMillis(2001))).isEqualTo(3);
        assertThat(SqlTime.requireNotNegative("freeFor", Duration.ZERO)).isZero();
        assertThatThrownBy(() -> SqlTime.requireNotNegative("freeFor", Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("freeFor must not be negative, got PT-1S");
    }
}
