package dev.waterline.presence;

import java.time.Duration;
import java.util.List;

import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three nodes: a group chat whose members are connected one to each node. A message sent on any
 * node reaches the members on the two others live, and once each has acked, reclaim deletes its
 * rows; a member who moves to a third node closes his connection on the first (4009).
 */
class ThreeNodesIntegrationTests {

    @Test
    void aGroupSpreadOverThreeNodesHearsEveryMessageLiveWhoeverSendsIt() {
        try (Cluster cluster = new Cluster("cluster_three", 28)) {
            List<ConfigurableApplicationContext> nodes = List.of(cluster.start("node-a"), cluster.start("node-b"),
                    cluster.start("node-c"));
            await().atMost(Duration.ofSeconds(20)).until(() -> nodes.stream().allMatch(n -> n.getBean(Presence.class).liveNodes() == 3));
            Api api = new Api(Cluster.port(nodes.getFirst()));
            String ann = api.token("three-ann");
            String chat = api.createChat(ann, "three-ben", "three-cat");
            List<String> tokens = List.of(ann, api.token("three-ben"), api.token("three-cat"));
            List<WsClient> members = List.of(
                    WsClient.connectWelcomed(Cluster.port(nodes.get(0)), tokens.get(0)),
                    WsClient.connectWelcomed(Cluster.port(nodes.get(1)), tokens.get(1)),
                    WsClient.connectWelcomed(Cluster.port(nodes.get(2)), tokens.get(2)));
            try {
                for (int sender = 0; sender < 3; sender++) {
                    String corr = "three-" + sender;
                    members.get(sender).sendMessage(corr, chat, "from node " + sender);
                    String id = members.get(sender).answer(corr).get("messageId").asString();
                    for (int other = 0; other < 3; other++) {
                        if (other == sender) {
                            continue;
                        }
                        JsonNode m = members.get(other).next(f -> "message".equals(f.path("type").asString())
                                && id.equals(f.path("messageId").asString()), Duration.ofSeconds(10));
                        members.get(other).ack(m.get("deliveryId").asLong());
                    }
                }
                await().atMost(Duration.ofSeconds(15)).until(() ->
                        Cluster.jdbc(nodes.getFirst()).queryForObject("SELECT count(*) FROM outbox", Long.class) == 0);
                assertThat(api.history(ann, chat, null, 10)).hasSize(3);

                // ben moves from node b to node c
                try (WsClient moved = WsClient.connectWelcomed(Cluster.port(nodes.get(2)), tokens.get(1))) {
                    assertThat(members.get(1).awaitClose(Duration.ofSeconds(5))).isEqualTo(4009);
                    members.get(0).sendMessage("three-after", chat, "to ben on node c");
                    String id = members.get(0).answer("three-after").get("messageId").asString();
                    assertThat(moved.next("message").get("messageId").asString()).isEqualTo(id);
                }
            }
            finally {
                members.forEach(WsClient::close);
            }
        }
    }
}
