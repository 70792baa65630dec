package dev.waterline.chat;

import java.time.Duration;
import java.util.ArrayList;
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
import static org.awaitility.Awaitility.await;

/**
 * PROTOCOL.md §10, the chat list in one call: {@code unread} and {@code lastMessage} on
 * {@code GET /api/chats} and {@code GET /api/chats/{chatId}}, against the real database, with
 * messages, receipts, edits, deletes and reactions made through the server. Every test uses its
 * own user ids: all tests share one database.
 */
@WaterlineIntegrationTest
class ChatListIntegrationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void unreadCountsTheOthersMessagesOnlyAndTheSenderHasNone() {
        Api.Pair p = api.pair("cl-others");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            send(a, p.chat(), "one", "two", "three");
        }

        assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(3);
        assertThat(chat(p.alice(), p.chat()).get("unread").asLong()).isZero();
        assertThat(listed(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(3);
        assertThat(listed(p.alice(), p.chat()).get("unread").asLong()).isZero();
    }

    @Test
    void aReadReceiptLowersTheUnreadCountToWhatFollowsIt() {
        Api.Pair p = api.pair("cl-receipt");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice()); WsClient b = WsClient.connectWelcomed(port, p.bob())) {
            send(a, p.chat(), "one", "two", "three");

            b.send(Map.of("type", "read", "chatId", p.chat(), "seq", 2));
            await().atMost(WAIT).untilAsserted(() -> assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(1));
            b.send(Map.of("type", "read", "chatId", p.chat(), "seq", 3));
            await().atMost(WAIT).untilAsserted(() -> assertThat(listed(p.bob(), p.chat()).get("unread").asLong()).isZero());
        }
    }

    @Test
    void editsReactionsAndDeletesAreNotCountedAndADeletedMessageIsNoLongerUnread() {
        Api.Pair p = api.pair("cl-entries");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            List<String> ids = send(a, p.chat(), "kept", "to go");
            assertThat(edit(p.alice(), p.chat(), ids.get(0), "kept, edited").status()).isEqualTo(200);
            assertThat(react(p.alice(), p.chat(), ids.get(0)).status()).isEqualTo(200);
            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("an edit and a reaction are not unread").isEqualTo(2);

            assertThat(api.delete("/api/chats/" + p.chat() + "/messages/" + ids.get(1), p.alice()).status()).isEqualTo(200);

            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("the deleted message and its delete").isEqualTo(1);
            assertThat(chat(p.bob(), p.chat()).get("lastSeq").asLong()).isEqualTo(5);
        }
    }

    @Test
    void aReactionOfTheOtherIsNotUnreadForTheSender() {
        Api.Pair p = api.pair("cl-react");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            String id = send(a, p.chat(), "react to me").getFirst();
            assertThat(react(p.bob(), p.chat(), id).status()).isEqualTo(200);
        }

        assertThat(chat(p.alice(), p.chat()).get("unread").asLong()).isZero();
        assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("bob reacting is not bob reading").isEqualTo(1);
    }

    @Test
    void ownMessagesAreNeverUnreadAndSendingCountsAsReadingWhatCameBefore() {
        Api.Pair p = api.pair("cl-own");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice()); WsClient b = WsClient.connectWelcomed(port, p.bob())) {
            send(a, p.chat(), "are you there?", "hello?");
            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(2);

            send(b, p.chat(), "yes");
            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("a reply reads what it answers").isZero();
            assertThat(chat(p.bob(), p.chat()).get("readSeq").has("cl-own-bob")).as("but sends no read receipt").isFalse();
            assertThat(chat(p.alice(), p.chat()).get("unread").asLong()).isEqualTo(1);

            send(a, p.chat(), "good");
            send(b, p.chat(), "and you?", "?");
            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isZero();
            assertThat(chat(p.alice(), p.chat()).get("unread").asLong()).isEqualTo(2);
        }
    }

    @Test
    void aReadReceiptBelowTheReadersOwnLastMessageChangesNothing() {
        Api.Pair p = api.pair("cl-below");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice()); WsClient b = WsClient.connectWelcomed(port, p.bob())) {
            send(a, p.chat(), "one");
            send(b, p.chat(), "two");
            send(a, p.chat(), "three");
            b.send(Map.of("type", "read", "chatId", p.chat(), "seq", 1));
            await().atMost(WAIT).untilAsserted(() -> assertThat(chat(p.bob(), p.chat()).get("readSeq").path("cl-below-bob").asLong())
                    .isEqualTo(1));

            assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(1);
        }
    }

    @Test
    void lastMessageFollowsNewMessagesEditsAndDeletesAndIgnoresTheOtherEntries() {
        Api.Pair p = api.pair("cl-last");
        assertThat(chat(p.bob(), p.chat()).get("lastMessage").isNull()).as("a new chat has none").isTrue();
        try (WsClient a = WsClient.connectWelcomed(port, p.alice()); WsClient b = WsClient.connectWelcomed(port, p.bob())) {
            String first = send(a, p.chat(), "first").getFirst();
            JsonNode last = chat(p.bob(), p.chat()).get("lastMessage");
            assertThat(last.get("messageId").asString()).isEqualTo(first);
            assertThat(last.get("seq").asLong()).isEqualTo(1);
            assertThat(last.get("senderId").asString()).isEqualTo("cl-last-alice");
            assertThat(last.get("kind").asString()).isEqualTo("text");
            assertThat(last.get("body").asString()).isEqualTo("first");
            assertThat(last.get("sentAt").asString()).isNotBlank();
            assertThat(last.get("deleted").asBoolean()).isFalse();
            assertThat(last.has("editedAt")).isFalse();

            String long300 = "x".repeat(300);
            String second = send(b, p.chat(), long300).getFirst();
            last = listed(p.alice(), p.chat()).get("lastMessage");
            assertThat(last.get("messageId").asString()).isEqualTo(second);
            assertThat(last.get("senderId").asString()).isEqualTo("cl-last-bob");
            assertThat(last.get("body").asString()).isEqualTo("x".repeat(200));

            assertThat(edit(p.bob(), p.chat(), second, "second, edited").status()).isEqualTo(200);
            assertThat(react(p.alice(), p.chat(), second).status()).isEqualTo(200);
            last = chat(p.alice(), p.chat()).get("lastMessage");
            assertThat(last.get("messageId").asString()).as("an edit or a reaction is no last message").isEqualTo(second);
            assertThat(last.get("body").asString()).isEqualTo("second, edited");
            assertThat(last.get("editedAt").asString()).isNotBlank();

            assertThat(api.delete("/api/chats/" + p.chat() + "/messages/" + second, p.bob()).status()).isEqualTo(200);
            last = chat(p.alice(), p.chat()).get("lastMessage");
            assertThat(last.get("messageId").asString()).isEqualTo(second);
            assertThat(last.get("deleted").asBoolean()).isTrue();
            assertThat(last.get("body").asString()).isEmpty();
            assertThat(last.has("editedAt")).isFalse();

            String third = send(a, p.chat(), "third").getFirst();
            assertThat(chat(p.bob(), p.chat()).get("lastMessage").get("messageId").asString()).isEqualTo(third);
        }
    }

    @Test
    void historyRetentionTookTheReadPositionCountsOnlyWhatIsKept() {
        Api.Pair p = api.pair("cl-retention");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice()); WsClient b = WsClient.connectWelcomed(port, p.bob())) {
            send(a, p.chat(), "1", "2", "3", "4", "5");
            b.send(Map.of("type", "read", "chatId", p.chat(), "seq", 2));
            await().atMost(WAIT).untilAsserted(() -> assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).isEqualTo(3));
        }

        // what retention does (HistoryRetention: the oldest rows go), done to this chat alone
        jdbc.update("DELETE FROM message_history WHERE chat_id = ? AND seq <= 2", p.chat());
        assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("the read position's row is gone").isEqualTo(3);

        jdbc.update("DELETE FROM message_history WHERE chat_id = ? AND seq <= 3", p.chat());
        assertThat(chat(p.bob(), p.chat()).get("unread").asLong()).as("an unread message is gone").isEqualTo(2);
        assertThat(chat(p.alice(), p.chat()).get("unread").asLong()).isZero();

        jdbc.update("DELETE FROM message_history WHERE chat_id = ? AND seq <= 5", p.chat());
        JsonNode gone = chat(p.bob(), p.chat());
        assertThat(gone.get("unread").asLong()).as("nothing is kept past it").isZero();
        assertThat(gone.get("lastMessage").isNull()).as("the last message is gone").isTrue();
    }

    @Test
    void theListPagesAsBeforeWithTheCountsOnEveryPage() {
        String alice = api.token("cl-page-alice");
        String bob = api.token("cl-page-bob");
        List<String> chats = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            chats.add(api.createChat(alice, "cl-page-bob"));
        }
        try (WsClient a = WsClient.connectWelcomed(port, alice)) {
            for (int i = 0; i < chats.size(); i++) {
                for (int m = 0; m <= i; m++) {
                    send(a, chats.get(i), "m" + m);
                }
            }
        }

        List<JsonNode> seen = new ArrayList<>();
        String after = null;
        int pages = 0;
        do {
            Api.Response r = api.get("/api/chats?limit=2" + (after == null ? "" : "&after=" + after), bob);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body().get("chats").size()).isLessThanOrEqualTo(2);
            r.body().get("chats").forEach(seen::add);
            after = r.body().get("next").isNull() ? null : r.body().get("next").asString();
            pages++;
        } while (after != null);

        assertThat(pages).isEqualTo(3);
        assertThat(seen).extracting(c -> c.get("chatId").asString()).containsExactlyElementsOf(chats);
        assertThat(seen).extracting(c -> c.get("unread").asLong()).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(seen).extracting(c -> c.get("lastMessage").get("body").asString()).containsExactly("m0", "m1", "m2", "m3", "m4");
    }

    @Test
    void aChatOfOthersIsStillNotFound() {
        Api.Pair p = api.pair("cl-stranger");
        String mallory = api.token("cl-stranger-mallory");
        try (WsClient a = WsClient.connectWelcomed(port, p.alice())) {
            send(a, p.chat(), "private");
        }

        Api.Response r = api.get("/api/chats/" + p.chat(), mallory);

        assertThat(r.status()).isEqualTo(404);
        assertThat(r.text()).doesNotContain("private");
        assertThat(api.get("/api/chats", mallory).body().get("chats")).isEmpty();
    }

    /** Sends each body in turn, waiting for each to be accepted; returns their message ids. */
    private static List<String> send(WsClient ws, String chat, String... bodies) {
        List<String> ids = new ArrayList<>();
        for (String body : bodies) {
            String corr = "cl-" + java.util.UUID.randomUUID();
            ws.sendMessage(corr, chat, body);
            JsonNode answer = ws.answer(corr);
            assertThat(answer.get("type").asString()).as(answer.toString()).isEqualTo("accepted");
            ids.add(answer.get("messageId").asString());
        }
        return ids;
    }

    private Api.Response edit(String token, String chat, String messageId, String body) {
        return api.call("PATCH", "/api/chats/" + chat + "/messages/" + messageId, token, Api.JSON.writeValueAsString(Map.of("body", body)));
    }

    private Api.Response react(String token, String chat, String messageId) {
        return api.call("PUT", "/api/chats/" + chat + "/messages/" + messageId + "/reactions/%F0%9F%91%8D", token, null);
    }

    private JsonNode chat(String token, String chatId) {
        Api.Response r = api.get("/api/chats/" + chatId, token);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r.body();
    }

    private JsonNode listed(String token, String chatId) {
        Api.Response r = api.get("/api/chats?limit=500", token);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        for (JsonNode c : r.body().get("chats")) {
            if (c.get("chatId").asString().equals(chatId)) {
                return c;
            }
        }
        throw new AssertionError(chatId + " not listed: " + r.text());
    }
}
