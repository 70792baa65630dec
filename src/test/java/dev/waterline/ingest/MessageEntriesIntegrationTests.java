package dev.waterline.ingest;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * PROTOCOL.md §9 end to end: edits, deletes, reactions and replies are entries of the chat's log,
 * each answered {@code accepted} with its own seq, delivered to the other members as a
 * {@code message} of its kind, and shown by history (entries in seq order, each text message in
 * its current state); a delete erases the text everywhere the database held it; every refusal is
 * the code §9 names and leaves nothing stored.
 */
@WaterlineIntegrationTest
class MessageEntriesIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    private static JsonNode accepted(WsClient c, String corr) {
        JsonNode a = c.answer(corr);
        assertThat(a.get("type").asString()).as(a.toString()).isEqualTo("accepted");
        return a;
    }

    private static JsonNode refused(WsClient c, String corr, String code) {
        JsonNode a = c.answer(corr);
        assertThat(a.get("type").asString()).as(a.toString()).isEqualTo("error");
        assertThat(a.get("code").asString()).as(a.toString()).isEqualTo(code);
        return a;
    }

    private static JsonNode message(WsClient c, String messageId) {
        return c.next(f -> "message".equals(f.path("type").asString()) && messageId.equals(f.path("messageId").asString()),
                Duration.ofSeconds(10));
    }

    private JsonNode one(String token, String chat, String messageId) {
        Api.Response r = api.get("/api/chats/" + chat + "/messages/" + messageId, token);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r.body();
    }

    @Test
    void anEditIsAnEntryDeliveredAndTheMessageShowsItsLastText() {
        Api.Pair p = api.pair("ent-edit");
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob()).autoAck()) {
            a.sendMessage("m1", p.chat(), "first draft");
            JsonNode sent = accepted(a, "m1");
            String id = sent.get("messageId").asString();
            a.send(Map.of("type", "edit", "correlationId", "e1", "chatId", p.chat(), "messageId", id, "body", "second draft"));
            JsonNode e1 = accepted(a, "e1");
            a.send(Map.of("type", "edit", "correlationId", "e2", "chatId", p.chat(), "messageId", id, "body", "final text"));
            JsonNode e2 = accepted(a, "e2");

            assertThat(e1.get("seq").asLong()).isEqualTo(sent.get("seq").asLong() + 1);
            assertThat(e2.get("seq").asLong()).isEqualTo(e1.get("seq").asLong() + 1);
            JsonNode live = message(b, e2.get("messageId").asString());
            assertThat(live.get("kind").asString()).isEqualTo("edit");
            assertThat(live.get("targetId").asString()).isEqualTo(id);
            assertThat(live.get("body").asString()).isEqualTo("final text");

            JsonNode now = one(p.bob(), p.chat(), id);
            assertThat(now.get("body").asString()).isEqualTo("final text");
            assertThat(now.has("editedAt")).isTrue();
            assertThat(now.get("deleted").asBoolean()).isFalse();
            List<JsonNode> history = api.history(p.bob(), p.chat(), null, 100);
            assertThat(history).extracting(m -> m.get("kind").asString()).containsExactly("text", "edit", "edit");
            assertThat(history.get(0).get("body").asString()).isEqualTo("final text");
            assertThat(history.get(1).get("body").asString()).isEqualTo("second draft");
        }
    }

    @Test
    void onlyTheSenderMayEditAndOnlyATextMessageOfTheSameChat() {
        Api.Pair p = api.pair("ent-edit-no");
        String other = api.createChat(p.alice(), "ent-edit-no-bob");
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob()).autoAck()) {
            a.sendMessage("m1", p.chat(), "mine");
            String id = accepted(a, "m1").get("messageId").asString();
            b.send(Map.of("type", "edit", "correlationId", "x1", "chatId", p.chat(), "messageId", id, "body", "yours now"));
            refused(b, "x1", "forbidden");
            a.send(Map.of("type", "edit", "correlationId", "x2", "chatId", other, "messageId", id, "body", "elsewhere"));
            refused(a, "x2", "not_found");
            a.send(Map.of("type", "edit", "correlationId", "x3", "chatId", p.chat(), "messageId", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                    "body", "nothing"));
            refused(a, "x3", "not_found");
            a.send(Map.of("type", "edit", "correlationId", "x4", "chatId", p.chat(), "messageId", id, "body", "x".repeat(4001)));
            refused(a, "x4", "too_large");
            a.send(Map.of("type", "edit", "correlationId", "x5", "chatId", p.chat(), "messageId", id, "body", ""));
            refused(a, "x5", "invalid");
            a.send(Map.of("type", "react", "correlationId", "r1", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", true));
            String reaction = accepted(a, "r1").get("messageId").asString();
            a.send(Map.of("type", "edit", "correlationId", "x6", "chatId", p.chat(), "messageId", reaction, "body", "a reaction?"));
            refused(a, "x6", "invalid");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM message_history WHERE chat_id = ?", Long.class, p.chat()))
                .as("only the message and the reaction are stored").isEqualTo(2);
        assertThat(one(p.alice(), p.chat(), jdbc.queryForObject(
                "SELECT message_id FROM message_history WHERE chat_id = ? AND seq = 1", String.class, p.chat()))
                .get("body").asString()).isEqualTo("mine");
    }

    @Test
    void aDeleteErasesTheTextOfTheMessageAndOfEveryEditFromEveryTable() {
        Api.Pair p = api.pair("ent-del");
        String secret = "the launch code is 0451";
        String edited = "the launch code is 8086";
        String id;
        JsonNode deleted;
        // bob does not ack: the entries wait for him in the outbox, copies of the text included
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob())) {
            a.sendMessage("m1", p.chat(), secret);
            id = accepted(a, "m1").get("messageId").asString();
            a.send(Map.of("type", "edit", "correlationId", "e1", "chatId", p.chat(), "messageId", id, "body", edited));
            accepted(a, "e1");
            a.send(Map.of("type", "react", "correlationId", "r1", "chatId", p.chat(), "messageId", id, "emoji", "🎉", "on", true));
            accepted(a, "r1");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox WHERE body LIKE '%launch code%'", Long.class))
                    .as("the copies waiting for bob").isEqualTo(2);

            a.send(Map.of("type", "delete", "correlationId", "d1", "chatId", p.chat(), "messageId", id));
            deleted = accepted(a, "d1");
            a.send(Map.of("type", "delete", "correlationId", "d2", "chatId", p.chat(), "messageId", id));
            JsonNode again = accepted(a, "d2");
            assertThat(again.get("messageId").asString()).as("a second delete answers the first").isEqualTo(
                    deleted.get("messageId").asString());
            assertThat(again.get("seq").asLong()).isEqualTo(deleted.get("seq").asLong());

            JsonNode del = message(b, deleted.get("messageId").asString());
            assertThat(del.get("kind").asString()).isEqualTo("delete");
            assertThat(del.get("targetId").asString()).isEqualTo(id);
            List<JsonNode> got = b.received().stream().filter(f -> "message".equals(f.path("type").asString())).toList();
            assertThat(got).extracting(f -> f.get("kind").asString()).containsExactly("text", "edit", "reaction", "delete");
        }

        for (String table : List.of("message_history", "outbox", "hook_deliveries")) {
            assertThat(jdbc.queryForObject("SELECT count(*) FROM " + table + " t WHERE t::text LIKE '%launch code%'", Long.class))
                    .as("no trace of the text in " + table).isZero();
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM message_reactions WHERE chat_id = ?", Long.class, p.chat())).isZero();
        JsonNode now = one(p.bob(), p.chat(), id);
        assertThat(now.get("deleted").asBoolean()).isTrue();
        assertThat(now.get("body").asString()).isEmpty();
        assertThat(now.has("attachments")).isFalse();
        assertThat(now.get("reactions").size()).isZero();

        List<JsonNode> history = api.history(p.bob(), p.chat(), null, 100);
        assertThat(history).extracting(m -> m.get("kind").asString()).containsExactly("text", "edit", "reaction", "delete");
        assertThat(history).allSatisfy(m -> assertThat(m.toString()).doesNotContain("launch code"));
    }

    @Test
    void onlyTheSenderMayDeleteAndADeletedMessageTakesNoEditOrReaction() {
        Api.Pair p = api.pair("ent-del-no");
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob()).autoAck()) {
            a.sendMessage("m1", p.chat(), "keep me");
            String id = accepted(a, "m1").get("messageId").asString();
            b.send(Map.of("type", "delete", "correlationId", "x1", "chatId", p.chat(), "messageId", id));
            refused(b, "x1", "forbidden");
            a.send(Map.of("type", "delete", "correlationId", "d1", "chatId", p.chat(), "messageId", id));
            accepted(a, "d1");
            a.send(Map.of("type", "edit", "correlationId", "x2", "chatId", p.chat(), "messageId", id, "body", "back"));
            refused(a, "x2", "not_found");
            b.send(Map.of("type", "react", "correlationId", "x3", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", true));
            refused(b, "x3", "not_found");
        }
    }

    @Test
    void reactionsAreCountedPerEmojiWithTheReadersOwnAndAChangeOfNothingMakesNoEntry() {
        Api.Pair p = api.pair("ent-react");
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob()).autoAck()) {
            a.sendMessage("m1", p.chat(), "react to me");
            String id = accepted(a, "m1").get("messageId").asString();
            a.send(Map.of("type", "react", "correlationId", "r1", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", true));
            JsonNode r1 = accepted(a, "r1");
            b.send(Map.of("type", "react", "correlationId", "r2", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", true));
            accepted(b, "r2");
            b.send(Map.of("type", "react", "correlationId", "r3", "chatId", p.chat(), "messageId", id, "emoji", "👨‍👩‍👧", "on", true));
            accepted(b, "r3");
            a.send(Map.of("type", "react", "correlationId", "r4", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", true));
            JsonNode same = accepted(a, "r4");
            assertThat(same.get("unchanged").asBoolean()).isTrue();
            assertThat(same.get("messageId").asString()).isEqualTo(id);
            b.send(Map.of("type", "react", "correlationId", "r5", "chatId", p.chat(), "messageId", id, "emoji", "👍", "on", false));
            JsonNode off = accepted(b, "r5");
            assertThat(off.has("unchanged")).isFalse();

            JsonNode live = message(a, off.get("messageId").asString());
            assertThat(live.get("kind").asString()).isEqualTo("reaction");
            assertThat(live.get("emoji").asString()).isEqualTo("👍");
            assertThat(live.get("on").asBoolean()).isFalse();
            assertThat(live.get("targetId").asString()).isEqualTo(id);
            assertThat(r1.get("seq").asLong()).isEqualTo(2);

            JsonNode forBob = one(p.bob(), p.chat(), id);
            assertThat(forBob.get("reactions").get("👍").asLong()).isEqualTo(1);
            assertThat(forBob.get("reactions").get("👨‍👩‍👧").asLong()).isEqualTo(1);
            assertThat(forBob.get("myReactions")).extracting(JsonNode::asString).containsExactly("👨‍👩‍👧");
            JsonNode forAlice = one(p.alice(), p.chat(), id);
            assertThat(forAlice.get("myReactions")).extracting(JsonNode::asString).containsExactly("👍");
            assertThat(api.history(p.alice(), p.chat(), null, 100)).hasSize(5);
        }
    }

    @Test
    void aBadEmojiOrOneTooManyIsInvalid() {
        Api.Pair p = api.pair("ent-emoji");
        try (WsClient a = WsClient.connect(port, p.alice())) {
            a.sendMessage("m1", p.chat(), "x");
            String id = accepted(a, "m1").get("messageId").asString();
            for (String bad : List.of("", "a\u0001", "x".repeat(33))) {
                a.send(Map.of("type", "react", "correlationId", "bad" + bad.length(), "chatId", p.chat(), "messageId", id,
                        "emoji", bad, "on", true));
                refused(a, "bad" + bad.length(), "invalid");
            }
            for (int i = 0; i < 20; i++) {
                a.send(Map.of("type", "react", "correlationId", "ok" + i, "chatId", p.chat(), "messageId", id, "emoji", "e" + i));
                accepted(a, "ok" + i);
            }
            a.send(Map.of("type", "react", "correlationId", "over", "chatId", p.chat(), "messageId", id, "emoji", "e20", "on", true));
            refused(a, "over", "invalid");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM message_reactions WHERE chat_id = ?", Long.class, p.chat())).isEqualTo(20);
    }

    @Test
    void aReplyNamesAMessageOfTheSameChatAndAnEmptyBodyNeedsAttachments() {
        Api.Pair p = api.pair("ent-reply");
        String other = api.createChat(p.alice(), "ent-reply-bob");
        try (WsClient a = WsClient.connect(port, p.alice()); WsClient b = WsClient.connect(port, p.bob()).autoAck()) {
            a.sendMessage("m1", p.chat(), "question?");
            String q = accepted(a, "m1").get("messageId").asString();
            b.send(Map.of("type", "send", "correlationId", "a1", "chatId", p.chat(), "body", "answer", "replyTo", q));
            String answer = accepted(b, "a1").get("messageId").asString();
            assertThat(message(a, answer).get("replyTo").asString()).isEqualTo(q);
            assertThat(one(p.alice(), p.chat(), answer).get("replyTo").asString()).isEqualTo(q);

            b.send(Map.of("type", "send", "correlationId", "a2", "chatId", other, "body", "lost", "replyTo", q));
            refused(b, "a2", "not_found");
            b.send(Map.of("type", "send", "correlationId", "a3", "chatId", p.chat(), "body", ""));
            refused(b, "a3", "invalid");
            b.send(Map.of("type", "send", "correlationId", "a4", "chatId", p.chat(), "body", "files", "attachments",
                    List.of("01ARZ3NDEKTSV4RRFFQ69G5FAV")));
            refused(b, "a4", "not_found");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM message_history WHERE chat_id = ?", Long.class, p.chat())).isEqualTo(2);
    }

    @Test
    void theRestFormsMakeTheSameEntriesAndAnIdempotencyKeyMakesARetrySafe() {
        Api.Pair p = api.pair("ent-rest");
        String id;
        try (WsClient a = WsClient.connect(port, p.alice())) {
            a.sendMessage("m1", p.chat(), "over rest");
            id = accepted(a, "m1").get("messageId").asString();
        }
        String path = "/api/chats/" + p.chat() + "/messages/" + id;
        Api.Response edit = api.call("PATCH", path, p.alice(), "{\"body\":\"edited over rest\"}", "Idempotency-Key", "k-edit");
        assertThat(edit.status()).as(edit.text()).isEqualTo(200);
        Api.Response retry = api.call("PATCH", path, p.alice(), "{\"body\":\"edited over rest\"}", "Idempotency-Key", "k-edit");
        assertThat(retry.body().get("messageId").asString()).isEqualTo(edit.body().get("messageId").asString());
        assertThat(retry.body().get("seq").asLong()).isEqualTo(edit.body().get("seq").asLong());

        assertThat(api.call("PATCH", path, p.bob(), "{\"body\":\"not yours\"}").status()).isEqualTo(403);
        assertThat(api.call("PATCH", path, p.alice(), "{}").status()).isEqualTo(400);
        assertThat(api.call("DELETE", path, p.bob(), null).status()).isEqualTo(403);

        String emoji = java.net.URLEncoder.encode("🚀", java.nio.charset.StandardCharsets.UTF_8);
        Api.Response on = api.call("PUT", path + "/reactions/" + emoji, p.bob(), null);
        assertThat(on.status()).as(on.text()).isEqualTo(200);
        Api.Response again = api.call("PUT", path + "/reactions/" + emoji, p.bob(), null);
        assertThat(again.body().get("unchanged").asBoolean()).isTrue();
        assertThat(one(p.bob(), p.chat(), id).get("myReactions")).extracting(JsonNode::asString).containsExactly("🚀");
        Api.Response reused = api.call("DELETE", path + "/reactions/" + emoji, p.bob(), null, "Idempotency-Key",
                on.headers().firstValue("Idempotency-Key").orElseThrow());
        assertThat(reused.status()).as("a key that put the reaction on cannot take it back: " + reused.text()).isEqualTo(400);
        Api.Response off = api.call("DELETE", path + "/reactions/" + emoji, p.bob(), null);
        assertThat(off.status()).isEqualTo(200);
        assertThat(off.body().get("seq").asLong()).isGreaterThan(on.body().get("seq").asLong());

        Api.Response del = api.call("DELETE", path, p.alice(), null, "Idempotency-Key", "k-del");
        assertThat(del.status()).as(del.text()).isEqualTo(200);
        assertThat(api.call("DELETE", path, p.alice(), null).body().get("seq").asLong()).isEqualTo(del.body().get("seq").asLong());
        assertThat(one(p.alice(), p.chat(), id).get("deleted").asBoolean()).isTrue();

        Map<String, Integer> statuses = new HashMap<>();
        statuses.put("unknown", api.get("/api/chats/" + p.chat() + "/messages/01ARZ3NDEKTSV4RRFFQ69G5FAV", p.alice()).status());
        statuses.put("stranger", api.get(path, api.token("ent-rest-eve")).status());
        statuses.put("edit-stranger", api.call("PATCH", path, api.token("ent-rest-eve"), "{\"body\":\"x\"}").status());
        assertThat(statuses).containsEntry("unknown", 404).containsEntry("stranger", 404).containsEntry("edit-stranger", 404);
    }
}
