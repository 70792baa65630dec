package dev.waterline.watermark;

import java.nio.file.Path;
import java.time.Duration;

import dev.waterline.config.EmbeddedServers;
import dev.waterline.support.Api;
import dev.waterline.support.EmbeddedData;
import dev.waterline.support.TcpProxy;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The server reaches Redis through a proxy the test cuts: sending and live delivery go on, GC
 * pauses, nothing is lost, and everything resumes once Redis is back, without a restart.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.reclaim.interval=200ms",
        "waterline.embedded.database=redis_outage",
        "spring.data.redis.database=10"})
class RedisOutageIntegrationTests {

    static TcpProxy proxy;

    @DynamicPropertySource
    static void throughProxy(DynamicPropertyRegistry registry) {
        proxy = new TcpProxy(EmbeddedServers.redisPort(EmbeddedData.DIR, true));
        registry.add("spring.data.redis.host", () -> "127.0.0.1");
        registry.add("spring.data.redis.port", () -> proxy.port());
    }

    @AfterAll
    static void restore() {
        proxy.restore();
    }

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    StringRedisTemplate redis;

    @Test
    void duringARedisOutageSendsAreAcceptedAndDeliveredGcPausesAndAllResumesAfterwards() {
        Api api = new Api(port);
        Api.Pair pair = api.pair("rout");
        String alice = pair.alice(), bobToken = pair.bob(), chat = pair.chat();
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bobToken)) {
            long before = deliver(a, b, chat, "before").get("deliveryId").asLong();
            b.ack(before);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> redis.opsForZSet().score(WatermarkKeys.pendingKey("rout-bob"), Long.toString(before)) == null);

            proxy.cut();
            long[] during = new long[3];
            for (int i = 0; i < during.length; i++) {
                JsonNode m = deliver(a, b, chat, "during-" + i);
                during[i] = m.get("deliveryId").asLong();
                b.ack(during[i]);
            }
            for (long id : during) {
                jdbc.update("UPDATE outbox SET created_at = now() - interval '10 seconds' WHERE id = ?", id);
            }
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> rows(during) == during.length);

            proxy.restore();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
                assertThat(a.isClosed() || b.isClosed()).as("closed: alice " + (a.isClosed() ? a.awaitClose(Duration.ofSeconds(1)) : 0)
                        + ", bob " + (b.isClosed() ? b.awaitClose(Duration.ofSeconds(1)) : 0)).isFalse();
                a.send(java.util.Map.of("type", "ping"));
                // a client that keeps the contract acks everything, re-deliveries of what it acked
                // while Redis was away included
                b.ack(b.received().stream().filter(f -> "message".equals(f.path("type").asString()))
                        .mapToLong(f -> f.get("deliveryId").asLong()).toArray());
                return rows(during) == 0;
            });

            JsonNode after = deliver(a, b, chat, "after");
            long id = after.get("deliveryId").asLong();
            assertThat(redis.opsForZSet().score(WatermarkKeys.pendingKey("rout-bob"), Long.toString(id))).as("recorded again").isNotNull();
            b.ack(id);
            await().atMost(Duration.ofSeconds(5)).until(() -> redis.opsForZSet().score(WatermarkKeys.pendingKey("rout-bob"), Long.toString(id)) == null);
        }
        assertThat(api.history(bobToken, chat, null, 100)).extracting(m -> m.get("correlationId").asString())
                .containsExactly("before", "during-0", "during-1", "during-2", "after");
    }

    private JsonNode deliver(WsClient a, WsClient b, String chat, String corr) {
        a.sendMessage(corr, chat, corr);
        JsonNode answer = a.answer(corr);
        assertThat(answer.get("type").asString()).as(answer.toString()).isEqualTo("accepted");
        String messageId = answer.get("messageId").asString();
        return b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(10));
    }

    private long rows(long[] ids) {
        Long n = jdbc.queryForObject("SELECT count(*) FROM outbox WHERE id = ANY (?)", Long.class, (Object) ids);
        return n == null ? 0 : n;
    }
}
