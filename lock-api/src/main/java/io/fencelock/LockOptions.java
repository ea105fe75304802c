package io.fencelock;

import java.time.Duration;
import java.util.Objects;

/**
 * A client's settings, validated when built (before any I/O).
 *
 * <ul>
 *   <li>{@code ttl} (default 30 s): the lease length on the backend; at most {@link #MAX_TTL}.</li>
 *   <li>{@code renewInterval} (default a third of the TTL): how long after a grant the watchdog
 *       renews; must leave time before the local validity deadline.</li>
 *   <li>{@code tokenPeriod} (default none): when set, a renewal issues a new, higher token once the
 *       current one is this old (the token-period rule); requires {@code ttl >= 2 x tokenPeriod}.</li>
 *   <li>{@code clockDrift} (default 0.01) and {@code safetyMargin} (default 10 ms): the local
 *       validity deadline is {@code sent + ttl x (1 - clockDrift) - safetyMargin}.</li>
 *   <li>{@code autoRenew} (default true): whether the watchdog renews leases.</li>
 *   <li>{@code initialPollInterval} (default 5 ms) and {@code maxPollInterval} (default 500 ms):
 *       the jittered backoff of a waiter between attempts when no release signal arrives; on a
 *       backend without a release signal, a quarter of the initial interval is the fast poll around
 *       a release the client forecasts from its earlier waits for the name.</li>
 *   <li>{@code owner} (default host name, process id and client id): the owner description stored
 *       with every grant of the client that does not name its own ({@link LockMetadata}).</li>
 * </ul>
 * Every duration is at most {@link #MAX_TTL}.
 */
public final class LockOptions {
    /**
     * The longest TTL (and any other duration here): 36,500 days, about 100 years. The engine keeps
     * deadlines in {@code System.nanoTime()} units, which hold about 292 years, and every backend
     * stores it (etcd's longest lease is 9e9 s, about 285 years; MySQL's DATETIME ends in 9999).
     */
    public static final Duration MAX_TTL = Duration.ofDays(36_500);

    private final Duration ttl;
    private final Duration renewInterval;
    private final Duration tokenPeriod;
    private final double clockDrift;
    private final Duration safetyMargin;
    private final boolean autoRenew;
    private final Duration initialPollInterval;
    private final Duration maxPollInterval;
    private final String owner;

    private LockOptions(Builder b) {
        this.ttl = b.ttl;
        this.renewInterval = b.renewInterval;
        this.tokenPeriod = b.tokenPeriod;
        this.clockDrift = b.clockDrift;
        this.safetyMargin = b.safetyMargin;
        this.autoRenew = b.autoRenew;
        this.initialPollInterval = b.initialPollInterval;
        this.maxPollInterval = b.maxPollInterval;
        this.owner = b.owner;
    }

    public static LockOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.ttl = ttl;
        b.renewInterval = renewInterval;
        b.tokenPeriod = tokenPeriod;
        b.clockDrift = clockDrift;
        b.safetyMargin = safetyMargin;
        b.autoRenew = autoRenew;
        b.initialPollInterval = initialPollInterval;
        b.maxPollInterval = maxPollInterval;
        b.owner = owner;
        return b;
    }

    public Duration ttl() {
        return ttl;
    }

    /** The renew interval for a lease of {@code leaseTtl}: the configured one, or a third of the TTL. */
    public Duration renewInterval(Duration leaseTtl) {
        if (renewInterval != null) {
            return renewInterval;
        }
        // In nanoseconds, which hold every TTL up to MAX_TTL: Duration.dividedBy goes through BigDecimal, and this
        // runs for every grant. Both round toward zero, so the result is the same.
        if (!leaseTtl.isNegative() && leaseTtl.compareTo(MAX_TTL) <= 0) {
            return Duration.ofNanos(leaseTtl.toNanos() / 3);
        }
        return leaseTtl.dividedBy(3);
    }

    /** The token period, or {@code null} when tokens only rise for a new holder. */
    public Duration tokenPeriod() {
        return tokenPeriod;
    }

    public double clockDrift() {
        return clockDrift;
    }

    public Duration safetyMargin() {
        return safetyMargin;
    }

    public boolean autoRenew() {
        return autoRenew;
    }

    public Duration initialPollInterval() {
        return initialPollInterval;
    }

    public Duration maxPollInterval() {
        return maxPollInterval;
    }

    /** The owner description for grants that name none, or {@code null} for host name, process id and client id. */
    public String owner() {
        return owner;
    }

    /** How long a grant stays locally valid after it was sent: {@code ttl x (1 - drift) - margin}. */
    public Duration validityWindow(Duration leaseTtl) {
        long nanos = (long) (leaseTtl.toNanos() * (1.0 - clockDrift)) - safetyMargin.toNanos();
        return Duration.ofNanos(nanos);
    }

    /**
     * Checks that a lease of {@code leaseTtl} is possible with these options: positive TTL, a
     * validity window left after drift and margin, a renew interval inside it, and the token
     * period rule. Throws {@link IllegalArgumentException} naming the value and the rule.
     */
    public Duration requireUsableTtl(Duration leaseTtl) {
        requirePositive("ttl", leaseTtl);
        requireAtMostMax("ttl", leaseTtl);
        Duration window = validityWindow(leaseTtl);
        if (window.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("ttl " + leaseTtl + " is too short: ttl x (1 - clockDrift " + clockDrift
                    + ") - safetyMargin " + safetyMargin + " must leave at least 1 ms of validity");
        }
        Duration renew = renewInterval(leaseTtl);
        if (renew.compareTo(window) >= 0) {
            throw new IllegalArgumentException(
                    "renewInterval " + renew + " must be shorter than the lease's validity window " + window + " (ttl "
                            + leaseTtl + " less clock drift and safety margin)");
        }
        if (tokenPeriod != null && leaseTtl.compareTo(tokenPeriod.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("ttl " + leaseTtl + " must be at least 2 x tokenPeriod " + tokenPeriod
                    + " (ttl >= 2 x tokenPeriod)");
        }
        return leaseTtl;
    }

    static Duration requirePositive(String what, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(what + " " + d + " must be a positive duration");
        }
        return d;
    }

    static Duration requireNonNegative(String what, Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException(what + " " + d + " must be zero or positive");
        }
        return d;
    }

    /** Before any arithmetic on {@code d}: past the limit, nanoseconds would overflow. */
    static Duration requireAtMostMax(String what, Duration d) {
        if (d != null && d.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException(what + " " + d + " (" + d.toDays() + " days) is longer than the maximum "
                    + MAX_TTL + " (LockOptions.MAX_TTL, " + MAX_TTL.toDays() + " days)");
        }
        return d;
    }

    @Override
    public String toString() {
        return "LockOptions{ttl=" + ttl + ", renewInterval=" + (renewInterval == null ? "ttl/3" : renewInterval)
                + ", tokenPeriod=" + tokenPeriod + ", clockDrift=" + clockDrift + ", safetyMargin=" + safetyMargin
                + ", autoRenew=" + autoRenew + ", poll=" + initialPollInterval + ".." + maxPollInterval
                + (owner == null ? "" : ", owner=" + owner) + '}';
    }

    public static final class Builder {
        private Duration ttl = Duration.ofSeconds(30);
        private Duration renewInterval;
        private Duration tokenPeriod;
        private double clockDrift = 0.01;
        private Duration safetyMargin = Duration.ofMillis(10);
        private boolean autoRenew = true;
        private Duration initialPollInterval = Duration.ofMillis(5);
        private Duration maxPollInterval = Duration.ofMillis(500);
        private String owner;

        private Builder() {}

        /** The owner description of this client's grants; {@code null} restores the default. */
        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** {@code null} restores the default (a third of each lease's TTL). */
        public Builder renewInterval(Duration renewInterval) {
            this.renewInterval = renewInterval;
            return this;
        }

        /** {@code null} (the default) keeps one token for the whole lease. */
        public Builder tokenPeriod(Duration tokenPeriod) {
            this.tokenPeriod = tokenPeriod;
            return this;
        }

        public Builder clockDrift(double clockDrift) {
            this.clockDrift = clockDrift;
            return this;
        }

        public Builder safetyMargin(Duration safetyMargin) {
            this.safetyMargin = safetyMargin;
            return this;
        }

        public Builder autoRenew(boolean autoRenew) {
            this.autoRenew = autoRenew;
            return this;
        }

        public Builder initialPollInterval(Duration initialPollInterval) {
            this.initialPollInterval = initialPollInterval;
            return this;
        }

        public Builder maxPollInterval(Duration maxPollInterval) {
            this.maxPollInterval = maxPollInterval;
            return this;
        }

        /** Validates and builds; throws {@link IllegalArgumentException} naming the value and the rule. */
        public LockOptions build() {
            requirePositive("ttl", ttl);
            requireAtMostMax("ttl", ttl);
            if (renewInterval != null) {
                requirePositive("renewInterval", renewInterval);
                if (renewInterval.compareTo(ttl) >= 0) {
                    throw new IllegalArgumentException(
                            "renewInterval " + renewInterval + " must be shorter than ttl " + ttl);
                }
            }
            if (tokenPeriod != null) {
                requirePositive("tokenPeriod", tokenPeriod);
                requireAtMostMax("tokenPeriod", tokenPeriod);
            }
            if (!(clockDrift >= 0.0 && clockDrift < 0.5)) {
                throw new IllegalArgumentException("clockDrift " + clockDrift + " must be in [0, 0.5)");
            }
            requireAtMostMax("safetyMargin", requireNonNegative("safetyMargin", safetyMargin));
            requireAtMostMax("initialPollInterval", requirePositive("initialPollInterval", initialPollInterval));
            requireAtMostMax("maxPollInterval", requirePositive("maxPollInterval", maxPollInterval));
            if (maxPollInterval.compareTo(initialPollInterval) < 0) {
                throw new IllegalArgumentException("maxPollInterval " + maxPollInterval
                        + " must not be shorter than initialPollInterval " + initialPollInterval);
            }
            if (owner != null) {
                new LockMetadata(owner, null, null); // validates length and characters
            }
            LockOptions options = new LockOptions(this);
            options.requireUsableTtl(ttl);
            return options;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LockOptions other)) {
            return false;
        }
        return ttl.equals(other.ttl)
                && Objects.equals(renewInterval, other.renewInterval)
                && Objects.equals(tokenPeriod, other.tokenPeriod)
                && clockDrift == other.clockDrift
                && safetyMargin.equals(other.safetyMargin)
                && autoRenew == other.autoRenew
                && initialPollInterval.equals(other.initialPollInterval)
                && maxPollInterval.equals(other.maxPollInterval)
                && Objects.equals(owner, other.owner);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ttl, renewInterval, tokenPeriod, clockDrift, safetyMargin, autoRenew);
    }
}
