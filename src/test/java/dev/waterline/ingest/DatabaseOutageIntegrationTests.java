package dev.waterline.ingest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.waterline.config.EmbeddedServers;
import dev.waterline.support.Api;
import dev.waterline.support.EmbeddedData;
import dev.waterline.support.TcpProxy;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The server reaches PostgreSQL through a proxy the test cuts while sends are in flight: sends
 * are answered {@code unavailable}, nothing is half-written, and the service recovers by itself.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {"waterline.embedded.database=outage", "spring.data.redis.database=4"})
class DatabaseOutageIntegrationTests {

    static final Path DATA = EmbeddedData.DIR;
    static TcpProxy proxy;
    static int pgPort;

    @DynamicPropertySource
    static void throughProxy(DynamicPropertyRegistry registry) {
        pgPort = EmbeddedServers.postgresPort(DATA, true, "outage");
        proxy = new TcpProxy(pgPort);
        registry.add("spring.datasource.url", () -> "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/outage");
        registry.add("spring.datasource.username", () -> "postgres");
        registry.add("spring.datasource.password", () -> "");
    }

    @AfterAll
    static void closeProxy() {
        proxy.restore();
    }

    @LocalServerPort
    int port;

    @Test
    void sendsDuringAnOutageAreAnsweredUnavailableNothingIsHalfWrittenAndTheServiceRecovers() throws Exception {
        Api api = new Api(port);
        String alice = api.token("outage-alice");
        String chat = api.createChat(alice, "outage-bob", "outage-carol");
        Map<String, String> outcome = new LinkedHashMap<>();
        try (WsClient a = WsClient.connect(port, alice)) {
            a.next("welcome");
            a.sendMessage("before", chat, "before the outage");
            assertThat(a.answer("before").get("type").asString()).isEqualTo("accepted");

            List<String> inFlight = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String corr = "during-" + i;
                inFlight.add(corr);
                a.sendMessage(corr, chat, "sent around the cut " + i);
                if (i == 10) {
                    proxy.cut();
                }
            }
            for (String corr : inFlight) {
                JsonNode answer = a.answer(corr);
                outcome.put(corr, answer.get("type").asString().equals("accepted") ? "accepted" : answer.get("code").asString());
            }
            assertThat(outcome.values()).contains("unavailable").isSubsetOf("accepted", "unavailable");

            proxy.restore();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
                String corr = "after-" + System.nanoTime();
                a.sendMessage(corr, chat, "after the outage");
                assertThat(a.answer(corr).get("type").asString()).isEqualTo("accepted");
            });

            // A client retries what was not accepted with the same correlationId; the retry is
            // accepted exactly once even if the lost answer hid a commit.
            for (var e : outcome.entrySet()) {
                if (e.getValue().equals("unavailable")) {
                    a.sendMessage(e.getKey(), chat, "retry");
                    assertThat(a.answer(e.getKey()).get("type").asString()).isEqualTo("accepted");
                }
            }
        }

        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/outage", "postgres", "")) {
            List<Long> seqs = new ArrayList<>();
            try (ResultSet rs = c.createStatement().executeQuery(
                    "SELECT seq FROM message_history WHERE chat_id = '" + chat + "' ORDER BY seq")) {
                while (rs.next()) {
                    seqs.add(rs.getLong(1));
                }
            }
            for (int i = 0; i < seqs.size(); i++) {
                assertThat(seqs.get(i)).as("gap-free seq").isEqualTo(i + 1L);
            }
            try (ResultSet rs = c.createStatement().executeQuery("""
                    SELECT
                      (SELECT count(*) FROM message_history WHERE chat_id = '%1$s'),
                      (SELECT count(*) FROM outbox WHERE chat_id = '%1$s'),
                      (SELECT count(*) FROM outbox o WHERE chat_id = '%1$s' AND NOT EXISTS
                         (SELECT 1 FROM message_history h WHERE h.message_id = o.message_id)),
                      (SELECT count(DISTINCT correlation_id) FROM message_history WHERE chat_id = '%1$s'),
                      (SELECT last_seq FROM chats WHERE chat_id = '%1$s')
                    """.formatted(chat))) {
                rs.next();
                long history = rs.getLong(1);
                assertThat(rs.getLong(2)).as("two recipients per message").isEqualTo(history * 2);
                assertThat(rs.getLong(3)).as("outbox rows without history").isZero();
                assertThat(rs.getLong(4)).as("no correlationId twice").isEqualTo(history);
                assertThat(rs.getLong(5)).as("last_seq matches history").isEqualTo(history);
                assertThat(history).as("before + all 40 during + at least one after").isGreaterThanOrEqualTo(42);
            }
        }
    }
}
