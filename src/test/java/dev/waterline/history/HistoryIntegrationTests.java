package dev.waterline.history;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/** PROTOCOL.md §4. Messages are sent one at a time, each awaited, so the n-th accepted send has seq n. */
@WaterlineIntegrationTest
class HistoryIntegrationTests {

    private static final String UNKNOWN_CHAT = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

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
    void historyListsEveryFieldOfEveryMessageInAscendingSeq() {
        String alice = api.token("hi-all-alice");
        String bob = api.token("hi-all-bob");
        String chatId = api.createChat(alice, "hi-all-bob");
        List<JsonNode> accepted = new ArrayList<>();
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            accepted.addAll(sendEach(a, chatId, "all-a", 2));
            accepted.addAll(sendEach(b, chatId, "all-b", 1));
        }

        Api.Response r = page(bob, chatId, "");

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body().get("hasMore").isBoolean()).isTrue();
        assertThat(r.body().get("hasMore").asBoolean()).isFalse();
        List<JsonNode> messages = list(r.body().get("messages"));
        assertThat(messages).extracting(m -> m.get("seq").asLong()).containsExactly(1L, 2L, 3L);
        String[] senders = {"hi-all-alice", "hi-all-alice", "hi-all-bob"};
        String[] correlations = {"all-a0", "all-a1", "all-b0"};
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            JsonNode ok = accepted.get(i);
            assertThat(m.get("messageId").asString()).isEqualTo(ok.get("messageId").asString());
            assertThat(m.get("correlationId").asString()).isEqualTo(correlations[i]);
            assertThat(m.get("chatId").asString()).isEqualTo(chatId);
            assertThat(m.get("seq").isIntegralNumber()).isTrue();
            assertThat(m.get("seq").asLong()).isEqualTo(ok.get("seq").asLong());
            assertThat(m.get("senderId").asString()).isEqualTo(senders[i]);
            assertThat(m.get("body").asString()).isEqualTo("body " + correlations[i]);
            assertThat(m.get("sentAt").asString()).endsWith("Z").isEqualTo(ok.get("sentAt").asString());
        }
    }

    @Test
    void sinceAMessageIdAnswersStrictlyTheMessagesAfterIt() {
        String alice = api.token("hi-since-alice");
        String chatId = api.createChat(alice, "hi-since-bob");
        List<JsonNode> accepted = send(alice, chatId, "since", 3);

        Api.Response afterSecond = page(alice, chatId, "?since=" + messageId(accepted.get(1)));
        Api.Response afterLast = page(alice, chatId, "?since=" + messageId(accepted.get(2)));

        assertThat(list(afterSecond.body().get("messages"))).extracting(m -> m.get("messageId").asString())
                .containsExactly(messageId(accepted.get(2)));
        assertThat(afterSecond.body().get("hasMore").asBoolean()).isFalse();
        assertThat(afterLast.status()).isEqualTo(200);
        assertThat(afterLast.body().get("messages").size()).isZero();
        assertThat(afterLast.body().get("hasMore").asBoolean()).isFalse();
    }

    @Test
    void limitPagesWithHasMoreUntilTheEnd() {
        String alice = api.token("hi-page-alice");
        String chatId = api.createChat(alice);
        List<JsonNode> accepted = send(alice, chatId, "page", 4);

        Api.Response first = page(alice, chatId, "?limit=2");
        Api.Response second = page(alice, chatId, "?limit=2&since=" + messageId(accepted.get(1)));

        assertThat(seqs(first)).containsExactly(1L, 2L);
        assertThat(first.body().get("hasMore").asBoolean()).isTrue();
        assertThat(seqs(second)).containsExactly(3L, 4L);
        assertThat(second.body().get("hasMore").asBoolean()).as("a page that ends exactly at the last message").isFalse();
        assertThat(api.history(alice, chatId, null, 1)).extracting(m -> m.get("seq").asLong()).containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void anUnknownSinceAnswersFromTheBeginning() {
        String alice = api.token("hi-unknown-alice");
        String chatId = api.createChat(alice);
        send(alice, chatId, "unknown", 2);

        Api.Response r = page(alice, chatId, "?since=01ARZ3NDEKTSV4RRFFQ69G5FAV");

        assertThat(r.status()).isEqualTo(200);
        assertThat(seqs(r)).containsExactly(1L, 2L);
    }

    @Test
    void aSinceFromAnotherChatAnswersFromTheBeginning() {
        String alice = api.token("hi-other-alice");
        String chatId = api.createChat(alice);
        String otherChat = api.createChat(alice);
        List<JsonNode> here = send(alice, chatId, "here", 2);
        List<JsonNode> there = send(alice, otherChat, "there", 3);

        Api.Response r = page(alice, chatId, "?since=" + messageId(there.get(2)));

        assertThat(r.status()).isEqualTo(200);
        assertThat(list(r.body().get("messages"))).extracting(m -> m.get("messageId").asString())
                .containsExactly(messageId(here.get(0)), messageId(here.get(1)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "1001", "abc", "1.5", ""})
    void aLimitOutsideOneToAThousandIsRefusedAsInvalid(String limit) {
        String alice = api.token("hi-limit-alice");
        String chatId = api.createChat(alice);

        Api.Response r = page(alice, chatId, "?limit=" + limit);

        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        assertThat(r.body().get("message").asString()).isNotBlank();
    }

    @Test
    void theBoundsOfLimitAreAccepted() {
        String alice = api.token("hi-bounds-alice");
        String chatId = api.createChat(alice);
        send(alice, chatId, "bounds", 2);

        Api.Response one = page(alice, chatId, "?limit=1");
        Api.Response thousand = page(alice, chatId, "?limit=1000");

        assertThat(seqs(one)).containsExactly(1L);
        assertThat(one.body().get("hasMore").asBoolean()).isTrue();
        assertThat(seqs(thousand)).containsExactly(1L, 2L);
    }

    @Test
    void theDefaultLimitIsAHundred() {
        String alice = api.token("hi-default-alice");
        String chatId = api.createChat(alice);
        List<JsonNode> accepted = send(alice, chatId, "default", 101);

        Api.Response first = page(alice, chatId, "");
        Api.Response rest = page(alice, chatId, "?since=" + messageId(accepted.get(99)));

        assertThat(seqs(first)).hasSize(100).startsWith(1L).endsWith(100L).isSorted();
        assertThat(first.body().get("hasMore").asBoolean()).isTrue();
        assertThat(seqs(rest)).containsExactly(101L);
        assertThat(rest.body().get("hasMore").asBoolean()).isFalse();
    }

    @Test
    void aMemberOfAChatWithoutMessagesGetsAnEmptyPageNot404() {
        String alice = api.token("hi-empty-alice");
        String chatId = api.createChat(alice);

        Api.Response fromStart = page(alice, chatId, "");
        Api.Response sinceUnknown = page(alice, chatId, "?since=" + UNKNOWN_CHAT);

        for (Api.Response r : List.of(fromStart, sinceUnknown)) {
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body().get("messages").isArray()).isTrue();
            assertThat(r.body().get("messages").size()).isZero();
            assertThat(r.body().get("hasMore").asBoolean()).isFalse();
        }
    }

    @Test
    void aNonMemberAndAnUnknownChatBothGet404() {
        String alice = api.token("hi-hidden-alice");
        String mallory = api.token("hi-hidden-mallory");
        String chatId = api.createChat(alice);
        send(alice, chatId, "hidden", 1);

        Api.Response ofOthers = page(mallory, chatId, "");
        Api.Response unknown = page(mallory, UNKNOWN_CHAT, "");

        assertThat(ofOthers.status()).isEqualTo(404);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(ofOthers.body()).isEqualTo(unknown.body());
        assertThat(ofOthers.body().has("messages")).isFalse();
    }

    /**
     * I5: a messageId is identity, never order. With one id rewritten to sort before every
     * earlier one, paging by {@code since} must still walk seq 1, 2, 3 ... and skip nothing.
     */
    @Test
    void pagingFollowsSeqEvenWhenMessageIdsDoNotSortInSeqOrder() {
        String alice = api.token("hi-i5-alice");
        String chatId = api.createChat(alice, "hi-i5-bob");
        List<JsonNode> accepted = send(alice, chatId, "i5", 5);
        String early = "00000000000000000000000000";
        assertThat(early).isLessThan(messageId(accepted.get(0)));
        int rewritten = jdbc.update("UPDATE message_history SET message_id = ? WHERE chat_id = ? AND seq = ?", early, chatId, 3);
        assertThat(rewritten).isOne();

        Api.Response afterSecond = page(alice, chatId, "?limit=1&since=" + messageId(accepted.get(1)));
        Api.Response afterThird = page(alice, chatId, "?limit=1&since=" + early);

        assertThat(list(afterSecond.body().get("messages"))).extracting(m -> m.get("messageId").asString())
                .as("the message after seq 2 is seq 3, whatever its id").containsExactly(early);
        assertThat(afterSecond.body().get("hasMore").asBoolean()).isTrue();
        assertThat(seqs(afterThird)).as("the id that sorts first still resolves to seq 3").containsExactly(4L);
        List<JsonNode> walked = api.history(alice, chatId, null, 1);
        assertThat(walked).extracting(m -> m.get("seq").asLong()).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(walked).extracting(m -> m.get("messageId").asString()).containsExactly(messageId(accepted.get(0)),
                messageId(accepted.get(1)), early, messageId(accepted.get(3)), messageId(accepted.get(4)));
        assertThat(api.history(alice, chatId, messageId(accepted.get(0)), 2))
                .extracting(m -> m.get("seq").asLong()).containsExactly(2L, 3L, 4L, 5L);
    }

    /** Sends {@code n} messages as {@code token}'s user over a fresh connection; the accepted frames in seq order. */
    private List<JsonNode> send(String token, String chatId, String prefix, int n) {
        try (WsClient ws = WsClient.connect(port, token)) {
            return sendEach(ws, chatId, prefix, n);
        }
    }

    /** One send at a time, each awaited: the answers come back in seq order. */
    private static List<JsonNode> sendEach(WsClient ws, String chatId, String prefix, int n) {
        List<JsonNode> accepted = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String correlationId = prefix + i;
            ws.sendMessage(correlationId, chatId, "body " + correlationId);
            JsonNode answer = ws.answer(correlationId);
            assertThat(answer.get("type").asString()).as("answer to %s: %s", correlationId, answer).isEqualTo("accepted");
            accepted.add(answer);
        }
        return accepted;
    }

    private Api.Response page(String token, String chatId, String query) {
        return api.get("/api/chats/" + chatId + "/messages" + query, token);
    }

    private static String messageId(JsonNode message) {
        return message.get("messageId").asString();
    }

    private static List<Long> seqs(Api.Response r) {
        assertThat(r.status()).as("status of %s", r).isEqualTo(200);
        return list(r.body().get("messages")).stream().map(m -> m.get("seq").asLong()).toList();
    }

    private static List<JsonNode> list(JsonNode array) {
        assertThat(array.isArray()).isTrue();
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
