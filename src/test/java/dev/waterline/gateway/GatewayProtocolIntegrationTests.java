package dev.waterline.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

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
 * PROTOCOL.md §3 as a client sees it: every bad frame is answered {@code invalid} and leaves the
 * connection usable, size limits, {@code not_found}, idempotent retries, one session per user,
 * the send rate, read receipts and ping. Every test uses its own users and chats, because all
 * tests share one database.
 */
@WaterlineIntegrationTest
class GatewayProtocolIntegrationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int MAX_FRAME_BYTES = 64 * 1024;

    @LocalServerPort
    int port;

    Api api;

    @Autowired
    JdbcTemplate jdbc;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void welcomeIsTheFirstFrameAndCarriesUserSessionAndLimits() {
        String token = api.token("welcome-alice");
        try (WsClient first = WsClient.connect(port, token)) {
            JsonNode welcome = first.next("welcome");
            assertThat(first.received().getFirst()).isSameAs(welcome);
            assertThat(welcome.get("userId").asString()).isEqualTo("welcome-alice");
            assertThat(welcome.get("sessionId").isString()).isTrue();
            assertThat(welcome.get("sessionId").asString()).isNotBlank();
            JsonNode limits = welcome.get("limits");
            assertThat(limits.isObject()).isTrue();
            assertThat(limits.get("maxFrameBytes").asLong()).isEqualTo(MAX_FRAME_BYTES);
            assertThat(limits.get("maxBodyChars").asInt()).isEqualTo(4000);
            assertThat(limits.get("maxInflightSends").asInt()).isEqualTo(256);
            assertThat(limits.get("maxSendsPerSecond").asInt()).isEqualTo(200);

            try (WsClient second = WsClient.connect(port, api.token("welcome-bob"))) {
                JsonNode other = second.next("welcome");
                assertThat(second.received().getFirst()).isSameAs(other);
                assertThat(other.get("userId").asString()).isEqualTo("welcome-bob");
                assertThat(other.get("sessionId").asString()).isNotEqualTo(welcome.get("sessionId").asString());
            }
        }
    }

    @Test
    void pingIsAnsweredWithPong() {
        try (WsClient ws = WsClient.connect(port, api.token("ping-alice"))) {
            ws.next("welcome");
            ws.send(Map.of("type", "ping"));
            ws.send(Map.of("type", "ping"));
            ws.next("pong");
            ws.next("pong");
            assertThat(ws.received()).extracting(f -> f.get("type").asString()).containsExactly("welcome", "pong", "pong");
        }
    }

    @Test
    void malformedJsonIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("malformed", chat -> "{\"type\":\"send\",", noCorrelationId());
    }

    @Test
    void anObjectFollowedByMoreTextIsMalformedAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("trailing", chat -> "{\"type\":\"ping\"}{\"type\":\"ping\"}", noCorrelationId());
    }

    @Test
    void anEmptyTextFrameIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("empty-frame", chat -> "", noCorrelationId());
    }

    @Test
    void aJsonArrayFrameIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("array", chat -> "[{\"type\":\"ping\"}]", noCorrelationId());
    }

    @Test
    void aJsonScalarFrameIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("scalar", chat -> "\"ping\"", noCorrelationId());
    }

    @Test
    void aFrameWithoutTypeIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("no-type",
                chat -> json(Map.of("correlationId", "no-type-c", "chatId", chat, "body", "hi")), noCorrelationId());
    }

    @Test
    void aFrameWithANonStringTypeIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("numeric-type", chat -> "{\"type\":7}", noCorrelationId());
    }

    @Test
    void anUnknownTypeIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("unknown-type", chat -> json(Map.of("type", "shout", "chatId", chat)), noCorrelationId());
    }

    @Test
    void aSendWithANumericChatIdIsInvalidAndAnswersItsCorrelationId() {
        assertInvalidAndStillUsable("numeric-chat",
                chat -> json(Map.of("type", "send", "correlationId", "numeric-chat-c", "chatId", 42, "body", "hi")),
                correlationId("numeric-chat-c"));
    }

    @Test
    void aSendWithANumericBodyIsInvalidAndWritesNothing() {
        assertInvalidAndStillUsable("numeric-body",
                chat -> json(Map.of("type", "send", "correlationId", "numeric-body-c", "chatId", chat, "body", 42)),
                correlationId("numeric-body-c"));
    }

    @Test
    void aSendWithoutCorrelationIdIsInvalidAndWritesNothing() {
        assertInvalidAndStillUsable("no-corr",
                chat -> json(Map.of("type", "send", "chatId", chat, "body", "hi")), noCorrelationId());
    }

    @Test
    void aSendWithANumericCorrelationIdIsInvalidAndWritesNothing() {
        assertInvalidAndStillUsable("numeric-corr",
                chat -> json(Map.of("type", "send", "correlationId", 17, "chatId", chat, "body", "hi")), noCorrelationId());
    }

    @Test
    void aSendWithAnEmptyCorrelationIdIsInvalidAndWritesNothing() {
        assertInvalidAndStillUsable("empty-corr",
                chat -> json(Map.of("type", "send", "correlationId", "", "chatId", chat, "body", "hi")), correlationId(""));
    }

    @Test
    void aSendWithACorrelationIdLongerThan64CharsIsInvalidAndWritesNothing() {
        String tooLong = "long-corr-" + "x".repeat(55);
        assertThat(tooLong).hasSize(65);
        // The echo must identify the send; the server may shorten an over-long id, so only its first 64 chars are pinned.
        assertInvalidAndStillUsable("long-corr",
                chat -> json(Map.of("type", "send", "correlationId", tooLong, "chatId", chat, "body", "hi")),
                error -> assertThat(error.path("correlationId").asString()).startsWith(tooLong.substring(0, 64)));
    }

    @Test
    void aSendWithACorrelationIdOfExactly64CharsIsAccepted() {
        String token = api.token("corr64-alice");
        String chat = api.createChat(token, "corr64-bob");
        String corr = "corr64-" + "y".repeat(57);
        assertThat(corr).hasSize(64);
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            ws.sendMessage(corr, chat, "exactly at the limit");
            assertThat(ws.answer(corr).get("type").asString()).isEqualTo("accepted");
        }
        assertThat(correlationIds(api.history(token, chat, null, 100))).containsExactly(corr);
    }

    @Test
    void anAckWhoseIdsIsNotAnArrayIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("ack-scalar", chat -> "{\"type\":\"ack\",\"ids\":12}", noCorrelationId());
    }

    @Test
    void anAckWithoutIdsIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("ack-missing", chat -> "{\"type\":\"ack\"}", noCorrelationId());
    }

    @Test
    void anAckWithStringIdsIsInvalidAndTheConnectionStaysUsable() {
        assertInvalidAndStillUsable("ack-strings", chat -> "{\"type\":\"ack\",\"ids\":[1,\"2\"]}", noCorrelationId());
    }

    @Test
    void aReadWithAStringSeqIsInvalidAndStoresNoReceipt() {
        String token = api.token("read-string-alice");
        String chat = api.createChat(token, "read-string-bob");
        assertInvalidAndStillUsable(token, chat, "read-string",
                json(Map.of("type", "read", "chatId", chat, "seq", "1")), noCorrelationId());
        assertThat(readSeq(token, chat)).doesNotContainKey("read-string-alice");
    }

    @Test
    void aBinaryFrameIsInvalidAndTheConnectionStaysUsable() {
        String token = api.token("binary-alice");
        String chat = api.createChat(token, "binary-bob");
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            ws.sendBinary("{\"type\":\"ping\"}".getBytes(StandardCharsets.UTF_8));
            JsonNode error = ws.next("error");
            assertThat(error.get("code").asString()).isEqualTo("invalid");
            assertThat(error.has("correlationId")).isFalse();
            assertStillUsable(ws, token, chat, "binary");
        }
    }

    @Test
    void aFrameOfExactly64KiBIsStillProcessed() {
        try (WsClient ws = WsClient.connect(port, api.token("frame-64k-alice"))) {
            ws.next("welcome");
            ws.sendRaw(paddedPing(MAX_FRAME_BYTES));
            ws.next("pong");
            assertThat(ws.isClosed()).isFalse();
        }
    }

    @Test
    void aFrameOneByteOver64KiBClosesWith1009AndLosesNothingAcceptedBefore() {
        String token = api.token("frame-big-alice");
        String chat = api.createChat(token, "frame-big-bob");
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            ws.sendMessage("frame-big-1", chat, "one");
            ws.sendMessage("frame-big-2", chat, "two");
            assertThat(ws.answer("frame-big-1").get("type").asString()).isEqualTo("accepted");
            assertThat(ws.answer("frame-big-2").get("type").asString()).isEqualTo("accepted");

            sendExpectingClose(ws, paddedPing(MAX_FRAME_BYTES + 1));
            assertThat(ws.awaitClose(WAIT)).isEqualTo(1009);
        }
        // One connection's sends to one chat commit in the order they were sent.
        assertThat(correlationIds(api.history(token, chat, null, 100))).containsExactly("frame-big-1", "frame-big-2");
        try (WsClient again = WsClient.connect(port, token)) {
            again.next("welcome");
            again.sendMessage("frame-big-3", chat, "three");
            JsonNode accepted = again.answer("frame-big-3");
            assertThat(accepted.get("type").asString()).isEqualTo("accepted");
            assertThat(accepted.get("seq").asLong()).isEqualTo(3);
        }
        assertThat(correlationIds(api.history(token, chat, null, 100)))
                .containsExactly("frame-big-1", "frame-big-2", "frame-big-3");
    }

    @Test
    void aFrameOver64KiBInUtf8BytesThoughUnderItInCharsClosesWith1009() {
        String token = api.token("frame-utf8-alice");
        String chat = api.createChat(token, "frame-utf8-bob");
        String frame = json(Map.of("type", "send", "correlationId", "frame-utf8-c", "chatId", chat,
                "body", "€".repeat(22_000)));
        assertThat(frame.length()).isLessThan(MAX_FRAME_BYTES);
        assertThat(frame.getBytes(StandardCharsets.UTF_8).length).isGreaterThan(MAX_FRAME_BYTES);
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            sendExpectingClose(ws, frame);
            assertThat(ws.awaitClose(WAIT)).isEqualTo(1009);
            assertThat(ws.received()).noneMatch(f -> "frame-utf8-c".equals(f.path("correlationId").asString()));
        }
        assertThat(api.history(token, chat, null, 100)).isEmpty();
    }

    @Test
    void aFrameLargerThanTheReceiveBufferArrivesWholeAndIsDeliveredIntact() {
        String alice = api.token("parts-alice");
        String bob = api.token("parts-bob");
        String chat = api.createChat(alice, "parts-bob");
        String body = "€ä".repeat(2000);   // 4000 chars, 10,000 UTF-8 bytes: several receive buffers
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            a.next("welcome");
            b.next("welcome");
            a.sendMessage("parts-c", chat, body);
            assertThat(a.answer("parts-c").get("type").asString()).isEqualTo("accepted");
            JsonNode message = b.next("message");
            assertThat(message.get("body").asString()).isEqualTo(body);
            a.sendMessage("parts-after", chat, "small");
            assertThat(a.answer("parts-after").get("seq").asLong()).isEqualTo(2);
        }
        assertThat(api.history(alice, chat, null, 10).getFirst().get("body").asString()).isEqualTo(body);
    }

    @Test
    void theTailOfAFrameRefusedAsTooLargeIsNeverReadAsASendOfItsOwn() {
        String token = api.token("tail-alice");
        String chat = api.createChat(token, "tail-bob");
        // Valid JSON as a whole frame's last part, behind more padding than a frame may hold.
        String frame = " ".repeat(MAX_FRAME_BYTES + 4000)
                + json(Map.of("type", "send", "correlationId", "tail-c", "chatId", chat, "body", "smuggled"));
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            sendExpectingClose(ws, frame);
            assertThat(ws.awaitClose(WAIT)).isEqualTo(1009);
            assertThat(ws.received()).noneMatch(f -> "tail-c".equals(f.path("correlationId").asString()));
        }
        assertThat(api.history(token, chat, null, 100)).isEmpty();
    }

    @Test
    void aBinaryFrameOver64KiBClosesWith1009() {
        try (WsClient ws = WsClient.connect(port, api.token("binary-big-alice"))) {
            ws.next("welcome");
            try {
                ws.sendBinary(new byte[MAX_FRAME_BYTES + 1]);
            }
            catch (CompletionException closedWhileSending) {
                // the server may close before the client has written the whole frame
            }
            assertThat(ws.awaitClose(WAIT)).isEqualTo(1009);
        }
    }

    @Test
    void aBodyLongerThan4000CharsIsTooLargeAndTheConnectionStaysOpen() {
        String token = api.token("too-large-alice");
        String chat = api.createChat(token, "too-large-bob");
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            ws.sendMessage("too-large-c", chat, "b".repeat(4001));
            JsonNode error = ws.answer("too-large-c");
            assertThat(error.get("type").asString()).isEqualTo("error");
            assertThat(error.get("code").asString()).isEqualTo("too_large");

            ws.sendMessage("too-large-limit", chat, "b".repeat(4000));
            JsonNode accepted = ws.answer("too-large-limit");
            assertThat(accepted.get("type").asString()).isEqualTo("accepted");
            assertThat(accepted.get("seq").asLong()).isEqualTo(1);
            ws.send(Map.of("type", "ping"));
            ws.next("pong");
            assertThat(ws.isClosed()).isFalse();
        }
        assertThat(correlationIds(api.history(token, chat, null, 100))).containsExactly("too-large-limit");
    }

    @Test
    void aSendToAnUnknownChatAndToAChatOfOthersAreTheSameNotFound() {
        String alice = api.token("not-found-alice");
        String carol = api.token("not-found-carol");
        String othersChat = api.createChat(carol, "not-found-dave");
        try (WsClient ws = WsClient.connect(port, alice)) {
            ws.next("welcome");
            ws.sendMessage("not-found-unknown", "not-found-no-such-chat", "hello?");
            ws.sendMessage("not-found-foreign", othersChat, "hello?");
            JsonNode unknown = ws.answer("not-found-unknown");
            JsonNode foreign = ws.answer("not-found-foreign");
            assertThat(unknown.get("type").asString()).isEqualTo("error");
            assertThat(unknown.get("code").asString()).isEqualTo("not_found");
            assertThat(foreign.get("type").asString()).isEqualTo("error");
            assertThat(foreign.get("code").asString()).isEqualTo("not_found");
            assertThat(foreign.get("message").asString()).isEqualTo(unknown.get("message").asString());
            assertThat(foreign.propertyNames()).containsExactlyInAnyOrderElementsOf(unknown.propertyNames());
        }
        assertThat(api.history(carol, othersChat, null, 100)).isEmpty();
        assertThat(api.get("/api/chats/" + othersChat, carol).body().get("lastSeq").asLong()).isZero();
    }

    @Test
    void aRetriedCorrelationIdIsAnsweredWithTheOriginalMessageAndCreatesNothing() {
        String alice = api.token("retry-alice");
        String bob = api.token("retry-bob");
        String chat = api.createChat(alice, "retry-bob");
        try (WsClient ws = WsClient.connect(port, alice)) {
            ws.next("welcome");
            ws.sendMessage("retry-c", chat, "first");
            JsonNode original = ws.answer("retry-c");
            ws.sendMessage("retry-c", chat, "second attempt");
            JsonNode retried = ws.answer("retry-c");
            assertThat(original.get("type").asString()).isEqualTo("accepted");
            assertThat(retried.get("type").asString()).isEqualTo("accepted");
            assertThat(retried.get("messageId").asString()).isEqualTo(original.get("messageId").asString());
            assertThat(retried.get("seq").asLong()).isEqualTo(original.get("seq").asLong()).isEqualTo(1);
            assertThat(retried.get("chatId").asString()).isEqualTo(chat);
            assertThat(retried.get("sentAt").asString()).isEqualTo(original.get("sentAt").asString());

            ws.sendMessage("retry-next", chat, "next");
            assertThat(ws.answer("retry-next").get("seq").asLong()).isEqualTo(2);
        }
        List<JsonNode> history = api.history(alice, chat, null, 100);
        assertThat(correlationIds(history)).containsExactly("retry-c", "retry-next");
        assertThat(history.getFirst().get("body").asString()).isEqualTo("first");
        assertThat(correlationIds(api.history(bob, chat, null, 100))).containsExactly("retry-c", "retry-next");
    }

    @Test
    void aCorrelationIdReusedAfterTheIdempotencyWindowCreatesANewMessage() {
        String alice = api.token("window-alice");
        String chat = api.createChat(alice, "window-bob");
        try (WsClient ws = WsClient.connect(port, alice)) {
            ws.next("welcome");
            ws.sendMessage("window-c", chat, "first");
            JsonNode original = ws.answer("window-c");
            jdbc.update("UPDATE send_idempotency SET created_at = now() - interval '25 hours' WHERE sender_id = 'window-alice'");
            ws.sendMessage("window-c", chat, "a day later");
            JsonNode later = ws.answer("window-c");
            assertThat(later.get("type").asString()).isEqualTo("accepted");
            assertThat(later.get("messageId").asString()).isNotEqualTo(original.get("messageId").asString());
            assertThat(later.get("seq").asLong()).isEqualTo(2);
            ws.sendMessage("window-c", chat, "retried within the new window");
            assertThat(ws.answer("window-c").get("messageId").asString()).isEqualTo(later.get("messageId").asString());
        }
        assertThat(api.history(alice, chat, null, 100)).extracting(m -> m.get("body").asString())
                .containsExactly("first", "a day later");
    }

    @Test
    void twoBackToBackSendsWithOneCorrelationIdCreateOneMessage() {
        String alice = api.token("twin-alice");
        String bob = api.token("twin-bob");
        String chat = api.createChat(alice, "twin-bob");
        try (WsClient ws = WsClient.connect(port, alice)) {
            ws.next("welcome");
            ws.sendMessage("twin-c", chat, "once");
            ws.sendMessage("twin-c", chat, "once");
            JsonNode first = ws.answer("twin-c");
            JsonNode second = ws.answer("twin-c");
            assertThat(first.get("type").asString()).isEqualTo("accepted");
            assertThat(second.get("type").asString()).isEqualTo("accepted");
            assertThat(second.get("messageId").asString()).isEqualTo(first.get("messageId").asString());
            assertThat(second.get("seq").asLong()).isEqualTo(first.get("seq").asLong()).isEqualTo(1);
            assertThat(second.get("sentAt").asString()).isEqualTo(first.get("sentAt").asString());
        }
        assertThat(correlationIds(api.history(alice, chat, null, 100))).containsExactly("twin-c");
        assertThat(correlationIds(api.history(bob, chat, null, 100))).containsExactly("twin-c");
    }

    @Test
    void aSecondConnectionOfTheSameUserClosesTheFirstWith4009AndTakesOverDelivery() {
        String alice = api.token("superseded-alice");
        String bob = api.token("superseded-bob");
        String chat = api.createChat(alice, "superseded-bob");
        try (WsClient older = WsClient.connect(port, bob)) {
            JsonNode olderWelcome = older.next("welcome");
            try (WsClient newer = WsClient.connect(port, bob); WsClient sender = WsClient.connect(port, alice)) {
                JsonNode newerWelcome = newer.next("welcome");
                assertThat(newerWelcome.get("sessionId").asString()).isNotEqualTo(olderWelcome.get("sessionId").asString());
                assertThat(older.awaitClose(WAIT)).isEqualTo(4009);

                sender.next("welcome");
                sender.sendMessage("superseded-c", chat, "for the newer one");
                assertThat(sender.answer("superseded-c").get("type").asString()).isEqualTo("accepted");
                JsonNode message = newer.next("message");
                assertThat(message.get("correlationId").asString()).isEqualTo("superseded-c");
                assertThat(message.get("body").asString()).isEqualTo("for the newer one");
                newer.ack(message.get("deliveryId").asLong());

                newer.send(Map.of("type", "ping"));
                newer.next("pong");
                assertThat(newer.isClosed()).isFalse();
            }
            assertThat(older.received()).noneMatch(f -> "message".equals(f.path("type").asString()));
        }
    }

    @Test
    void aBurstOverTheSendRateIsRateLimitedAndEverySendIsAnsweredOnce() {
        String token = api.token("burst-alice");
        String chat = api.createChat(token, "burst-bob");
        int sends = 600;
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < sends; i++) {
                ids.add("burst-" + i);
                ws.sendMessage(ids.getLast(), chat, "m" + i);
            }
            Map<String, JsonNode> answers = new LinkedHashMap<>();
            for (String id : ids) {
                answers.put(id, ws.answer(id));
            }
            ws.send(Map.of("type", "ping"));
            ws.next("pong");

            List<String> accepted = idsAnswered(answers, f -> "accepted".equals(f.get("type").asString()));
            List<String> rateLimited = idsAnswered(answers, f -> "rate_limited".equals(f.path("code").asString()));
            assertThat(rateLimited).isNotEmpty();
            assertThat(accepted).isNotEmpty();
            assertThat(accepted.size() + rateLimited.size()).isEqualTo(sends);
            assertEachAnsweredOnce(ws, ids);

            List<JsonNode> history = api.history(token, chat, null, 1000);
            assertThat(correlationIds(history)).containsExactlyInAnyOrderElementsOf(accepted);
            assertThat(history).extracting(m -> m.get("seq").asLong())
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, accepted.size()).boxed().toList());
        }
    }

    @Test
    void aReadReceiptReachesTheOtherMemberAndIsStored() {
        Api.Pair pair = api.pair("receipt");
        String alice = pair.alice(), bob = pair.bob(), chat = pair.chat();
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bob)) {
            sendAccepted(a, chat, "receipt-1", "receipt-2");

            a.send(Map.of("type", "read", "chatId", chat, "seq", 2));
            JsonNode read = b.next("read");
            assertThat(read.get("chatId").asString()).isEqualTo(chat);
            assertThat(read.get("userId").asString()).isEqualTo("receipt-alice");
            assertThat(read.get("seq").asLong()).isEqualTo(2);
            await().atMost(WAIT).untilAsserted(() -> assertThat(readSeq(bob, chat)).containsEntry("receipt-alice", 2L));
            assertThat(a.received()).noneMatch(f -> "read".equals(f.path("type").asString()));
        }
    }

    @Test
    void aLowerReadReceiptNeverMovesTheStoredOneBack() {
        String alice = api.token("receipt-back-alice");
        String bob = api.token("receipt-back-bob");
        String chat = api.createChat(alice, "receipt-back-bob");
        String later = api.createChat(alice, "receipt-back-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            a.next("welcome");
            b.next("welcome");
            sendAccepted(a, chat, "receipt-back-1", "receipt-back-2", "receipt-back-3");
            sendAccepted(a, later, "receipt-back-later");

            a.send(Map.of("type", "read", "chatId", chat, "seq", 3));
            b.next(f -> "read".equals(f.path("type").asString()) && f.get("seq").asLong() == 3, WAIT);
            await().atMost(WAIT).untilAsserted(() -> assertThat(readSeq(alice, chat)).containsEntry("receipt-back-alice", 3L));

            a.send(Map.of("type", "read", "chatId", chat, "seq", 1));
            // Receipts are committed in arrival order, so once this one is pushed the lower one has been handled.
            a.send(Map.of("type", "read", "chatId", later, "seq", 1));
            b.next(f -> "read".equals(f.path("type").asString()) && later.equals(f.get("chatId").asString()), WAIT);

            assertThat(readSeq(bob, chat)).containsEntry("receipt-back-alice", 3L);
            assertThat(b.received()).filteredOn(f -> "read".equals(f.path("type").asString())
                    && chat.equals(f.get("chatId").asString())).allMatch(f -> f.get("seq").asLong() == 3);
        }
    }

    @Test
    void aReadReceiptForAChatTheUserIsNotAMemberOfIsNotFound() {
        String carol = api.token("receipt-outsider-carol");
        String othersChat = api.createChat(carol, "receipt-outsider-dave");
        try (WsClient ws = WsClient.connect(port, api.token("receipt-outsider-alice"))) {
            ws.next("welcome");
            ws.send(Map.of("type", "read", "chatId", othersChat, "seq", 1));
            JsonNode foreign = ws.next("error");
            ws.send(Map.of("type", "read", "chatId", "receipt-outsider-no-such-chat", "seq", 1));
            JsonNode unknown = ws.next("error");
            assertThat(foreign.get("code").asString()).isEqualTo("not_found");
            assertThat(unknown.get("code").asString()).isEqualTo("not_found");
            assertThat(foreign.get("message").asString()).isEqualTo(unknown.get("message").asString());
            ws.send(Map.of("type", "ping"));
            ws.next("pong");
        }
        assertThat(readSeq(carol, othersChat)).doesNotContainKey("receipt-outsider-alice");
    }

    /** The same, for {@code prefix}-alice in a fresh chat; {@code bad} builds the frame from the chat's id. */
    private void assertInvalidAndStillUsable(String prefix, Function<String, String> bad, Consumer<JsonNode> correlation) {
        String token = api.token(prefix + "-alice");
        String chat = api.createChat(token, prefix + "-bob");
        assertInvalidAndStillUsable(token, chat, prefix, bad.apply(chat), correlation);
    }

    /**
     * Sends one bad frame and expects exactly one {@code invalid} error for it, whose
     * correlationId {@code correlation} checks, then a usable connection and a history holding
     * only the valid send that followed.
     */
    private void assertInvalidAndStillUsable(String token, String chat, String prefix, String bad, Consumer<JsonNode> correlation) {
        try (WsClient ws = WsClient.connect(port, token)) {
            ws.next("welcome");
            ws.sendRaw(bad);
            JsonNode error = ws.next("error");
            assertThat(error.get("code").asString()).isEqualTo("invalid");
            assertThat(error.get("message").asString()).isNotBlank();
            correlation.accept(error);
            assertStillUsable(ws, token, chat, prefix);
            assertThat(ws.received()).filteredOn(f -> "error".equals(f.path("type").asString())).hasSize(1);
        }
    }

    private static Consumer<JsonNode> correlationId(String expected) {
        return error -> {
            assertThat(error.has("correlationId")).as("has a correlationId").isTrue();
            assertThat(error.get("correlationId").asString()).isEqualTo(expected);
        };
    }

    private static Consumer<JsonNode> noCorrelationId() {
        return error -> assertThat(error.has("correlationId")).as("has a correlationId").isFalse();
    }

    /** A ping is answered, a valid send is accepted as the chat's first message, and nothing else was written. */
    private void assertStillUsable(WsClient ws, String token, String chat, String prefix) {
        ws.send(Map.of("type", "ping"));
        ws.next("pong");
        String corr = prefix + "-valid";
        ws.sendMessage(corr, chat, "still usable");
        JsonNode accepted = ws.answer(corr);
        assertThat(accepted.get("type").asString()).isEqualTo("accepted");
        assertThat(accepted.get("seq").asLong()).isEqualTo(1);
        assertThat(ws.isClosed()).isFalse();
        assertThat(correlationIds(api.history(token, chat, null, 100))).containsExactly(corr);
    }

    private static void sendAccepted(WsClient ws, String chat, String... correlationIds) {
        for (String id : correlationIds) {
            ws.sendMessage(id, chat, "body of " + id);
        }
        for (String id : correlationIds) {
            assertThat(ws.answer(id).get("type").asString()).isEqualTo("accepted");
        }
    }

    /** The server may close while the frame is still being written; the close code is what the test checks. */
    private static void sendExpectingClose(WsClient ws, String frame) {
        try {
            ws.sendRaw(frame);
        }
        catch (CompletionException e) {
            // the socket was closed under the write
        }
    }

    /** A ping frame padded with an extra field to exactly {@code bytes} UTF-8 bytes. */
    private static String paddedPing(int bytes) {
        String head = "{\"type\":\"ping\",\"pad\":\"";
        String tail = "\"}";
        String frame = head + "p".repeat(bytes - head.length() - tail.length()) + tail;
        assertThat(frame.getBytes(StandardCharsets.UTF_8)).hasSize(bytes);
        return frame;
    }

    private Map<String, Long> readSeq(String token, String chat) {
        Api.Response r = api.get("/api/chats/" + chat, token);
        assertThat(r.status()).isEqualTo(200);
        Map<String, Long> seqs = new LinkedHashMap<>();
        JsonNode node = r.body().path("readSeq");
        for (String user : node.propertyNames()) {
            seqs.put(user, node.get(user).asLong());
        }
        return seqs;
    }

    static void assertEachAnsweredOnce(WsClient ws, List<String> ids) {
        Map<String, Long> answersPerId = ws.received().stream()
                .filter(f -> f.has("correlationId"))
                .filter(f -> "accepted".equals(f.get("type").asString()) || "error".equals(f.get("type").asString()))
                .collect(Collectors.groupingBy(f -> f.get("correlationId").asString(), Collectors.counting()));
        assertThat(answersPerId.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(answersPerId.values()).allMatch(n -> n == 1);
    }

    static List<String> idsAnswered(Map<String, JsonNode> answers, Predicate<JsonNode> match) {
        return answers.entrySet().stream().filter(e -> match.test(e.getValue())).map(Map.Entry::getKey).toList();
    }

    static List<String> correlationIds(List<JsonNode> messages) {
        return messages.stream().map(m -> m.get("correlationId").asString()).toList();
    }

    private static String json(Map<String, ?> frame) {
        return Api.JSON.writeValueAsString(frame);
    }
}
