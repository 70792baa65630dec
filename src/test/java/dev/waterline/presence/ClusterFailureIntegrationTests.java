package dev.waterline.presence;

import java.time.Duration;
import java.util.List;

import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import dev.waterline.support.TcpProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a cluster must survive beyond a clean node death (each found by a review read, each
 * reproduced here first): a close to another node that never arrives, and a Redis that loses its
 * data while clients are connected.
 */
class ClusterFailureIntegrationTests {

    /**
     * bob moves from node one to node two, and node one never hears the close (its channel is
     * deaf: a pub/sub reconnect, a full inbox). Node one still holds his old connection when alice
     * sends there: the row must reach his new connection on node two, not vanish into the old one.
     */
    @ParameterizedTest(name = "fast path on: {0}")
    @ValueSource(booleans = {true, false})
    void aRowForAUserWhoseCloseNeverArrivedReachesHisNewerConnectionOnTheOtherNode(boolean fastPath) throws Exception {
        // fast path off: every row is shed (owed to the connection here), the other branch
        try (Cluster cluster = new Cluster("cluster_deaf_" + fastPath, fastPath ? 25 : 29)) {
            ConfigurableApplicationContext one = cluster.start("node-one", "--waterline.delivery.fast-path=" + fastPath);
            ConfigurableApplicationContext two = cluster.start("node-two");
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("deaf");
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
                 WsClient oldBob = WsClient.connectWelcomed(Cluster.port(one), pair.bob())) {
                deafen(one);
                try (WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob()).autoAck()) {
                    assertThat(oldBob.isClosed()).as("node one never got the close").isFalse();
                    alice.sendMessage("deaf-1", pair.chat(), "for bob's newer connection");
                    String id = alice.answer("deaf-1").get("messageId").asString();

                    JsonNode got = bob.next(f -> "message".equals(f.path("type").asString()), Duration.ofSeconds(20));
                    assertThat(got.get("messageId").asString()).isEqualTo(id);
                    assertThat(oldBob.awaitClose(Duration.ofSeconds(10))).as("node one found the old connection superseded")
                            .isEqualTo(4009);
                }
            }
        }
    }

    /**
     * Redis loses everything while bob is connected on node two with a row unacked, and node two is
     * slow to notice (its poller and reclaim paused). No other node's poller may retire bob's row
     * for want of a recipient meanwhile (Redis, having lost bob's epoch, says he is nowhere); once
     * node two notices, bob's connection, which Redis no longer names, is closed (1012), and he
     * reconnects and finds the message in history.
     */
    @Test
    void afterRedisLosesItsDataNoRowOfAConnectedClientIsRetiredAndTheClientIsToldToResync() throws Exception {
        try (Cluster cluster = new Cluster("cluster_flush", 26)) {
            ConfigurableApplicationContext one = cluster.start("node-one");
            ConfigurableApplicationContext two = cluster.start("node-two");
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("flush");
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
                 WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
                alice.sendMessage("flush-1", pair.chat(), "never acked");
                String id = alice.answer("flush-1").get("messageId").asString();
                long row = bob.next("message").get("deliveryId").asLong();
                List<SmartLifecycle> paused = List.of(lifecycle(two, "dev.waterline.delivery.OutboxPoller"),
                        lifecycle(two, "dev.waterline.reclaim.Reclaim"));
                paused.forEach(SmartLifecycle::stop);
                Cluster.redis(one).execute((RedisCallback<Object>) c -> {
                    c.serverCommands().flushDb();
                    return null;
                });
                // node one's poller claims the row when it falls due (3 s) and every pass after:
                // it must leave it in delivery
                await().during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(8)).until(() -> !retired(one, row));

                paused.forEach(SmartLifecycle::start);
                assertThat(bob.awaitClose(Duration.ofSeconds(20))).as("node two closes what Redis no longer names").isEqualTo(1012);
                try (WsClient again = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
                    assertThat(api.history(pair.bob(), pair.chat(), null, 10)).extracting(m -> m.get("messageId").asString())
                            .containsExactly(id);
                }
            }
        }
    }

    /**
     * Node two is cut off from Redis (its connection to Redis runs through a proxy the test cuts)
     * while bob is connected there: it closes bob's connection (1012) before the others declare
     * it dead, bob reconnects to node one and hears alice live there; when Redis is back, node two
     * finds its tombstone, fences, joins again, and serves bob once more.
     */
    @Test
    void aNodeCutOffFromRedisClosesItsClientsWhoMoveToANodeThatCanServeThem() throws Exception {
        int redisPort = dev.waterline.config.EmbeddedServers.redisPort(Cluster.DATA, true);
        try (Cluster cluster = new Cluster("cluster_cutoff", 30); TcpProxy toRedis = new TcpProxy(redisPort)) {
            ConfigurableApplicationContext one = cluster.start("node-one");
            // Redis named (through the proxy), so PostgreSQL must be named too: naming one alone is refused
            int pg = dev.waterline.config.EmbeddedServers.postgresPort(Cluster.DATA, true, "cluster_cutoff");
            ConfigurableApplicationContext two = cluster.start("node-two", "--spring.data.redis.host=127.0.0.1",
                    "--spring.data.redis.port=" + toRedis.port(), "--spring.datasource.url=jdbc:postgresql://127.0.0.1:" + pg + "/cluster_cutoff",
                    "--spring.datasource.username=postgres", "--spring.datasource.password=");
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("cutoff");
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
                 WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
                long cutAt = System.nanoTime();
                toRedis.cut();
                assertThat(bob.awaitClose(Duration.ofSeconds(10))).isEqualTo(1012);
                assertThat(Duration.ofNanos(bob.closedAtNanos() - cutAt)).as("closed before the others' node timeout ran out")
                        .isLessThan(Cluster.NODE_TIMEOUT.plusSeconds(1));
                try (WsClient moved = WsClient.connectWelcomed(Cluster.port(one), pair.bob())) {
                    alice.sendMessage("cutoff-1", pair.chat(), "to bob on node one");
                    String id = alice.answer("cutoff-1").get("messageId").asString();
                    assertThat(moved.next("message").get("messageId").asString()).isEqualTo(id);
                }
                toRedis.restore();
                // back: node two beat again (it was swept, found its tombstone, fenced, joined) and
                // trusts its part of the index under the generation the sweep began
                String twoId = two.getBean(Presence.class).nodeId();
                var twoHealth = two.getBean(dev.waterline.watermark.IndexHealth.class);
                await().atMost(Duration.ofSeconds(30)).until(() -> Cluster.redis(one).opsForZSet()
                        .score(dev.waterline.redis.RedisKeys.NODES, twoId) != null
                        && twoHealth.trustedGeneration() == one.getBean(dev.waterline.watermark.IndexHealth.class).trustedGeneration());
                try (WsClient back = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
                    alice.sendMessage("cutoff-2", pair.chat(), "to bob on node two again");
                    String id = alice.answer("cutoff-2").get("messageId").asString();
                    assertThat(back.next(f -> "message".equals(f.path("type").asString()), Duration.ofSeconds(15))
                            .get("messageId").asString()).isEqualTo(id);
                }
            }
        }
    }

    private static boolean retired(ConfigurableApplicationContext ctx, long row) {
        return Boolean.TRUE.equals(Cluster.jdbc(ctx).queryForObject(
                "SELECT coalesce(bool_or(due_at = 'infinity'), false) FROM outbox WHERE id = ?", Boolean.class, row));
    }

    private static SmartLifecycle lifecycle(ConfigurableApplicationContext ctx, String type) throws ClassNotFoundException {
        return (SmartLifecycle) ctx.getBean(Class.forName(type));
    }

    /** Stops a node's subscription to its channel: what other nodes send it is lost. */
    private static void deafen(ConfigurableApplicationContext ctx) throws ReflectiveOperationException {
        NodeBus bus = ctx.getBean(NodeBus.class);
        var field = bus.getClass().getDeclaredField("listener");
        field.setAccessible(true);
        ((RedisMessageListenerContainer) field.get(bus)).stop();
    }
}
