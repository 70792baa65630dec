package dev.waterline.reaper;

import java.time.Duration;
import java.util.Map;

import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.watermark.WatermarkKeys;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The three reapers with small limits so that each trips within seconds. */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.reapers.idle-timeout=2s",
        "waterline.reapers.max-pending=3",
        "waterline.reapers.max-delivery-attempts=2",
        "waterline.reapers.interval=100ms",
        "waterline.delivery.lease=500ms",
        "waterline.delivery.poll-interval=50ms",
        "waterline.embedded.database=reapers",
        "spring.data.redis.database=8"})
class ReapersIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    @Autowired
    StringRedisTemplate redis;

    @Autowired
    SessionRegistry sessions;

    @Autowired
    Withdrawals withdrawals;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void aClientThatSendsNothingForTheIdleTimeoutIsClosedWith4000AndLeavesTheIndex() {
        double before = withdrawn("idle");
        try (WsClient quiet = WsClient.connect(port, api.token("reap-idle"))) {
            quiet.next("welcome");
            assertThat(quiet.awaitClose(Duration.ofSeconds(10))).isEqualTo(4000);
        }
        assertThat(withdrawn("idle")).isEqualTo(before + 1);
        assertThat(redis.hasKey(WatermarkKeys.sessionKey("reap-idle"))).isFalse();
    }

    @Test
    void aClientHoldingMoreThanMaxPendingIsWithdrawnWith4008ThenRecoversEverythingFromHistory() {
        String alice = api.token("reap-over-alice");
        String bobToken = api.token("reap-over-bob");
        String chat = api.createChat(alice, "reap-over-bob");
        double before = withdrawn("overload");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, bobToken)) {
            a.next("welcome");
            b.next("welcome");
            for (int i = 0; i < 5; i++) {
                a.sendMessage("over-" + i, chat, "m" + i);
                assertThat(a.answer("over-" + i).get("type").asString()).isEqualTo("accepted");
            }
            assertThat(awaitCloseWhilePinging(b, a)).isEqualTo(4008);
        }
        assertThat(withdrawn("overload")).isEqualTo(before + 1);
        assertThat(redis.opsForZSet().score(WatermarkKeys.PINS, "reap-over-bob")).isNull();
        assertThat(redis.opsForHash().get(WatermarkKeys.COUNTS, "reap-over-bob")).isNull();
        try (WsClient again = WsClient.connect(port, bobToken)) {
            again.next("welcome");
            assertThat(api.history(bobToken, chat, null, 100)).extracting(m -> m.get("correlationId").asString())
                    .containsExactly("over-0", "over-1", "over-2", "over-3", "over-4");
        }
    }

    @Test
    void aDeliveryResentMoreThanMaxDeliveryAttemptsWithdrawsItsRecipientWith4008() {
        String alice = api.token("reap-att-alice");
        String chat = api.createChat(alice, "reap-att-bob");
        double before = withdrawn("attempts");
        try (WsClient a = WsClient.connect(port, alice); WsClient b = WsClient.connect(port, api.token("reap-att-bob"))) {
            a.next("welcome");
            b.next("welcome");
            a.sendMessage("att-1", chat, "never acked");
            String messageId = a.answer("att-1").get("messageId").asString();
            assertThat(awaitCloseWhilePinging(b, a)).isEqualTo(4008);
            long copies = b.received().stream().filter(f -> messageId.equals(f.path("messageId").asString())).count();
            assertThat(copies).as("the first delivery and two re-sends").isEqualTo(3);
        }
        assertThat(withdrawn("attempts")).isEqualTo(before + 1);
    }

    @Test
    void aVerdictAboutAConnectionThatWasSupersededIsANoOp() {
        String token = api.token("reap-stale");
        try (WsClient first = WsClient.connect(port, token)) {
            first.next("welcome");
            ClientSession judged = await().atMost(Duration.ofSeconds(5)).until(() -> sessions.get("reap-stale"), java.util.Objects::nonNull);
            try (WsClient second = WsClient.connect(port, token)) {
                String current = second.next("welcome").get("sessionId").asString();
                assertThat(first.awaitClose(Duration.ofSeconds(5))).isEqualTo(4009);
                double before = withdrawn("overload");

                assertThat(withdrawals.withdraw(judged, "overload", 4008, "stale verdict")).isFalse();

                assertThat(withdrawn("overload")).isEqualTo(before);
                assertThat(redis.opsForValue().get(WatermarkKeys.sessionKey("reap-stale"))).isEqualTo(current);
                second.send(Map.of("type", "ping"));
                second.next("pong");
                assertThat(second.isClosed()).isFalse();
            }
        }
    }

    /** Waits for the server to close {@code c}, keeping both clients clear of the idle reaper. */
    private static int awaitCloseWhilePinging(WsClient c, WsClient other) {
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(300)).until(() -> {
            if (!c.isClosed()) {
                c.send(Map.of("type", "ping"));
            }
            other.send(Map.of("type", "ping"));
            return c.isClosed();
        });
        return c.awaitClose(Duration.ofSeconds(1));
    }

    private double withdrawn(String reaper) {
        return meters.get("waterline.reaper.withdrawals").tag("reaper", reaper).counter().count();
    }
}
