package dev.waterline.presence;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two nodes on one PostgreSQL and one Redis (PROTOCOL.md §8): a message accepted on one reaches a
 * recipient connected to the other live, its ack there lets reclaim (on whichever node leads)
 * delete it, and a read receipt and a typing indicator cross too; one session per user across the nodes, a newer
 * connection on one closing the older on the other with 4009 before it is welcomed, and racing
 * connects leaving exactly one.
 */
class ClusterIntegrationTests {

    static Cluster cluster;
    static ConfigurableApplicationContext one;
    static ConfigurableApplicationContext two;
    static Api api;

    @BeforeAll
    static void twoNodes() {
        cluster = new Cluster("cluster2", 20);
        one = cluster.start("node-one");
        two = cluster.start("node-two");
        api = new Api(Cluster.port(one));
        await().atMost(Duration.ofSeconds(20)).until(() -> one.getBean(Presence.class).liveNodes() == 2
                && two.getBean(Presence.class).liveNodes() == 2);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void aMessageAcceptedOnOneNodeReachesARecipientOnTheOtherLiveAndItsAckLetsReclaimDeleteIt() {
        Api.Pair pair = api.pair("cross");
        try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
             WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
            double before = counter(two, "fast");
            alice.sendMessage("cross-1", pair.chat(), "over the wire");
            JsonNode accepted = alice.answer("cross-1");
            assertThat(accepted.get("type").asString()).isEqualTo("accepted");

            JsonNode message = bob.next("message");
            assertThat(message.get("messageId").asString()).isEqualTo(accepted.get("messageId").asString());
            assertThat(message.get("body").asString()).isEqualTo("over the wire");
            // counted once the fast path's loop over its batch is done, which may be just after bob read the frame
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                    assertThat(counter(two, "fast")).as("written live by the node that holds bob").isGreaterThan(before));
            long row = message.get("deliveryId").asLong();
            // bob's pending row holds the line on whichever node leads: it outlives the grace (2 s)
            // and many reclaim passes while unacked ...
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() ->
                    Cluster.jdbc(one).queryForObject("SELECT count(*) FROM outbox WHERE id = ?", Long.class, row) == 1);
            // ... and goes once he acks it, on the other node than the one that committed it
            bob.ack(row);

            await().atMost(Duration.ofSeconds(15)).until(() ->
                    Cluster.jdbc(one).queryForObject("SELECT count(*) FROM outbox WHERE id = ?", Long.class, row) == 0);
            assertThat(api.history(pair.bob(), pair.chat(), null, 10)).hasSize(1);
        }
    }

    @Test
    void aReadReceiptReachesAMemberConnectedToTheOtherNode() {
        Api.Pair pair = api.pair("cross-read");
        try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
             WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob()).autoAck()) {
            alice.sendMessage("cross-read-1", pair.chat(), "read me");
            long seq = alice.answer("cross-read-1").get("seq").asLong();
            bob.next("message");
            bob.send(Map.of("type", "read", "chatId", pair.chat(), "seq", seq));
            JsonNode read = alice.next("read");
            assertThat(read.get("seq").asLong()).isEqualTo(seq);
            assertThat(read.get("userId").asString()).isEqualTo("cross-read-bob");
        }
    }

    @Test
    void aTypingIndicatorReachesAMemberConnectedToTheOtherNode() {
        Api.Pair pair = api.pair("cross-typing");
        try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
             WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
            alice.send(Map.of("type", "typing", "chatId", pair.chat()));
            JsonNode typing = bob.next("typing");
            assertThat(typing.get("chatId").asString()).isEqualTo(pair.chat());
            assertThat(typing.get("userId").asString()).isEqualTo("cross-typing-alice");
        }
    }

    @Test
    void presenceCrossesTheNodesAndMovingBetweenThemIsNoChange() {
        Api.Pair pair = api.pair("cross-presence");
        try (WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
            WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
            JsonNode online = bob.next(f -> "presence".equals(f.path("type").asString())
                    && "cross-presence-alice".equals(f.path("userId").asString()), Duration.ofSeconds(15));
            assertThat(online.get("state").asString()).isEqualTo("online");
            // alice moves to the other node: the older connection closes (4009), she stays online
            try (WsClient moved = WsClient.connectWelcomed(Cluster.port(two), pair.alice())) {
                assertThat(alice.awaitClose(Duration.ofSeconds(10))).isEqualTo(4009);
                StringRedisTemplate redis = Cluster.redis(one);
                // node one stamps the older connection's leave (which raises the version: nothing lowers it);
                // a settle, at once on node two or due a debounce later, finds her on node two
                await().atMost(Duration.ofSeconds(15)).until(() ->
                        redis.opsForHash().get("wl:online:{cross-presence-alice}", "v") != null);
                await().atMost(Duration.ofSeconds(15)).until(() ->
                        redis.opsForZSet().score("wl:online:due", "cross-presence-alice") == null
                        && redis.opsForHash().get("wl:online:{cross-presence-alice}", "left") == null);
                await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(3)).until(() -> {
                    bob.send(Map.of("type", "ping"));
                    bob.next("pong");
                    return bob.received().stream().filter(f -> "presence".equals(f.path("type").asString())).count() == 1;
                });
            }
            JsonNode offline = bob.next(f -> "presence".equals(f.path("type").asString())
                    && "offline".equals(f.path("state").asString()), Duration.ofSeconds(15));
            assertThat(offline.get("userId").asString()).isEqualTo("cross-presence-alice");
            assertThat(offline.get("lastSeen").isNull()).isFalse();
        }
    }

    @Test
    void aConnectionOnTheOtherNodeClosesTheOlderOneWith4009BeforeItIsWelcomed() {
        String token = api.token("cross-evict");
        try (WsClient first = WsClient.connectWelcomed(Cluster.port(one), token)) {
            ClientSession older = one.getBean(SessionRegistry.class).get("cross-evict");
            assertThat(older).isNotNull();
            try (WsClient second = WsClient.connect(Cluster.port(two), token)) {
                JsonNode welcome = second.next("welcome");
                assertThat(first.awaitClose(Duration.ofSeconds(5))).isEqualTo(4009);
                ClientSession newer = two.getBean(SessionRegistry.class).get("cross-evict");
                assertThat(newer.sessionId()).isEqualTo(welcome.get("sessionId").asString());
                // The server's order, read from both nodes' connections (one JVM, one nanoTime): the
                // client's own arrival times of a close on one socket and a welcome on another can
                // invert when its reading threads wait for a core.
                assertThat(older.closeIssuedNanos()).as("the older connection's close was issued").isNotZero();
                assertThat(older.closeIssuedNanos()).as("the older connection was closed before the newer was welcomed")
                        .isLessThan(newer.welcomedNanos());
                assertThat(Cluster.redis(one).opsForValue().get(WatermarkKeys.sessionKey("cross-evict")))
                        .isEqualTo(welcome.get("sessionId").asString());
                assertThat(Cluster.redis(one).opsForValue().get(WatermarkKeys.nodeKey("cross-evict")))
                        .isEqualTo(two.getBean(Presence.class).nodeId()).startsWith("node-two-");
            }
        }
    }

    @Test
    void racingConnectsOnBothNodesLeaveExactlyOneLiveSession() throws Exception {
        for (int round = 0; round < 8; round++) {
            String user = "race-" + round;
            String token = api.token(user);
            List<CompletableFuture<WsClient>> connecting = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int port = Cluster.port(i % 2 == 0 ? one : two);
                connecting.add(CompletableFuture.supplyAsync(() -> WsClient.connect(port, token)));
            }
            List<WsClient> clients = new ArrayList<>();
            for (CompletableFuture<WsClient> c : connecting) {
                clients.add(c.get());
            }
            try {
                // each ends closed with 4009, or welcomed and open; once they settle, one is open
                await().atMost(Duration.ofSeconds(10)).until(() -> clients.stream().filter(c -> !c.isClosed()).count() == 1
                        && clients.stream().allMatch(c -> c.isClosed() || welcomed(c)));
                List<WsClient> open = clients.stream().filter(c -> !c.isClosed()).toList();
                for (WsClient c : clients) {
                    if (c.isClosed()) {
                        assertThat(c.awaitClose(Duration.ofSeconds(1))).as("round %d", round).isEqualTo(4009);
                    }
                }
                String sessionId = open.getFirst().next("welcome").get("sessionId").asString();
                assertThat(Cluster.redis(one).opsForValue().get(WatermarkKeys.sessionKey(user)))
                        .as("round %d: Redis names the survivor", round).isEqualTo(sessionId);
            }
            finally {
                clients.forEach(WsClient::close);
            }
        }
    }

    private static boolean welcomed(WsClient c) {
        return c.received().stream().anyMatch(f -> "welcome".equals(f.path("type").asString()));
    }

    static double counter(ConfigurableApplicationContext ctx, String path) {
        return ctx.getBean(MeterRegistry.class).get("waterline.deliveries").tag("path", path).counter().count();
    }
}
