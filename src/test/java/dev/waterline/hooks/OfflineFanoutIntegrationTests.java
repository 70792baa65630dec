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
 * (everyone shares it) and a 3 s commit timeout: the heavy sender's burst goes through the commit as
 * one fan-out row per hook and message, a bystander's sends are all accepted, and the fan-out then
 * writes every offline delivery, once each.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=hookfan",
        "spring.data.redis.database=34",
        "waterline.hooks.allowed-hosts=localhost",
        "waterline.inbound.writers=1",
        "waterline.inbound.commit-timeout=3s"})
class OfflineFanoutIntegrationTests {

    static final int MEMBERS = 499;
    static final int HOOKS = 10;
    static final int HEAVY_MESSAGES = 30;
    static final int BYSTANDER_MESSAGES = 30;

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void tenOfflineHooksOnA500MemberChatNeitherStallNorFailAnotherSendersMessages() {
        Api api = new Api(port);
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
     * The fan-out takes senders in turn: a sender whose own fan-outs wait behind a long backlog of
     * another's gets theirs written before that backlog is done.
     */
    @Test
    void theFanOutTakesSendersInTurnSoOnesBacklogDoesNotHoldUpAnother() {
        Api api = new Api(port);
        String flooder = api.token("turn-flooder");
        String quiet = api.token("turn-quiet");
        List<String> members = IntStream.range(0, 200).mapToObj(i -> "turn-member-" + i).toList();
        String floodChat = api.post("/api/chats", flooder, Map.of("members", members)).body().get("chatId").asString();
        String quietChat = api.createChat(quiet, "turn-away");
        for (String c : List.of(floodChat, quietChat)) {
            String owner = c.equals(floodChat) ? flooder : quiet;
            for (int i = 0; i < (c.equals(floodChat) ? HOOKS : 1); i++) {
                assertThat(api.post("/api/chats/" + c + "/hooks", owner,
                        Map.of("kind", "http", "url", "http://localhost:9/t-" + i, "events", List.of("offline"))).status()).isEqualTo(201);
            }
            jdbc.update("UPDATE hooks SET breaker = 'open', reopen_at = now() + interval '1 hour' WHERE chat_id = ?", c);
        }
        try (WsClient a = WsClient.connectWelcomed(port, flooder); WsClient b = WsClient.connectWelcomed(port, quiet)) {
            for (int i = 0; i < 60; i++) {
                a.sendMessage("f-" + i, floodChat, "flood " + i);
            }
            // sent at once behind the flood: its fan-out joins the back of the flood's 600
            b.sendMessage("q", quietChat, "one nudge");
            for (int i = 0; i < 60; i++) {
                assertThat(a.answer("f-" + i).get("type").asString()).isEqualTo("accepted");
            }
            assertThat(b.answer("q").get("type").asString()).isEqualTo("accepted");
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> jdbc.queryForObject("SELECT count(*) FROM hook_offline_fanouts"
                + " WHERE chat_id IN (?, ?)", Long.class, floodChat, quietChat) == 0);
        long quietId = jdbc.queryForObject("SELECT max(d.id) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id = ?", Long.class, quietChat);
        long floodLast = jdbc.queryForObject("SELECT max(d.id) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id = ?", Long.class, floodChat);
        long floodAfterQuiet = jdbc.queryForObject("SELECT count(*) FROM hook_deliveries d JOIN hooks h ON h.hook_id = d.hook_id"
                + " WHERE h.chat_id = ? AND d.id > ?", Long.class, floodChat, quietId);
        assertThat(quietId).as("the quiet sender's nudge was written before the flood's last").isLessThan(floodLast);
        assertThat(floodAfterQuiet).as("most of the flood's 120,000 deliveries came after it").isGreaterThan(60_000);
    }
}
