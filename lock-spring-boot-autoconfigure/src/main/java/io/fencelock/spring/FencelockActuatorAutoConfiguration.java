package io.fencelock.spring;

import io.fencelock.LockClient;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code locks} endpoint and the {@code fencelock} health indicator, where Actuator is on the class path. */
@AutoConfiguration(after = FencelockAutoConfiguration.class)
@ConditionalOnBean(LockClient.class)
public class FencelockActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    public static class EndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint
        public LocksEndpoint locksEndpoint(
                LockClient client, LeaseLossHistory history, FencelockProperties properties) {
            return new LocksEndpoint(client, history, properties);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
    @ConditionalOnEnabledHealthIndicator("fencelock")
    public static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "fencelockHealthIndicator")
        public LockHealthIndicator fencelockHealthIndicator(
                LockClient client, LeaseLossHistory history, FencelockProperties properties) {
            return new LockHealthIndicator(client, history, properties.getHealth());
        }
    }
}
