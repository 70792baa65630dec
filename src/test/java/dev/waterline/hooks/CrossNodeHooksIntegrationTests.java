package dev.waterline.hooks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.HookReceiver;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hooks on several nodes of one deployment (PROTOCOL.md §7 and §8): the breaker's one probe is
 * one across the cluster, not one per node, and a delivery claimed by a node that is killed in
 * the middle of its call is sent again by another once its claim times out.
 */
class CrossNodeHooksIntegrationTests {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final String[] HOOKS = {
            "--waterline.hooks.allowed-hosts=localhost",
            "--waterline.hooks.workers=10",
            "--waterline.hooks.poll-interval=100ms",
            "--waterline.hooks.backoff-base=200ms",
            "--waterline.hooks.backoff-max=2s",
            "--waterline.hooks.max-attempts=50",
            "--waterline.hooks.breaker-failures=5",
            "--waterline.hooks.breaker-cooldown=1s",
            "--waterline.hooks.call-timeout=2s",
            "--waterline.hooks.claim-timeout=4s",
            "--waterline.hooks.maintenance-interval=300ms"};

    static JsonNode hook(Api api, String token, String hookId) {
        return api.get("/api/hooks/" + hookId, token).body();
    }

    static List<String> send(int port, String token, String chat, String prefix, int n) {
        List<String> ids = new ArrayList<>();
        try (WsClient ws = WsClient.connectWelcomed(port, token)) {
            for (int i = 0; i < n; i++) {
                ws.sendMessage(prefix + i, chat, "x" + i);
            }
            for (int i = 0; i < n; i++) {
                JsonNode a = ws.answer(prefix + i);
                assertThat(a.get("type").asString()).isEqualTo("accepted");
                ids.add(a.get("messageId").asString());
            }
        }
        return ids;
    }

    @Test
    void twoNodesLetExactlyOneProbeThroughBetweenThem() {
        AtomicBoolean healthy = new AtomicBoolean();
        List<Long> healthyArrivals = new ArrayList<>();
        try (Cluster cluster = new Cluster("cluster_hooks", 35);
             HookReceiver receiver = new HookReceiver().respond((r, before) -> {
                 if (!healthy.get()) {
                     return HookReceiver.Answer.status(503);
                 }
                 synchronized (healthyArrivals) {
                     healthyArrivals.add(r.arrivedNanos());
                 }
                 return new HookReceiver.Answer(200, Map.of(), 700);
             })) {
            ConfigurableApplicationContext one = cluster.start("hooks-one", HOOKS);
            ConfigurableApplicationContext two = cluster.start("hooks-two", HOOKS);
            Api a1 = new Api(Cluster.port(one));
            Api a2 = new Api(Cluster.port(two));
            String alice = a1.token("xh-alice");
            a1.token("xh-bob");
            String chat = a1.createChat(alice, "xh-bob");
            String hookId = a1.post("/api/chats/" + chat + "/hooks", alice, Map.of("kind", "http", "url", receiver.url("/h")))
                    .body().get("hookId").asString();
            List<String> ids = new ArrayList<>(send(Cluster.port(one), alice, chat, "a", 6));
            ids.addAll(send(Cluster.port(two), alice, chat, "b", 6));

            await().atMost(WAIT).until(() -> "open".equals(hook(a2, alice, hookId).get("breaker").asString()));
            await().atMost(WAIT).until(() -> Cluster.jdbc(one).queryForObject(
                    "SELECT count(*) FROM hook_deliveries WHERE hook_id = ? AND status NOT IN ('held', 'dead')", Long.class, hookId) == 0);
            healthy.set(true);

            await().atMost(WAIT).until(() -> "closed".equals(hook(a1, alice, hookId).get("breaker").asString()));
            List<Long> arrivals;
            synchronized (healthyArrivals) {
                arrivals = new ArrayList<>(healthyArrivals);
            }
            long probe = arrivals.getFirst();
            assertThat(arrivals.stream().filter(t -> t > probe && t < probe + TimeUnit.MILLISECONDS.toNanos(650)))
                    .as("nothing reached the target beside the probe, from either node").isEmpty();
            await().atMost(WAIT).until(() -> hook(a1, alice, hookId).get("pending").asLong() == 0);
            for (String id : ids) {
                assertThat(receiver.requestsFor(hookId + ":" + id)).as(id).isNotEmpty();
            }
        }
    }

    @Test
    void aDeliveryWhoseNodeIsKilledMidCallIsSentAgainByAnotherAfterTheClaimTimeout() throws Exception {
        AtomicBoolean hang = new AtomicBoolean(true);
        try (Cluster cluster = new Cluster("cluster_hooks_kill", 36);
             HookReceiver receiver = new HookReceiver().respond((r, before) ->
                     hang.get() ? new HookReceiver.Answer(200, Map.of(), 30_000) : HookReceiver.Answer.status(200))) {
            // the doomed node is the only one with workers until it dies
            Cluster.Node doomed = cluster.startProcess("hooks-doomed", HOOKS);
            List<String> quiet = new ArrayList<>(List.of(HOOKS));
            quiet.add("--waterline.hooks.enabled=false");
            ConfigurableApplicationContext survivor = cluster.start("hooks-survivor", quiet.toArray(String[]::new));
            Api api = new Api(Cluster.port(survivor));
            String alice = api.token("xk-alice");
            api.token("xk-bob");
            String chat = api.createChat(alice, "xk-bob");
            String hookId = api.post("/api/chats/" + chat + "/hooks", alice, Map.of("kind", "http", "url", receiver.url("/h")))
                    .body().get("hookId").asString();
            String messageId = send(Cluster.port(survivor), alice, chat, "m", 1).getFirst();
            String key = hookId + ":" + messageId;
            await().atMost(WAIT).until(() -> receiver.requestsFor(key).size() == 1);

            Cluster.kill(doomed);
            long killedAt = System.nanoTime();
            hang.set(false);
            // a node that delivers: the survivor's workers would have been off; a third node takes over
            ConfigurableApplicationContext taker = cluster.start("hooks-taker", HOOKS);
            await().atMost(WAIT).until(() -> receiver.requestsFor(key).size() >= 2);
            HookReceiver.Request again = receiver.requestsFor(key).get(1);
            assertThat(again.header("Waterline-Attempt")).isEqualTo("2");
            assertThat(again.arrivedNanos() - killedAt).as("not before the dead node's claim timed out")
                    .isGreaterThan(Duration.ofSeconds(2).toNanos());
            await().atMost(WAIT).until(() -> hook(api, alice, hookId).get("pending").asLong() == 0);
            assertThat(Cluster.jdbc(taker).queryForObject("SELECT count(*) FROM hook_deliveries WHERE hook_id = ?", Long.class, hookId))
                    .isZero();
        }
    }
}
