package dev.waterline.gateway;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** One user connecting twice at the same instant, many times over. */
@WaterlineIntegrationTest
class SessionEpochRaceIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    StringRedisTemplate redis;

    @Test
    void twoConnectionsOfOneUserRacingLeaveTheSurvivorAsTheEpochAndReceivingDeliveries() {
        Api api = new Api(port);
        String alice = api.token("race-alice");
        String bob = api.token("race-bob");
        String chat = api.createChat(alice, "race-bob");
        try (WsClient sender = WsClient.connect(port, alice)) {
            sender.next("welcome");
            for (int round = 0; round < 20; round++) {
                CompletableFuture<WsClient> f1 = CompletableFuture.supplyAsync(() -> WsClient.connect(port, bob));
                CompletableFuture<WsClient> f2 = CompletableFuture.supplyAsync(() -> WsClient.connect(port, bob));
                try (WsClient c1 = f1.join(); WsClient c2 = f2.join()) {
                    await().atMost(Duration.ofSeconds(10)).until(() -> c1.isClosed() || c2.isClosed());
                    WsClient survivor = c1.isClosed() ? c2 : c1;
                    String survivorSession = survivor.next("welcome").get("sessionId").asString();
                    assertThat(redis.opsForValue().get(WatermarkKeys.sessionKey("race-bob"))).as("round " + round).isEqualTo(survivorSession);

                    String corr = "race-" + round;
                    sender.sendMessage(corr, chat, corr);
                    assertThat(sender.answer(corr).get("type").asString()).isEqualTo("accepted");
                    JsonNode m = survivor.next(f -> corr.equals(f.path("correlationId").asString()), Duration.ofSeconds(10));
                    survivor.ack(m.get("deliveryId").asLong());
                }
            }
        }
    }
}
