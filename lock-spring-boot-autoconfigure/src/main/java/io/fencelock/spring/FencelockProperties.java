package io.fencelock.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fencelock.*} properties. Every option left unset keeps the library's default (see
 * {@link io.fencelock.LockOptions}); all are checked at start-up, and a bad one stops it with the
 * property's name in the message.
 */
@ConfigurationProperties("fencelock")
public class FencelockProperties {
    /**
     * The backend's connection string (e.g. jdbc:postgresql://db/app, redis://cache:6379); without
     * it, the application's DataSource, its spring.data.redis or its spring.mongodb settings are used.
     */
    private String uri;

    /**
     * The provider by name (postgres, mysql, redis, mongo...): with a URI, instead of the URI's prefix;
     * without one, which of the application's connections to use when it has several (a DataSource,
     * Redis, MongoDB).
     */
    private String provider;

    /** Provider settings: user, password, schema, table, createTable, poolSize, keyPrefix... */
    private Map<String, String> properties = new LinkedHashMap<>();

    /** The lease TTL (default 30s). */
    private Duration ttl;

    /** How often the watchdog renews a lease (default a third of its TTL). */
    private Duration renewInterval;

    /** A new fencing token at least this often within a lease (default: one token per lease). */
    private Duration tokenPeriod;

    /** The clock drift allowance, a fraction of the TTL in [0, 0.5) (default 0.01). */
    private Double clockDrift;

    /** Taken off every lease's validity window (default 10ms). */
    private Duration safetyMargin;

    /** Whether the watchdog renews leases (default true). */
    private Boolean autoRenew;

    /** A waiter's first poll interval when no release signal comes (default 5ms). */
    private Duration initialPollInterval;

    /** A waiter's longest poll interval (default 500ms). */
    private Duration maxPollInterval;

    /** The owner description stored with every grant (default: host name, process id and client id). */
    private String owner;

    private final Exclusive exclusive = new Exclusive();
    private final Health health = new Health();
    private final Metrics metrics = new Metrics();

    public String getUri() {
        return uri;
    }

    public void setUri(String uri) {
        this.uri = uri;
    }

    public String getProvider() {
        return provider;
    }

    public void setProvider(String provider) {
        this.provider = provider;
    }

    public Map<String, String> getProperties() {
        return properties;
    }

    public void setProperties(Map<String, String> properties) {
        this.properties = properties;
    }

    public Duration getTtl() {
        return ttl;
    }

    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    public Duration getRenewInterval() {
        return renewInterval;
    }

    public void setRenewInterval(Duration renewInterval) {
        this.renewInterval = renewInterval;
    }

    public Duration getTokenPeriod() {
        return tokenPeriod;
    }

    public void setTokenPeriod(Duration tokenPeriod) {
        this.tokenPeriod = tokenPeriod;
    }

    public Double getClockDrift() {
        return clockDrift;
    }

    public void setClockDrift(Double clockDrift) {
        this.clockDrift = clockDrift;
    }

    public Duration getSafetyMargin() {
        return safetyMargin;
    }

    public void setSafetyMargin(Duration safetyMargin) {
        this.safetyMargin = safetyMargin;
    }

    public Boolean getAutoRenew() {
        return autoRenew;
    }

    public void setAutoRenew(Boolean autoRenew) {
        this.autoRenew = autoRenew;
    }

    public Duration getInitialPollInterval() {
        return initialPollInterval;
    }

    public void setInitialPollInterval(Duration initialPollInterval) {
        this.initialPollInterval = initialPollInterval;
    }

    public Duration getMaxPollInterval() {
        return maxPollInterval;
    }

    public void setMaxPollInterval(Duration maxPollInterval) {
        this.maxPollInterval = maxPollInterval;
    }

    public String getOwner() {
        return owner;
    }

    public void setOwner(String owner) {
        this.owner = owner;
    }

    public Exclusive getExclusive() {
        return exclusive;
    }

    public Health getHealth() {
        return health;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    /** {@code fencelock.exclusive.*}: the {@code @Exclusive} advice. */
    public static class Exclusive {
        /** Whether methods annotated with {@code @Exclusive} run under a lock (default true). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** {@code fencelock.health.*}: the health indicator. */
    public static class Health {
        /** How long a lost lease keeps the health OUT_OF_SERVICE (0 turns that off). */
        private Duration lostLeaseWindow = Duration.ofMinutes(5);

        /** The lock name read to check that the backend answers (it is never acquired). */
        private String probeName = "fencelock:health";

        public Duration getLostLeaseWindow() {
            return lostLeaseWindow;
        }

        public void setLostLeaseWindow(Duration lostLeaseWindow) {
            this.lostLeaseWindow = lostLeaseWindow;
        }

        public String getProbeName() {
            return probeName;
        }

        public void setProbeName(String probeName) {
            this.probeName = probeName;
        }
    }

    /** {@code fencelock.metrics.*}: the client's Micrometer meters (with lock-micrometer on the class path). */
    public static class Metrics {
        /** Whether the client's meters are bound to the application's registries (default true). */
        private boolean enabled = true;

        /** Client-side percentiles of the acquire and hold timers, each in [0, 1] (default none). */
        private List<Double> percentiles = new ArrayList<>();

        /** Whether the timers publish a percentile histogram, e.g. for Prometheus (default false). */
        private boolean histogram;

        /** How many lock groups get meters of their own; further ones count as "overflow" (default 100). */
        private int maxLockGroups = 100;

        /** Tags added to every meter. */
        private Map<String, String> tags = new LinkedHashMap<>();

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public List<Double> getPercentiles() {
            return percentiles;
        }

        public void setPercentiles(List<Double> percentiles) {
            this.percentiles = percentiles;
        }

        public boolean isHistogram() {
            return histogram;
        }

        public void setHistogram(boolean histogram) {
            this.histogram = histogram;
        }

        public int getMaxLockGroups() {
            return maxLockGroups;
        }

        public void setMaxLockGroups(int maxLockGroups) {
            this.maxLockGroups = maxLockGroups;
        }

        public Map<String, String> getTags() {
            return tags;
        }

        public void setTags(Map<String, String> tags) {
            this.tags = tags;
        }
    }
}
