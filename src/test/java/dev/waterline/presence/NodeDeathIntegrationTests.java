package dev.waterline.presence;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.waterline.config.EmbeddedServers;
import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A node killed with SIGKILL (a process of its own: no graceful stop, no last heartbeat, its
 * sockets dropped by the kernel): its clients' pins stop holding the reclaim line within the node
 * timeout, they reconnect to another node and find every message in history, and nothing is lost;
 * and when the node that dies is the reclaim leader, another takes the lease over and deletes
 * nothing a live client still holds.
 */
class NodeDeathIntegrationTests {

    @Test
    void aNodeKilledWhileItsClientHoldsPinsStopsHoldingTheLineWithinTheNodeTimeoutAndNothingIsLost() throws Exception {
        try (Cluster cluster = new Cluster("cluster_death", 21)) {
            ConfigurableApplicationContext one = cluster.start("node-one");
            Cluster.Node doomed = cluster.startProcess("node-doomed");
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("death");
            StringRedisTemplate redis = Cluster.redis(one);
            List<String> sent = new ArrayList<>();
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice())) {
                WsClient bob = WsClient.connectWelcomed(doomed.port(), pair.bob());
                for (int i = 0; i < 5; i++) {
                    alice.sendMessage("death-" + i, pair.chat(), "message " + i);
                    sent.add(alice.answer("death-" + i).get("messageId").asString());
                }
                List<Long> rows = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    rows.add(bob.next("message").get("deliveryId").asLong());   // never acked
                }
                assertThat(redis.opsForZSet().score(WatermarkKeys.PINS, "death-bob")).isEqualTo(java.util.Collections.min(rows).doubleValue());

                long killedAt = System.nanoTime();
                Cluster.kill(doomed);
                await().atMost(Duration.ofSeconds(15)).until(() -> redis.opsForZSet().score(WatermarkKeys.PINS, "death-bob") == null);
                Duration freed = Duration.ofNanos(System.nanoTime() - killedAt);
                assertThat(freed).as("the dead node's client stopped holding the line within the node timeout and a few passes")
                        .isLessThan(Cluster.NODE_TIMEOUT.plusSeconds(5));
                // and alice is told that bob went offline, within the node timeout and the debounce (2 s here)
                JsonNode offline = alice.next(f -> "presence".equals(f.path("type").asString())
                        && "death-bob".equals(f.path("userId").asString()) && "offline".equals(f.path("state").asString()),
                        Duration.ofSeconds(20));
                assertThat(Duration.ofNanos(alice.arrivedAtNanos(offline) - killedAt))
                        .isLessThan(Cluster.NODE_TIMEOUT.plusSeconds(2).plusSeconds(5));
                await().atMost(Duration.ofSeconds(15)).until(() -> Cluster.jdbc(one).queryForObject(
                        "SELECT count(*) FROM outbox WHERE id = ANY (?::bigint[])", Long.class,
                        (Object) rows.stream().mapToLong(Long::longValue).toArray()) == 0);
                assertThat(bob.awaitClose(Duration.ofSeconds(5))).as("the kernel dropped the socket").isEqualTo(1006);

                // bob reconnects to the node that is left, resyncs, and receives what comes next live
                try (WsClient again = WsClient.connectWelcomed(Cluster.port(one), pair.bob())) {
                    assertThat(api.history(pair.bob(), pair.chat(), null, 100)).extracting(m -> m.get("messageId").asString())
                            .containsExactlyElementsOf(sent);
                    alice.sendMessage("death-after", pair.chat(), "after the death");
                    JsonNode live = again.next("message");
                    assertThat(live.get("body").asString()).isEqualTo("after the death");
                }
            }
        }
    }

    @Test
    void whenTheReclaimLeaderDiesAnotherNodeTakesTheLeaseAndDeletesNothingALiveClientHolds() throws Exception {
        String database = "cluster_leader";
        int pg = EmbeddedServers.postgresPort(Cluster.DATA, true, database);
        try (Cluster cluster = new Cluster(database, 22)) {
            // the leader first, so that it takes the lease: its own process, to be killed
            // bob holds one row unacked for the whole test: the attempts reaper must not withdraw him
            String patient = "--waterline.reapers.max-delivery-attempts=1000";
            Cluster.Node leader = cluster.startProcess("node-leader", patient);
            await().atMost(Duration.ofSeconds(20)).until(() -> lease(pg, database)[0] != null && lease(pg, database)[0].startsWith("node-leader-"));
            ConfigurableApplicationContext one = cluster.start("node-one", patient);
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("lease");
            String carol = api.token("lease-carol");
            String carolsChat = api.createChat(pair.alice(), "lease-carol");
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
                 WsClient bob = WsClient.connectWelcomed(Cluster.port(one), pair.bob());
                 WsClient carolWs = WsClient.connectWelcomed(Cluster.port(one), carol)) {
                alice.sendMessage("lease-bob", pair.chat(), "bob acks this one after the take-over");
                alice.answer("lease-bob");
                long bobs = bob.next("message").get("deliveryId").asLong();
                alice.sendMessage("lease-carol", carolsChat, "carol never acks this one");
                alice.answer("lease-carol");
                long carols = carolWs.next("message").get("deliveryId").asLong();
                assertThat(carols).isGreaterThan(bobs);
                long epochBefore = Long.parseLong(lease(pg, database)[1]);

                Cluster.kill(leader);
                String oneId = one.getBean(Presence.class).nodeId();
                await().atMost(Duration.ofSeconds(20)).until(() -> oneId.equals(lease(pg, database)[0]));
                assertThat(Long.parseLong(lease(pg, database)[1])).as("a take-over is a new epoch").isGreaterThan(epochBefore);
                // the new leader reclaims: bob's row, acked now, lies below the line (carol's pin) ...
                // (the take-over's new generation may make it owed to bob again, as every rebuild
                // does with rows not yet retired: a re-send bob acks like any delivery)
                bob.autoAck();
                bob.ack(bobs);
                await().atMost(Duration.ofSeconds(20)).until(() -> Cluster.jdbc(one).queryForObject(
                        "SELECT count(*) FROM outbox WHERE id = ?", Long.class, bobs) == 0);
                // ... and never deletes at or above a live client's pin
                assertThat(Cluster.jdbc(one).queryForObject("SELECT count(*) FROM outbox WHERE id = ?", Long.class, carols))
                        .as("carol still holds it").isOne();
                assertThat(Cluster.redis(one).opsForZSet().score(WatermarkKeys.PINS, "lease-carol")).isEqualTo((double) carols);
                assertThat(carolWs.isClosed()).as("carol is live: her pin is a live client's").isFalse();
            }
        }
    }

    /** The reclaim lease as PostgreSQL holds it: {leader, epoch}. */
    static String[] lease(int pg, String database) throws Exception {
        try (Connection db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pg + "/" + database, "postgres", "");
             ResultSet rs = db.createStatement().executeQuery("SELECT leader, leader_epoch FROM reclaim_marker")) {
            rs.next();
            return new String[] {rs.getString(1), Long.toString(rs.getLong(2))};
        }
    }
}
