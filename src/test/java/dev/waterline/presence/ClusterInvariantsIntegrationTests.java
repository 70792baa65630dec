package dev.waterline.presence;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The message path's invariants with two nodes committing into the same chats at once (I1, I6, I7
 * across nodes): every accepted message is in history, each outbox row has its history row, a
 * chat's seqs are 1..n with no gap and no repeat whichever node committed them, and a retry of a
 * send on the other node (the client moved) answers the original message, creating nothing.
 */
class ClusterInvariantsIntegrationTests {

    static final int SENDERS = 6;
    static final int SENDS = 40;

    @Test
    void twoNodesSendingIntoOneChatAtOnceKeepItsSeqsGapFreeAndARetryOnTheOtherNodeCreatesNothing() throws Exception {
        try (Cluster cluster = new Cluster("cluster_invariants", 27)) {
            ConfigurableApplicationContext one = cluster.start("node-one");
            ConfigurableApplicationContext two = cluster.start("node-two");
            Api api = new Api(Cluster.port(one));
            List<String> users = new ArrayList<>();
            for (int i = 0; i < SENDERS; i++) {
                users.add("inv-" + i);
            }
            String owner = api.token(users.getFirst());
            String chat = api.createChat(owner, users.subList(1, users.size()).toArray(String[]::new));
            Map<String, String> accepted = new ConcurrentHashMap<>();   // correlationId -> messageId
            List<WsClient> clients = new ArrayList<>();
            List<Thread> senders = new ArrayList<>();
            try {
                for (int i = 0; i < SENDERS; i++) {
                    WsClient c = WsClient.connectWelcomed(Cluster.port(i % 2 == 0 ? one : two), api.token(users.get(i))).autoAck();
                    clients.add(c);
                    String user = users.get(i);
                    senders.add(Thread.startVirtualThread(() -> {
                        for (int n = 0; n < SENDS; n++) {
                            c.sendMessage(user + "-" + n, chat, "from " + user + " #" + n);
                        }
                        for (int n = 0; n < SENDS; n++) {
                            JsonNode a = c.answer(user + "-" + n);
                            if ("accepted".equals(a.path("type").asString())) {
                                accepted.put(user + "-" + n, a.get("messageId").asString());
                            }
                        }
                    }));
                }
                for (Thread t : senders) {
                    t.join(Duration.ofSeconds(60));
                }
            }
            finally {
                clients.forEach(WsClient::close);
            }
            assertThat(accepted).as("every send accepted").hasSize(SENDERS * SENDS);

            List<JsonNode> history = api.history(owner, chat, null, 1000);
            List<Long> seqs = history.stream().map(m -> m.get("seq").asLong()).toList();
            List<Long> expected = new ArrayList<>();
            for (long s = 1; s <= SENDERS * SENDS; s++) {
                expected.add(s);
            }
            assertThat(seqs).as("I7: 1..n, no gap, no repeat, in order").isEqualTo(expected);
            Set<String> stored = new HashSet<>();
            history.forEach(m -> stored.add(m.get("messageId").asString()));
            assertThat(stored).as("I6: every accepted message is in history, once").containsExactlyInAnyOrderElementsOf(accepted.values());
            assertThat(Cluster.jdbc(one).queryForObject(
                    "SELECT count(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM message_history h WHERE h.message_id = o.message_id)",
                    Long.class)).as("I1: no outbox row without its history row").isZero();

            // inv-0 sent through node one; its retry of one send, through node two, is that send
            try (WsClient moved = WsClient.connectWelcomed(Cluster.port(two), owner)) {
                moved.sendMessage("inv-0-7", chat, "from inv-0 #7");
                JsonNode again = moved.answer("inv-0-7");
                assertThat(again.get("type").asString()).isEqualTo("accepted");
                assertThat(again.get("messageId").asString()).as("I6: the original message").isEqualTo(accepted.get("inv-0-7"));
            }
            assertThat(api.history(owner, chat, null, 1000)).as("the retry created nothing").hasSize(SENDERS * SENDS);
        }
    }
}
