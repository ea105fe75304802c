package io.fencelock.spring;

import io.fencelock.LockClient;
import io.fencelock.micrometer.LockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The client's Micrometer meters ({@link LockMetrics}, from lock-micrometer) as a {@code MeterBinder}
 * bean, which Spring Boot binds to the application's registries; {@code fencelock.metrics.*} sets
 * percentiles, the histogram, extra tags and how many lock groups get meters. For a lock-group
 * function of your own, declare your own {@link LockMetrics} bean.
 */
@AutoConfiguration(after = FencelockAutoConfiguration.class)
@ConditionalOnClass({LockMetrics.class, MeterRegistry.class})
@ConditionalOnBean(LockClient.class)
@ConditionalOnProperty(name = "fencelock.metrics.enabled", matchIfMissing = true)
public class FencelockMetricsAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public LockMetrics fencelockMetrics(LockClient client, FencelockProperties properties) {
        FencelockProperties.Metrics settings = properties.getMetrics();
        LockMetrics.Builder builder = LockMetrics.builder(client).histogram(settings.isHistogram());
        try {
            if (!settings.getPercentiles().isEmpty()) {
                builder.percentiles(settings.getPercentiles().stream()
                        .mapToDouble(Double::doubleValue)
                        .toArray());
            }
        } catch (IllegalArgumentException e) {
            throw new FencelockPropertyException("fencelock.metrics.percentiles", e.getMessage(), e);
        }
        try {
            builder.maxLockGroups(settings.getMaxLockGroups());
        } catch (IllegalArgumentException e) {
            throw new FencelockPropertyException("fencelock.metrics.max-lock-groups", e.getMessage(), e);
        }
        List<Tag> tags = settings.getTags().entrySet().stream()
                .map(e -> Tag.of(e.getKey(), e.getValue()))
                .toList();
        return builder.extraTags(tags).build();
    }
}
