package dev.waterline.hooks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What one sender's offline hooks add to a shared group commit is bounded: a probe's member of a
 * 500-member chat with ten offline hooks made each message insert 5,010 rows inside its commit, the
 * batches hit the commit timeout, and everyone sharing that writer was refused. One writer here
 * (everyone shares it) and a 2 s commit timeout: the heavy sender's burst goes through the commit as
 * one fan-out row per hook and message, a bystander's sends are all accepted, and the fan-out then
 * writes every offline delivery, once each.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=hookfan",
        "spring.data.redis.database=34",
        "waterline.hooks.allowed-hosts=localhost",
        "waterline.inbound.writers=1",
        "waterline.inbound.commit-timeout=2s"})
class OfflineFanoutIntegrationTests {

    static final int MEMBERS = 499;
    static final int HOOKS = 10;
    static final int HEAVY_MESSAGES = 60;
    static final int BYSTANDER_MESSAGES = 30;

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    OfflineFanouts fanouts;

    @Autowired
    javax.sql.DataSource dataSource;

    @Autowired
    org.springframework.transaction.PlatformTransactionManager transactions;

    @Autowired
    HookWorkers workers;

    @Autowired
    HookMetrics hookMetrics;

    @Autowired
    dev.waterline.lifecycle.Loops loops;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry registry;

    double done(io.micrometer.core.instrument.MeterRegistry in) {
        return in.get("waterline.hook.offline.fanouts.done").counter().count();
    }

    @Test
    void tenOfflineHooksOnA500MemberChatNeitherStallNorFailAnotherSendersMessages() throws Exception {
        Api api = new Api(port);
        double doneBefore = done(registry);
        String heavy = api.token("fan-heavy");
        List<String> members = IntStream.range(0, MEMBERS).mapToObj(i -> "fan-member-" + i).toList();
        Api.Response chat = api.post("/api/chats", heavy, Map.of("members", members));
        assertThat(chat.status()).isEqualTo(201);
        String heavyChat = chat.body().get("chatId").asString();
        for (int i = 0; i < HOOKS; i++) {
            Api.Response hook = api.post("/api/chats/" + heavyChat + "/hooks", heavy,
                    Map.of("kind", "http", "url", "http://localhost:9/nudge-" + i, "events", List.of("offline")));
            assertThat(hook.status()).isEqualTo(201);
        }
        // held, not called: the test is about what the commit and the fan-out write
        jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE chat_id = ?", heavyChat);
        Api.Pair bystanders = api.pair("fan-bystander");

        try (WsClient sender = WsClient.connectWelcomed(port, heavy);
             WsClient bystander = WsClient.connectWelcomed(port, bystanders.alice())) {
            for (int i = 0; i < Math.max(HEAVY_MESSAGES, BYSTANDER_MESSAGES); i++) {
                if (i < HEAVY_MESSAGES) {
                    sender.sendMessage("heavy-" + i, heavyChat, "everyone is away " + i);
                }
                if (i < BYSTANDER_MESSAGES) {
                    bystander.sendMessage("by-" + i, bystanders.chat(), "hello " + i);
                }
            }
            List<String> answers = new ArrayList<>();
            for (int i = 0; i < BYSTANDER_MESSAGES; i++) {
                JsonNode a = bystander.answer("by-" + i);
                answers.add(a.get("type").asString() + (a.has("code") ? ":" + a.get("code").asString() : ""));
            }
            assertThat(answers).as("the bystander shares the heavy sender's writer").containsOnly("accepted");
            for (int i = 0; i < HEAVY_MESSAGES; i++) {
                assertThat(sender.answer("heavy-" + i).get("type").asString()).isEqualTo("accepted");
            }
        }

        long expected = (long) HEAVY_MESSAGES * MEMBERS * HOOKS;
        // a second node's fan-out on the same database, passing as fast as it can beside this one's
        io.micrometer.core.instrument.simple.SimpleMeterRegistry otherRegistry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        OfflineFanouts otherNode = new OfflineFanouts(new OfflineFanoutRepository(dataSource, transactions), workers, hookMetrics, loops,
                new dev.waterline.metrics.WaterlineMetrics(otherRegistry));
        java.util.concurrent.atomic.AtomicBoolean racing = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread other = Thread.ofVirtual().start(() -> {
            while (racing.get()) {
                otherNode.pass();
            }
        });
        try {
            await().atMost(Duration.ofSeconds(90)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM hook_offline_fanouts WHERE chat_id = ?", Long.class, heavyChat) == 0);
        }
        finally {
            racing.set(false);
            other.join(Duration.ofSeconds(30));
        }
        assertThat(done(registry) - doneBefore + done(otherRegistry)).as("each fan-out expanded once, by one node or the other")
                .isEqualTo(HEAVY_MESSAGES * HOOKS);
        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
            assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_offline_fanouts WHERE chat_id = ?", Long.class, heavyChat)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                    + " WHERE h.chat_id = ? AND d.event = 'offline'", Long.class, heavyChat)).isEqualTo(expected);
        });
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT d.idempotency_key) FROM hook_deliveries d JOIN hooks h"
                + " ON h.hook_id = d.hook_id WHERE h.chat_id = ?", Long.class, heavyChat)).as("each once").isEqualTo(expected);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id = ? AND d.status <> 'held'", Long.class, heavyChat)).as("born held behind their open breakers").isZero();
        JsonNode sample = Api.JSON.readTree(jdbc.queryForObject("SELECT payload FROM hook_deliveries d JOIN hooks h"
                + " ON h.hook_id = d.hook_id WHERE h.chat_id = ? LIMIT 1", String.class, heavyChat));
        assertThat(sample.get("event").asString()).isEqualTo("offline");
        assertThat(sample.get("chatId").asString()).isEqualTo(heavyChat);
        assertThat(sample.get("userId").asString()).startsWith("fan-member-");
        assertThat(sample.get("seq").asLong()).isBetween(1L, (long) HEAVY_MESSAGES);
    }

    /**
     * The fan-out takes senders in turn, wherever their ids sort: a sender whose id sorts after
     * thirty-three others, each with a backlog, has its nudge written before those backlogs are
     * done (a pass takes 32 senders; the next one starts after the last it served).
     */
    @Test
    void theFanOutTakesSendersInTurnSoNoOnesBacklogHoldsUpAnother() {
        Api api = new Api(port);
        List<String> flooders = IntStream.range(0, 33).mapToObj(i -> "aaa-turn-flooder-" + (100 + i)).toList();
        List<String> members = IntStream.range(0, 50).mapToObj(i -> "turn-member-" + i).toList();
        List<String> floodChats = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        for (String f : flooders) {
            String token = api.token(f);
            tokens.add(token);
            String chat = api.post("/api/chats", token, Map.of("members", members)).body().get("chatId").asString();
            floodChats.add(chat);
            assertThat(api.post("/api/chats/" + chat + "/hooks", token,
                    Map.of("kind", "http", "url", "http://localhost:9/t", "events", List.of("offline"))).status()).isEqualTo(201);
            jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE chat_id = ?", chat);
        }
        String quiet = api.token("zzz-turn-quiet");
        String quietChat = api.createChat(quiet, "turn-away");
        assertThat(api.post("/api/chats/" + quietChat + "/hooks", quiet,
                Map.of("kind", "http", "url", "http://localhost:9/q", "events", List.of("offline"))).status()).isEqualTo(201);
        jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE chat_id = ?", quietChat);

        List<WsClient> clients = new ArrayList<>();
        try {
            for (int f = 0; f < flooders.size(); f++) {
                WsClient c = WsClient.connectWelcomed(port, tokens.get(f));
                clients.add(c);
                for (int i = 0; i < 20; i++) {
                    c.sendMessage("f-" + i, floodChats.get(f), "flood " + i);
                }
            }
            try (WsClient b = WsClient.connectWelcomed(port, quiet)) {
                // sent behind the flood: its fan-out joins the back of 660
                b.sendMessage("q", quietChat, "one nudge");
                assertThat(b.answer("q").get("type").asString()).isEqualTo("accepted");
            }
            for (WsClient c : clients) {
                for (int i = 0; i < 20; i++) {
                    assertThat(c.answer("f-" + i).get("type").asString()).isEqualTo("accepted");
                }
            }
        }
        finally {
            clients.forEach(WsClient::close);
        }
        String chats = "'" + String.join("','", floodChats) + "'";
        await().atMost(Duration.ofSeconds(90)).until(() -> jdbc.queryForObject("SELECT count(*) FROM hook_offline_fanouts"
                + " WHERE chat_id IN (" + chats + ", ?)", Long.class, quietChat) == 0);
        long quietId = jdbc.queryForObject("SELECT max(d.id) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id = ?", Long.class, quietChat);
        long floodAfterQuiet = jdbc.queryForObject("SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id IN (" + chats + ") AND d.id > ?", Long.class, quietId);
        long flood = (long) flooders.size() * 20 * members.size();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id IN (" + chats + ")", Long.class)).isEqualTo(flood);
        assertThat(floodAfterQuiet).as("the quiet sender, sorting last, was served within the first rounds").isGreaterThan(flood / 2);
    }
}
