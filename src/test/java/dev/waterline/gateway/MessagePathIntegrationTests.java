package dev.waterline.gateway;

import java.time.Duration;

import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

@WaterlineIntegrationTest
class MessagePathIntegrationTests {

    @LocalServerPort
    int port;

    @org.springframework.beans.factory.annotation.Autowired
    org.springframework.data.redis.core.StringRedisTemplate redis;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void aSentMessageIsAcceptedThenDeliveredToTheConnectedRecipient() {
        String alice = api.token("mp-alice");
        String bob = api.token("mp-bob");
        String chat = api.createChat(alice, "mp-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            JsonNode welcome = a.next("welcome");
            assertThat(welcome.get("userId").asString()).isEqualTo("mp-alice");
            assertThat(welcome.get("limits").get("maxBodyChars").asInt()).isEqualTo(4000);
            b.next("welcome");

            a.sendMessage("c-1", chat, "hello bob");
            JsonNode accepted = a.answer("c-1");
            assertThat(accepted.get("type").asString()).isEqualTo("accepted");
            assertThat(accepted.get("chatId").asString()).isEqualTo(chat);
            assertThat(accepted.get("seq").asLong()).isEqualTo(1);
            assertThat(accepted.get("messageId").asString()).hasSize(26);
            assertThat(accepted.get("sentAt").asString()).endsWith("Z");

            JsonNode message = b.next("message");
            assertThat(message.get("deliveryId").isIntegralNumber()).isTrue();
            assertThat(message.get("messageId").asString()).isEqualTo(accepted.get("messageId").asString());
            assertThat(message.get("correlationId").asString()).isEqualTo("c-1");
            assertThat(message.get("senderId").asString()).isEqualTo("mp-alice");
            assertThat(message.get("body").asString()).isEqualTo("hello bob");
            assertThat(message.get("seq").asLong()).isEqualTo(1);
            assertThat(message.get("sentAt").asString()).isEqualTo(accepted.get("sentAt").asString());
            b.ack(message.get("deliveryId").asLong());

            assertThat(api.history(bob, chat, null, 100)).extracting(m -> m.get("body").asString()).containsExactly("hello bob");
            a.send(java.util.Map.of("type", "ping"));
            a.next(f -> "pong".equals(f.path("type").asString()), Duration.ofSeconds(5));
        }
    }

    @Test
    void aConnectionWhoseEpochRedisLostIsReassertedAndKeepsReceivingLive() {
        String alice = api.token("mp-lost-alice");
        String bob = api.token("mp-lost-bob");
        String chat = api.createChat(alice, "mp-lost-bob");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            a.next("welcome");
            String session = b.next("welcome").get("sessionId").asString();
            redis.delete(WatermarkKeys.sessionKey("mp-lost-bob"));

            a.sendMessage("lost-1", chat, "still live");
            String messageId = a.answer("lost-1").get("messageId").asString();
            JsonNode m = b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(10));
            assertThat(redis.opsForValue().get(WatermarkKeys.sessionKey("mp-lost-bob"))).isEqualTo(session);
            assertThat(redis.opsForZSet().score(WatermarkKeys.pendingKey("mp-lost-bob"), Long.toString(m.get("deliveryId").asLong()))).isNotNull();
        }
    }
}
