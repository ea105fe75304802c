package io.fencelock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fencelock.LeaseLostException;
import io.fencelock.LockClient;
import io.fencelock.LockInfo;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the starter promises, on one real backend: a {@code @Scheduled @Exclusive} job on two
 * application contexts ("nodes") never runs on both at once and the minimum hold keeps a node from
 * repeating the slot; a lease lost mid-run interrupts the method; the Actuator endpoint and health
 * show the held lock. A subclass says how a node reaches the backend.
 */
abstract class ExclusiveOnTwoNodesContract {
    private static final Duration MIN_HOLD = Duration.ofMillis(300);
    private static final Duration BOUND = Duration.ofSeconds(20);

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    /** The properties that take a node to the backend (a test's own tables or key prefix). */
    protected abstract Map<String, Object> backend();

    /** A client of the same backend outside the nodes: the operator who forces a release. */
    protected abstract LockClient operator();

    @AfterEach
    void stop() {
        contexts.forEach(ConfigurableApplicationContext::close);
        callers.shutdownNow();
    }

    private ConfigurableApplicationContext node(Class<?> app, Map<String, Object> extra, Ledger ledger) {
        Map<String, Object> properties = new HashMap<>(backend());
        properties.put("spring.main.web-application-type", "none");
        properties.put("spring.main.banner-mode", "off");
        properties.putAll(extra);
        ConfigurableApplicationContext context =
                Nodes.start(app, properties, ledger == null ? Map.of() : Map.of("ledger", ledger));
        contexts.add(context);
        return context;
    }

    @Test
    void aScheduledJobRunsOnOneNodeAtATimeAndTheMinimumHoldKeepsOthersFromRepeatingTheSlot() throws Exception {
        Ledger ledger = new Ledger();
        List<Nodes.Outcomes> outcomes = new ArrayList<>();
        for (String name : List.of("node-a", "node-b")) {
            ConfigurableApplicationContext node = node(
                    Nodes.SchedulingNode.class,
                    Map.of("test.node", name, "test.min-hold", MIN_HOLD.toMillis() + "ms"),
                    ledger);
            outcomes.add(node.getBean(Nodes.Outcomes.class));
        }
        Await.until("6 runs of the job", BOUND, () -> ledger.runs.size() >= 6);
        contexts.forEach(ConfigurableApplicationContext::close);

        assertThat(ledger.overlaps).as("runs that overlapped another").hasValue(0);
        List<Ledger.Run> runs = ledger.runs.stream()
                .sorted(Comparator.comparingLong(Ledger.Run::startNanos))
                .toList();
        for (int i = 1; i < runs.size(); i++) {
            Ledger.Run before = runs.get(i - 1);
            Ledger.Run after = runs.get(i);
            assertThat(after.token()).as("tokens rise from run to run").isGreaterThan(before.token());
            // the lease was kept until MIN_HOLD after the earlier run's acquisition: no repeat of its slot
            // (less 2 ms: Redis reads its clock in whole milliseconds, and the ledger's start comes a few
            // microseconds after the advice's, from which the hold is measured)
            assertThat(Duration.ofNanos(after.startNanos() - before.startNanos()))
                    .as("time between run %d (%s) and run %d (%s)", i - 1, before.node(), i, after.node())
                    .isGreaterThanOrEqualTo(MIN_HOLD.minusMillis(2));
        }
        int refused = outcomes.stream().mapToInt(o -> o.refused.get()).sum();
        assertThat(refused)
                .as("runs skipped because the other node held the slot")
                .isPositive();
    }

    @Test
    void aLeaseLostMidRunInterruptsTheMethodAndEndsTheCallWithLeaseLostException() throws Exception {
        ConfigurableApplicationContext node = node(Nodes.WorkNode.class, Map.of(), null);
        Nodes.SlowWork slow = node.getBean(Nodes.SlowWork.class);
        Nodes.WorkProbe work = node.getBean(Nodes.WorkProbe.class);
        Future<String> call = callers.submit(() -> slow.work("lost", null));
        assertThat(work.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(work.parameterToken).isPositive().isEqualTo(work.contextToken);

        Optional<LockInfo> ended = operator().forceRelease("work:lost");
        assertThat(ended).as("the operator ended the node's grant").isPresent();
        assertThat(ended.get().token()).isEqualTo(work.parameterToken);

        // the node learns of the loss at its next renewal (a third of the 1 s TTL)
        assertThatThrownBy(() -> call.get(BOUND.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(LeaseLostException.class);
        assertThat(work.interrupted).as("the method's thread was interrupted").isTrue();
    }

    @Test
    void anExclusiveMethodDeclaredOnAnInterfaceGetsItsLease() {
        ConfigurableApplicationContext node = node(Nodes.WorkNode.class, Map.of(), null);
        Nodes.Reports reports = node.getBean(Nodes.Reports.class);
        String first = reports.build("2026-11-23", null);
        String second = reports.build("2026-11-23", null);
        assertThat(first).startsWith("report:2026-11-23@");
        long token1 = Long.parseLong(first.substring(first.indexOf('@') + 1));
        long token2 = Long.parseLong(second.substring(second.indexOf('@') + 1));
        assertThat(token2).isGreaterThan(token1);
        assertThat(node.getBean(LockClient.class).held())
                .as("released after each call")
                .isEmpty();
    }

    @Test
    void theActuatorEndpointListsTheHeldLockWithItsTokenAndHealthReportsTheLoss() throws Exception {
        ConfigurableApplicationContext node = node(
                Nodes.WorkNode.class,
                Map.of(
                        "spring.main.web-application-type", "servlet",
                        "server.port", "0",
                        "server.address", "127.0.0.1",
                        "management.endpoints.web.exposure.include", "locks,health,metrics",
                        "fencelock.metrics.percentiles", "0.5,0.99",
                        "fencelock.metrics.tags.app", "two-nodes-test",
                        "management.endpoint.health.show-details", "always"),
                null);
        Nodes.SlowWork slow = node.getBean(Nodes.SlowWork.class);
        Nodes.WorkProbe work = node.getBean(Nodes.WorkProbe.class);
        Future<String> call = callers.submit(() -> slow.work("shown", null));
        assertThat(work.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        String base = "http://127.0.0.1:" + node.getEnvironment().getProperty("local.server.port") + "/actuator/";

        JsonNode held = get(base + "locks", 200);
        JsonNode lease = held.get("leases").get(0);
        assertThat(lease.get("name").asString()).isEqualTo("work:shown");
        assertThat(lease.get("token").asLong()).isEqualTo(work.parameterToken);
        assertThat(lease.get("type").asString()).isEqualTo("work");
        assertThat(lease.get("owner").asString()).isEqualTo("node-under-test");
        assertThat(lease.get("serverExpiry").asString()).isNotBlank();

        JsonNode listed = get(base + "locks/work:", 200);
        JsonNode onBackend = listed.get("locks").get(0);
        assertThat(onBackend.get("name").asString()).isEqualTo("work:shown");
        assertThat(onBackend.get("token").asLong()).isEqualTo(work.parameterToken);

        assertThat(get(base + "health/fencelock", 200).get("status").asString()).isEqualTo("UP");

        // the client's meters, bound to the application's registry with the configured percentiles and tags
        JsonNode acquired = get(base + "metrics/fencelock.acquire?tag=outcome:granted&tag=app:two-nodes-test", 200);
        assertThat(acquired.get("measurements").get(0).get("statistic").asString())
                .isEqualTo("COUNT");
        assertThat(acquired.get("measurements").get(0).get("value").asDouble()).isGreaterThanOrEqualTo(1.0);
        assertThat(get(base + "metrics/fencelock.acquire.percentile?tag=phi:0.99", 200)
                        .get("name")
                        .asString())
                .isEqualTo("fencelock.acquire.percentile");
        assertThat(get(base + "metrics/fencelock.leases.held", 200)
                        .get("measurements")
                        .get(0)
                        .get("value")
                        .asDouble())
                .isEqualTo(1.0);

        operator().forceRelease("work:shown");
        assertThatThrownBy(() -> call.get(BOUND.toSeconds(), TimeUnit.SECONDS))
                .hasCauseInstanceOf(LeaseLostException.class);
        JsonNode health = get(base + "health/fencelock", 503);
        assertThat(health.get("status").asString()).isEqualTo("OUT_OF_SERVICE");
        assertThat(health.get("details").get("lastLost").get("name").asString()).isEqualTo("work:shown");
        assertThat(get(base + "locks", 200)
                        .get("recentLosses")
                        .get(0)
                        .get("reason")
                        .asString())
                .isEqualTo("REJECTED");
    }

    private static JsonNode get(String url, int status) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s: %s", url, response.body()).isEqualTo(status);
        return JsonMapper.builder().build().readTree(response.body());
    }
}
