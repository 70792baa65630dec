package dev.waterline.delivery;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.waterline.presence.NodeBus;
import dev.waterline.support.Api;
import dev.waterline.support.Cluster;
import dev.waterline.support.WsClient;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The poller is the authority across nodes too: when the fast path's hand-over to the node that
 * holds the recipient is lost (here every one is: the receiving node drops them), the row it
 * recorded as owed first is claimed when it falls due and delivered by a poller, and acked.
 */
class CrossNodeRedeliveryIntegrationTests {

    @Test
    void aLostHandOverToAnotherNodeIsDeliveredByThePollerWhenTheRowFallsDue() {
        try (Cluster cluster = new Cluster("cluster_drop", 23)) {
            ConfigurableApplicationContext one = cluster.start("node-one");
            ConfigurableApplicationContext two = cluster.start("node-two");
            AtomicInteger lost = new AtomicInteger();
            OutboxPoller pollerTwo = two.getBean(OutboxPoller.class);
            // node two loses every fast-path hand-over; its poller's still arrive
            two.getBean(NodeBus.class).onDeliveries((rows, fromPoller) -> {
                if (fromPoller) {
                    pollerTwo.arrived(rows);
                }
                else {
                    lost.addAndGet(rows.size());
                }
            });
            Api api = new Api(Cluster.port(one));
            Api.Pair pair = api.pair("drop");
            try (WsClient alice = WsClient.connectWelcomed(Cluster.port(one), pair.alice());
                 WsClient bob = WsClient.connectWelcomed(Cluster.port(two), pair.bob())) {
                double pollerBefore = deliveries(one, "poller") + deliveries(two, "poller");
                alice.sendMessage("drop-1", pair.chat(), "the hand-over is lost");
                String messageId = alice.answer("drop-1").get("messageId").asString();

                JsonNode message = bob.next(f -> "message".equals(f.path("type").asString()), Duration.ofSeconds(15));
                assertThat(message.get("messageId").asString()).isEqualTo(messageId);
                assertThat(lost.get()).as("the fast path did hand it over, and it was lost").isEqualTo(1);
                // the counter is raised once the frame is written, which may be just after bob has read it
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(deliveries(one, "poller") + deliveries(two, "poller"))
                        .as("a poller delivered it").isGreaterThan(pollerBefore));
                bob.ack(message.get("deliveryId").asLong());
            }
        }
    }

    static double deliveries(ConfigurableApplicationContext ctx, String path) {
        return ctx.getBean(MeterRegistry.class).get("waterline.deliveries").tag("path", path).counter().count();
    }
}
