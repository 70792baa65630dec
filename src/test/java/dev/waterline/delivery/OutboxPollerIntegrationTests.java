package dev.waterline.delivery;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The poller against a fast path that can hold one row at a time, so that most rows are shed to
 * it, and a one-second lease so that re-delivery is quick to observe.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.delivery.fast-queue-size=1",
        "waterline.delivery.concurrency=1",
        "waterline.delivery.lease=1s",
        "waterline.delivery.poll-interval=50ms",
        "waterline.embedded.database=poller",
        "spring.data.redis.database=2"})
class OutboxPollerIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    @Autowired
    JdbcTemplate jdbc;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void thePollerDeliversEveryRowTheFastPathShed() {
        String alice = api.token("poll-shed-alice");
        String bob = api.token("poll-shed-bob");
        String chat = api.createChat(alice, "poll-shed-bob");
        double pollerBefore = pollerDeliveries();
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bob)) {
            a.next("welcome");
            b.next("welcome");
            int n = 60;
            for (int i = 0; i < n; i++) {
                a.sendMessage("shed-" + i, chat, "m" + i);
            }
            Set<String> messageIds = new HashSet<>();
            for (int i = 0; i < n; i++) {
                messageIds.add(a.answer("shed-" + i).get("messageId").asString());
            }
            Set<String> received = new HashSet<>();
            while (!received.containsAll(messageIds)) {
                JsonNode m = b.next(f -> "message".equals(f.path("type").asString()), Duration.ofSeconds(15));
                b.ack(m.get("deliveryId").asLong());
                received.add(m.get("messageId").asString());
            }
            assertThat(received).isEqualTo(messageIds);
        }
        assertThat(meters.get("waterline.fast.shed").counter().count()).isPositive();
        assertThat(pollerDeliveries()).isGreaterThan(pollerBefore);
    }

    @Test
    void anUnackedDeliveryIsDeliveredAgainAfterItsLeaseWithTheSameDeliveryId() {
        Api.Pair pair = api.pair("poll-lease");
        String alice = pair.alice(), bob = pair.bob(), chat = pair.chat();
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bob)) {
            a.sendMessage("lease-1", chat, "ack me, please");
            String messageId = a.answer("lease-1").get("messageId").asString();
            JsonNode first = b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(15));
            JsonNode again = b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(15));
            assertThat(again.get("deliveryId").asLong()).isEqualTo(first.get("deliveryId").asLong());
            b.ack(again.get("deliveryId").asLong());
            long id = again.get("deliveryId").asLong();
            await().atMost(Duration.ofSeconds(10)).until(() -> attempts(id) >= 1);
        }
    }

    @Test
    void anAckedDeliveryIsNeverDeliveredAgainAndItsRowIsRetired() {
        Api.Pair pair = api.pair("poll-acked");
        String alice = pair.alice(), bob = pair.bob(), chat = pair.chat();
        try (WsClient a = WsClient.connectWelcomed(port, alice); WsClient b = WsClient.connectWelcomed(port, bob)) {
            a.sendMessage("acked-1", chat, "acked at once");
            String messageId = a.answer("acked-1").get("messageId").asString();
            JsonNode m = b.next(f -> messageId.equals(f.path("messageId").asString()), Duration.ofSeconds(15));
            long deliveryId = m.get("deliveryId").asLong();
            b.ack(deliveryId);
            await().atMost(Duration.ofSeconds(10)).until(() -> retired(deliveryId));
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() ->
                    b.received().stream().filter(f -> messageId.equals(f.path("messageId").asString())).count() == 1);
        }
    }

    @Test
    void aRowWhoseRecipientIsOfflineIsRetiredAndTheMessageStaysInHistory() {
        String alice = api.token("poll-off-alice");
        String carol = api.token("poll-off-carol");
        String chat = api.createChat(alice, "poll-off-carol");
        try (WsClient a = WsClient.connect(port, alice)) {
            a.next("welcome");
            a.sendMessage("off-1", chat, "while you were away");
            String messageId = a.answer("off-1").get("messageId").asString();
            Long deliveryId = jdbc.queryForObject("SELECT id FROM outbox WHERE message_id = ?", Long.class, messageId);
            await().atMost(Duration.ofSeconds(10)).until(() -> retired(deliveryId));
            List<JsonNode> synced = api.history(carol, chat, null, 100);
            assertThat(synced).extracting(h -> h.get("messageId").asString()).containsExactly(messageId);
        }
    }

    private double pollerDeliveries() {
        return meters.get("waterline.deliveries").tag("path", "poller").counter().count();
    }

    private int attempts(long deliveryId) {
        return jdbc.queryForObject("SELECT attempts FROM outbox WHERE id = ?", Integer.class, deliveryId);
    }

    private boolean retired(long deliveryId) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT due_at = 'infinity' FROM outbox WHERE id = ?", Boolean.class, deliveryId));
    }
}
