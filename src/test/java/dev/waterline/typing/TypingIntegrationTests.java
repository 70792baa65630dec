package dev.waterline.typing;

import java.time.Duration;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Typing indicators on one node (PROTOCOL.md §10; across two: ClusterIntegrationTests): pushed to
 * the chat's other connected members and nobody else, never stored, a burst coalesced into one
 * push per interval, a malformed one {@code invalid}, one for a chat the sender is not in
 * {@code not_found}, and the connection serves on after each.
 */
@WaterlineIntegrationTest
class TypingIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    MeterRegistry meters;

    double dropped(String reason) {
        return meters.get("waterline.typing.dropped").tag("reason", reason).counter().count();
    }

    double pushed() {
        return meters.get("waterline.typing.pushed").counter().count();
    }

    @Test
    void aMembersTypingReachesTheOtherMembersOnlyAndIsNeverStored() {
        Api api = new Api(port);
        String alice = api.token("typ-alice");
        String chat = api.createChat(alice, "typ-bob", "typ-carol");
        try (WsClient a = WsClient.connectWelcomed(port, alice);
             WsClient b = WsClient.connectWelcomed(port, api.token("typ-bob"));
             WsClient c = WsClient.connectWelcomed(port, api.token("typ-carol"));
             WsClient d = WsClient.connectWelcomed(port, api.token("typ-dave"))) {
            a.send(Map.of("type", "typing", "chatId", chat));
            for (WsClient member : new WsClient[] {b, c}) {
                JsonNode typing = member.next("typing");
                assertThat(typing.get("chatId").asString()).isEqualTo(chat);
                assertThat(typing.get("userId").asString()).isEqualTo("typ-alice");
            }
            // a message sent after the indicator reaches everyone: the indicator was pushed by then
            a.sendMessage("typ-1", chat, "hello");
            assertThat(a.answer("typ-1").get("seq").asLong()).as("the indicator took no seq").isEqualTo(1);
            b.next("message");
            c.next("message");
            d.send(Map.of("type", "ping"));
            d.next("pong");
            assertThat(d.received()).as("dave shares no chat with alice").noneMatch(f -> "typing".equals(f.path("type").asString()));
            assertThat(a.received()).as("the typist is not told").noneMatch(f -> "typing".equals(f.path("type").asString()));
            assertThat(jdbc.queryForObject("SELECT count(*) FROM message_history WHERE chat_id = ?", Long.class, chat)).isEqualTo(1);
            assertThat(api.history(alice, chat, null, 10)).hasSize(1);
        }
    }

    @Test
    void aBurstIsCoalescedIntoOnePushPerInterval() {
        Api api = new Api(port);
        Api.Pair pair = api.pair("typ-burst");
        try (WsClient a = WsClient.connectWelcomed(port, pair.alice());
             WsClient b = WsClient.connectWelcomed(port, pair.bob())) {
            double coalesced = dropped("coalesced");
            double pushed = pushed();
            long first = System.nanoTime();   // before the burst: the interval runs from its first frame's admission
            for (int i = 0; i < 5; i++) {
                a.send(Map.of("type", "typing", "chatId", pair.chat()));
            }
            a.send(Map.of("type", "ping"));
            a.next("pong");   // the connection's frames are handled in order: all five are admitted or dropped by now
            assertThat(dropped("coalesced") - coalesced).as("four of the burst coalesced into its first").isEqualTo(4);
            b.next("typing");
            await().atMost(Duration.ofSeconds(5)).until(() -> pushed() - pushed >= 1);
            assertThat(pushed() - pushed).as("one push for the burst").isEqualTo(1);
            // a second's typing later goes out again
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
                a.send(Map.of("type", "typing", "chatId", pair.chat()));
                return b.received().stream().filter(f -> "typing".equals(f.path("type").asString())).count() == 2;
            });
            assertThat(System.nanoTime() - first).as("not before the interval").isGreaterThanOrEqualTo(Duration.ofMillis(900).toNanos());
        }
    }

    @Test
    void aMalformedTypingIsInvalidAndAStrangersIsNotFoundAndTheConnectionServesOn() {
        Api api = new Api(port);
        Api.Pair pair = api.pair("typ-bad");
        try (WsClient mallory = WsClient.connectWelcomed(port, api.token("typ-bad-mallory"));
             WsClient b = WsClient.connectWelcomed(port, pair.bob())) {
            mallory.send(Map.of("type", "typing"));
            assertThat(mallory.next("error").get("code").asString()).isEqualTo("invalid");
            mallory.send(Map.of("type", "typing", "chatId", 42));
            assertThat(mallory.next("error").get("code").asString()).isEqualTo("invalid");
            mallory.send(Map.of("type", "typing", "chatId", pair.chat()));
            assertThat(mallory.next("error").get("code").asString()).isEqualTo("not_found");
            mallory.send(Map.of("type", "typing", "chatId", pair.chat()));
            assertThat(mallory.next("error").get("code").asString()).as("a second within the interval is answered too")
                    .isEqualTo("not_found");
            mallory.send(Map.of("type", "ping"));
            mallory.next("pong");
            b.send(Map.of("type", "ping"));
            b.next("pong");
            assertThat(b.received()).as("a stranger's typing reaches nobody").noneMatch(f -> "typing".equals(f.path("type").asString()));
        }
    }
}
