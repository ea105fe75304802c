package io.fencelock.spring;

import io.fencelock.LockClient;
import io.fencelock.LockEventListener;
import io.fencelock.LockOptions;
import javax.sql.DataSource;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * The application's {@link LockClient} from {@code fencelock.*} (closed with the context, which
 * releases what it holds), and the {@link Exclusive} advice.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass(LockClient.class)
@EnableConfigurationProperties(FencelockProperties.class)
public class FencelockAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public LockOptions fencelockOptions(FencelockProperties properties, Environment environment) {
        return new LockClientFactory(properties, environment).options();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public LockClient fencelockClient(
            FencelockProperties properties,
            Environment environment,
            LockOptions options,
            ObjectProvider<DataSource> dataSources,
            ObjectProvider<LockEventListener> listeners) {
        return new LockClientFactory(properties, environment)
                .client(
                        options,
                        dataSources.getIfUnique(),
                        listeners.orderedStream().toList());
    }

    @Bean
    @ConditionalOnMissingBean
    public LeaseLossHistory fencelockLeaseLossHistory(LockClient client) {
        return new LeaseLossHistory(client);
    }

    /** The {@link Exclusive} advice, on Spring's proxies (whose creator is registered if the application has none). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "fencelock.exclusive.enabled", matchIfMissing = true)
    @Import(ExclusiveConfiguration.ProxyCreatorRegistrar.class)
    public static class ExclusiveConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        @ConditionalOnMissingBean
        public static ExclusiveAdvisor fencelockExclusiveAdvisor(ObjectProvider<LockClient> clients) {
            return new ExclusiveAdvisor(clients);
        }

        static class ProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {
            @Override
            public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
                AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            }
        }
    }
}
