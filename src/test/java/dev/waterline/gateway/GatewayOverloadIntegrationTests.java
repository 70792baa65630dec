package dev.waterline.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static dev.waterline.gateway.GatewayProtocolIntegrationTests.assertEachAnsweredOnce;
import static dev.waterline.gateway.GatewayProtocolIntegrationTests.correlationIds;
import static dev.waterline.gateway.GatewayProtocolIntegrationTests.idsAnswered;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code overloaded} when the inbound queue is full: a one-slot queue behind one slow-lingering
 * writer, flooded from several connections at once. Each connection stays under its own rate
 * and credits, so every refusal is the queue's.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.inbound.queue-size=1",
        "waterline.inbound.linger=50ms",
        "waterline.inbound.writers=1",
        "waterline.embedded.database=gw_overload",
        "spring.data.redis.database=5" })
class GatewayOverloadIntegrationTests {

    private static final int CONNECTIONS = 4;
    private static final int SENDS_PER_CONNECTION = 150;

    @LocalServerPort
    int port;

    @Test
    void aFloodBeyondTheInboundQueueIsOverloadedAndNothingRefusedIsWritten() {
        Api api = new Api(port);
        List<String> tokens = new ArrayList<>();
        List<String> chats = new ArrayList<>();
        List<WsClient> clients = new ArrayList<>();
        try {
            for (int c = 0; c < CONNECTIONS; c++) {
                // The other member never connects, so nothing is delivered to the flooding sockets.
                String token = api.token("overload-" + c);
                tokens.add(token);
                chats.add(api.createChat(token, "overload-sink-" + c));
                WsClient ws = WsClient.connect(port, token);
                clients.add(ws);
                ws.next("welcome");
            }

            try (ExecutorService flood = Executors.newVirtualThreadPerTaskExecutor()) {
                List<CompletableFuture<Void>> senders = new ArrayList<>();
                for (int c = 0; c < CONNECTIONS; c++) {
                    WsClient ws = clients.get(c);
                    String chat = chats.get(c);
                    String prefix = "overload-" + c + "-";
                    senders.add(CompletableFuture.runAsync(() -> {
                        for (int i = 0; i < SENDS_PER_CONNECTION; i++) {
                            ws.sendMessage(prefix + i, chat, "m" + i);
                        }
                    }, flood));
                }
                CompletableFuture.allOf(senders.toArray(CompletableFuture[]::new)).join();
            }

            List<String> allOverloaded = new ArrayList<>();
            int allAccepted = 0;
            for (int c = 0; c < CONNECTIONS; c++) {
                WsClient ws = clients.get(c);
                List<String> ids = new ArrayList<>();
                Map<String, JsonNode> answers = new LinkedHashMap<>();
                for (int i = 0; i < SENDS_PER_CONNECTION; i++) {
                    ids.add("overload-" + c + "-" + i);
                    answers.put(ids.getLast(), ws.answer(ids.getLast()));
                }
                ws.send(Map.of("type", "ping"));
                ws.next("pong");

                List<String> accepted = idsAnswered(answers, f -> "accepted".equals(f.get("type").asString()));
                List<String> overloaded = idsAnswered(answers, f -> "overloaded".equals(f.path("code").asString()));
                assertThat(accepted.size() + overloaded.size())
                        .as("every answer of connection %d is accepted or overloaded", c).isEqualTo(SENDS_PER_CONNECTION);
                assertEachAnsweredOnce(ws, ids);
                assertThat(correlationIds(api.history(tokens.get(c), chats.get(c), null, 1000)))
                        .containsExactlyInAnyOrderElementsOf(accepted);
                allOverloaded.addAll(overloaded);
                allAccepted += accepted.size();
            }
            assertThat(allOverloaded).isNotEmpty();
            assertThat(allAccepted).isPositive();

            // Overloaded means not accepted: the same correlationId, retried when the queue is calm, makes a new message.
            String retried = allOverloaded.getFirst();
            int c = Integer.parseInt(retried.split("-")[1]);
            WsClient ws = clients.get(c);
            ws.sendMessage(retried, chats.get(c), "retried");
            JsonNode answer = ws.answer(retried);
            assertThat(answer.get("type").asString()).isEqualTo("accepted");
            List<JsonNode> history = api.history(tokens.get(c), chats.get(c), null, 1000);
            assertThat(history.getLast().get("correlationId").asString()).isEqualTo(retried);
            assertThat(history.getLast().get("body").asString()).isEqualTo("retried");
        }
        finally {
            clients.forEach(WsClient::close);
        }
    }
}
