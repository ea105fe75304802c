package io.fencelock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.fencelock.LockClient;
import io.fencelock.testservers.mongo.MongoServer;
import io.fencelock.testservers.mysql.MariaDbServer;
import io.fencelock.testservers.redis.RedisServer;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** What start-up does with the fencelock.* properties: a bad one stops it, named; good ones make the client. */
class StartupConfigurationTest {
    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(FencelockAutoConfiguration.class));

    @Test
    void aBadOptionStopsStartUpNamingTheProperty() {
        assertFailsOn("fencelock.ttl", "fencelock.uri=redis://127.0.0.1:1", "fencelock.ttl=0s");
        assertFailsOn(
                "fencelock.renew-interval",
                "fencelock.uri=redis://127.0.0.1:1",
                "fencelock.ttl=3s",
                "fencelock.renew-interval=5s");
        assertFailsOn("fencelock.clock-drift", "fencelock.uri=redis://127.0.0.1:1", "fencelock.clock-drift=0.7");
        assertFailsOn(
                "fencelock.max-poll-interval",
                "fencelock.uri=redis://127.0.0.1:1",
                "fencelock.initial-poll-interval=1s",
                "fencelock.max-poll-interval=10ms");
        assertFailsOn("fencelock.owner", "fencelock.uri=redis://127.0.0.1:1", "fencelock.owner=" + "x".repeat(300));
    }

    @Test
    void aBadBackendSettingStopsStartUpNamingThePropertyWithoutItsSecret() {
        FencelockPropertyException unknownProvider =
                assertFailsOn("fencelock.uri", "fencelock.uri=nosuch://u:topsecret@host/x");
        assertThat(unknownProvider.getMessage()).doesNotContain("topsecret");
        FencelockPropertyException unknownKey = assertFailsOn(
                "fencelock.properties",
                "fencelock.uri=jdbc:postgresql://127.0.0.1:1/x",
                "fencelock.properties.bogus=1",
                "fencelock.properties.password=topsecret");
        assertThat(unknownKey.getMessage()).contains("bogus").doesNotContain("topsecret");
        assertFailsOn(
                "fencelock.properties.poolSize",
                "fencelock.uri=jdbc:postgresql://127.0.0.1:1/x",
                "fencelock.properties.poolSize=0");
        FencelockPropertyException none = assertFailsOn("fencelock.uri");
        assertThat(none.reason()).contains("DataSource").contains("spring.data.redis");
    }

    @Test
    void anExclusiveMethodWithABadAttributeStopsStartUpNamingIt() {
        runner.withPropertyValues("fencelock.uri=redis://127.0.0.1:1")
                .withUserConfiguration(BadExclusive.class)
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("@Exclusive on")
                        .hasMessageContaining("minHold 'soon' is not a duration"));
    }

    @Test
    void theFailureAnalyzerReportsTheProperty() {
        runner.withPropertyValues("fencelock.uri=redis://127.0.0.1:1", "fencelock.ttl=-1s")
                .run(context -> {
                    FailureAnalysis analysis = new FencelockFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .contains("'fencelock.ttl'")
                            .contains("positive");
                    assertThat(analysis.getAction()).contains("fencelock.ttl");
                });
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aSpringApplicationReportsTheBadPropertyThroughTheFailureAnalyzer(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(OnlyFencelock.class)
                        .web(WebApplicationType.NONE)
                        .run("--fencelock.uri=redis://127.0.0.1:1", "--fencelock.ttl=0s", "--logging.level.root=error"))
                .isInstanceOf(BeanCreationException.class);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("The fencelock property 'fencelock.ttl' is invalid");
    }

    @Test
    void theApplicationsRedisSettingsAreUsedWithoutAUriAndTheClientClosesWithTheContext() {
        URI redis = URI.create(RedisServer.shared().uri());
        LockClient[] seen = new LockClient[1];
        runner.withPropertyValues(
                        "spring.data.redis.host=" + redis.getHost(),
                        "spring.data.redis.port=" + redis.getPort(),
                        "fencelock.ttl=5s",
                        "fencelock.owner=orders-7")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockClient client = context.getBean(LockClient.class);
                    seen[0] = client;
                    assertThat(client.backendName()).isEqualTo("redis");
                    assertThat(client.options().ttl()).hasSeconds(5);
                    assertThat(client.tryAcquire("startup:held")).isPresent();
                    assertThat(client.inspect("startup:held").orElseThrow().held())
                            .isTrue();
                });
        // closing the context closed the client, which released what it held
        try (LockClient other = LockClient.open(RedisServer.shared().uri())) {
            assertThat(other.inspect("startup:held").orElseThrow().held()).isFalse();
        }
        assertThat(seen[0].held()).isEmpty();
    }

    @Test
    void theApplicationsMongoSettingsAreUsedWithoutAUriInTheDatabaseTheyName() {
        MongoServer mongo = MongoServer.shared();
        URI address = URI.create(mongo.uri());
        String byUri = mongo.uniqueDatabase("spring_uri");
        String byHost = mongo.uniqueDatabase("spring_host");
        runner.withPropertyValues("spring.mongodb.uri=" + mongo.uri(), "spring.mongodb.database=" + byUri)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backendName()).containsIgnoringCase("mongo");
                    assertThat(client.tryAcquire("startup:mongo")).isPresent();
                });
        runner.withPropertyValues(
                        "spring.mongodb.host=" + address.getHost(),
                        "spring.mongodb.port=" + address.getPort(),
                        "spring.mongodb.database=" + byHost)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(LockClient.class).tryAcquire("startup:mongo"))
                            .isPresent();
                });
        try (MongoClient reader = MongoClients.create(mongo.uri())) {
            for (String database : List.of(byUri, byHost)) {
                assertThat(reader.getDatabase(database).listCollectionNames().into(new ArrayList<>()))
                        .as("collections of %s", database)
                        .isNotEmpty();
            }
        }
    }

    @Test
    void redisComesBeforeMongoAndTheProviderPicksOnlyAConnectionTheApplicationHas() {
        URI redis = URI.create(RedisServer.shared().uri());
        MongoServer mongo = MongoServer.shared();
        ApplicationContextRunner both = runner.withPropertyValues(
                "spring.data.redis.host=" + redis.getHost(),
                "spring.data.redis.port=" + redis.getPort(),
                "spring.mongodb.uri=" + mongo.uri(),
                "spring.mongodb.database=" + mongo.uniqueDatabase("spring_both"));
        both.run(context ->
                assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("redis"));
        both.withPropertyValues("fencelock.provider=mongo")
                .run(context -> assertThat(context.getBean(LockClient.class).backendName())
                        .containsIgnoringCase("mongo"));
        // a provider the application has no connection for is refused, not replaced by another
        FencelockPropertyException notThere = assertFailsOn(
                "fencelock.provider",
                "spring.mongodb.uri=" + mongo.uri(),
                "spring.mongodb.database=" + mongo.uniqueDatabase("spring_wanted"),
                "fencelock.provider=redis");
        assertThat(notThere.getMessage()).contains("'redis' was asked for");
    }

    @Test
    void mongoSettingsWithoutAUriBecomeOneWithTheCredentialsKeptOut() {
        MongoTarget target = mongoTarget(
                "spring.mongodb.host=db-1",
                "spring.mongodb.port=27018",
                "spring.mongodb.additional-hosts=db-2:27019,db-3",
                "spring.mongodb.replica-set-name=rs0",
                "spring.mongodb.ssl.enabled=true",
                "spring.mongodb.authentication-database=admin",
                "spring.mongodb.database=orders",
                "spring.mongodb.username=app",
                "spring.mongodb.password=topsecret");
        assertThat(target.uri()).isEqualTo("mongodb://db-1:27018,db-2:27019,db-3/admin?replicaSet=rs0&tls=true");
        assertThat(target.user()).isEqualTo("app");
        assertThat(target.password()).isEqualTo("topsecret");
        assertThat(target.database()).isEqualTo("orders");
        assertThat(target.toString()).doesNotContain("topsecret");
        // Boot's defaults: localhost, the database "test", where the credentials are checked too
        MongoTarget defaults = mongoTarget("spring.mongodb.port=27017", "spring.mongodb.username=app");
        assertThat(defaults.uri()).isEqualTo("mongodb://localhost:27017/test");
        assertThat(defaults.database()).isEqualTo("test");
        assertThat(mongoTarget("spring.mongodb.host=db-1", "spring.mongodb.database=orders")
                        .uri())
                .isEqualTo("mongodb://db-1/orders");
        // a URI is taken as it is; the database property names the locks' database over the URI's
        MongoTarget byUri = mongoTarget("spring.mongodb.uri=mongodb+srv://u:p@cluster.example/app");
        assertThat(byUri.uri()).isEqualTo("mongodb+srv://u:p@cluster.example/app");
        assertThat(byUri.user()).isNull();
        assertThat(byUri.database()).isNull();
        assertThat(byUri.toString()).doesNotContain(":p@");
        assertThat(mongoTarget("spring.data.redis.host=cache")).isNull();
    }

    private static MongoTarget mongoTarget(String... properties) {
        java.util.Map<String, String> map = new java.util.LinkedHashMap<>();
        for (String property : properties) {
            map.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
        }
        return MongoTarget.from(new Binder(new MapConfigurationPropertySource(map)));
    }

    @Test
    void theApplicationsMariaDbDataSourceIsDetectedAndUsedWithoutAUri() {
        MariaDbServer db = MariaDbServer.shared();
        ApplicationContextRunner withDataSource = new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DataSourceAutoConfiguration.class, FencelockAutoConfiguration.class))
                .withPropertyValues(
                        "spring.datasource.url=" + db.createDatabase("spring"),
                        "spring.datasource.username=" + db.user(),
                        "spring.datasource.password=" + (db.password() == null ? "" : db.password()));
        withDataSource
                .withPropertyValues("fencelock.properties.createTable=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockClient client = context.getBean(LockClient.class);
                    assertThat(client.backendName()).isEqualTo("MySqlLockBackend");
                    assertThat(client.tryAcquire("startup:mariadb")).isPresent();
                    assertThat(client.inspect("startup:mariadb").orElseThrow().held())
                            .isTrue();
                });
        // the pool and the credentials are the DataSource's: a pool size for the provider is refused, named
        withDataSource.withPropertyValues("fencelock.properties.poolSize=4").run(context -> {
            FencelockPropertyException failure = propertyFailure(context.getStartupFailure());
            assertThat(failure.property()).isEqualTo("fencelock.properties");
            assertThat(failure.reason()).contains("poolSize");
        });
    }

    private FencelockPropertyException assertFailsOn(String property, String... properties) {
        FencelockPropertyException[] failure = new FencelockPropertyException[1];
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            Throwable cause = context.getStartupFailure();
            while (cause != null && !(cause instanceof FencelockPropertyException)) {
                cause = cause.getCause();
            }
            assertThat(cause)
                    .as("start-up failure of %s", String.join(", ", properties))
                    .isNotNull();
            failure[0] = (FencelockPropertyException) cause;
            assertThat(failure[0].property()).isEqualTo(property);
            assertThat(failure[0].getMessage()).contains(property);
        });
        return failure[0];
    }

    private static FencelockPropertyException propertyFailure(Throwable failure) {
        Throwable cause = failure;
        while (cause != null && !(cause instanceof FencelockPropertyException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("a FencelockPropertyException in %s", failure).isNotNull();
        return (FencelockPropertyException) cause;
    }

    @SpringBootConfiguration
    @ImportAutoConfiguration(FencelockAutoConfiguration.class)
    static class OnlyFencelock {}

    @Configuration(proxyBeanMethods = false)
    static class BadExclusive {
        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {
        @Exclusive(name = "'job'", minHold = "soon")
        public void run() {}
    }
}
