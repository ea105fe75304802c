package io.fencelock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LockOptionsTest {

    @Test
    void defaultsAreUsable() {
        LockOptions o = LockOptions.defaults();
        assertThat(o.ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.renewInterval(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.validityWindow(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(29_700 - 10));
    }

    @Test
    void nonPositiveTtlIsRejectedWithValueAndRule() {
        assertThatThrownBy(() -> LockOptions.builder().ttl(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl PT0S")
                .hasMessageContaining("positive");
        assertThatThrownBy(
                        () -> LockOptions.builder().ttl(Duration.ofMillis(-5)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-0.005S");
    }

    @Test
    void tokenPeriodMustFitTwiceIntoTheTtl() {
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(Duration.ofSeconds(30))
                        .tokenPeriod(Duration.ofSeconds(20))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT20S")
                .hasMessageContaining("ttl >= 2 x tokenPeriod");
        assertThat(LockOptions.builder()
                        .ttl(Duration.ofSeconds(60))
                        .tokenPeriod(Duration.ofSeconds(20))
                        .build()
                        .tokenPeriod())
                .isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void renewIntervalMustBeShorterThanTheTtl() {
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(Duration.ofSeconds(3))
                        .renewInterval(Duration.ofSeconds(3))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("renewInterval PT3S");
        // inside the TTL but past the validity window: still refused
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(Duration.ofSeconds(1))
                        .renewInterval(Duration.ofMillis(995))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("validity window");
    }

    @Test
    void aTtlShorterThanTheMarginIsRejected() {
        assertThatThrownBy(() -> LockOptions.defaults().requireUsableTtl(Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too short");
    }

    @Test
    void driftAndPollSettingsAreChecked() {
        assertThatThrownBy(() -> LockOptions.builder().clockDrift(0.7).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("clockDrift 0.7");
        assertThatThrownBy(() -> LockOptions.builder()
                        .maxPollInterval(Duration.ofMillis(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPollInterval");
    }

    @Test
    void durationsPastTheMaximumAreRejectedNamingValueAndLimit() {
        Duration thousandYears = Duration.ofDays(365_000);
        assertThatThrownBy(() -> LockOptions.builder().ttl(thousandYears).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl " + thousandYears)
                .hasMessageContaining("maximum " + LockOptions.MAX_TTL);
        assertThatThrownBy(() -> LockOptions.defaults().requireUsableTtl(thousandYears))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl " + thousandYears)
                .hasMessageContaining("MAX_TTL");
        assertThatThrownBy(() -> LockOptions.defaults().requireUsableTtl(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maximum");
        assertThatThrownBy(() -> LockOptions.builder()
                        .ttl(LockOptions.MAX_TTL)
                        .tokenPeriod(thousandYears)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tokenPeriod");
        assertThatThrownBy(
                        () -> LockOptions.builder().safetyMargin(thousandYears).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("safetyMargin");
        assertThatThrownBy(() ->
                        LockOptions.builder().maxPollInterval(thousandYears).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPollInterval");

        // the maximum itself is usable: its window and renew interval are computed without overflow
        LockOptions longest = LockOptions.builder().ttl(LockOptions.MAX_TTL).build();
        assertThat(longest.requireUsableTtl(LockOptions.MAX_TTL)).isEqualTo(LockOptions.MAX_TTL);
        assertThat(longest.validityWindow(LockOptions.MAX_TTL)).isPositive().isLessThan(LockOptions.MAX_TTL);
        assertThat(longest.renewInterval(LockOptions.MAX_TTL)).isEqualTo(LockOptions.MAX_TTL.dividedBy(3));
    }

    @Test
    void defaultRenewIntervalIsATruncatedThirdOfTheTtl() {
        LockOptions o = LockOptions.defaults();
        for (Duration ttl : java.util.List.of(
                Duration.ofNanos(1),
                Duration.ofNanos(1_000_000_001),
                Duration.ofMillis(1001),
                Duration.ofSeconds(30),
                LockOptions.MAX_TTL,
                LockOptions.MAX_TTL.plusSeconds(1))) {
            assertThat(o.renewInterval(ttl)).as(ttl.toString()).isEqualTo(ttl.dividedBy(3));
        }
    }
}
