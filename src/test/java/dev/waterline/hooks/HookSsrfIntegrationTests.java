package dev.waterline.hooks;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.waterline.support.Api;
import dev.waterline.support.HookReceiver;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The SSRF guard with no allowed hosts (the production default): loopback, private, link-local
 * (cloud metadata), documentation and other special-purpose addresses, this host's own, and a name
 * that resolves to loopback are refused when a hook is created, and again when it is called (a target whose name resolves elsewhere since). That an
 * allowed host is called is shown by every other hook test ({@code allowed-hosts=localhost}).
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.embedded.database=hooks_ssrf",
        "spring.data.redis.database=34",
        "waterline.hooks.allowed-hosts=",
        "waterline.hooks.poll-interval=100ms",
        "waterline.hooks.maintenance-interval=300ms"})
class HookSsrfIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void targetsOnForbiddenAddressesAreRefusedWhenTheHookIsCreated() {
        Api api = new Api(port);
        Api.Pair p = api.pair("ssrf-create");
        List<Map<String, Object>> refused = List.of(
                Map.of("kind", "http", "url", "http://127.0.0.1:" + port + "/x"),
                Map.of("kind", "http", "url", "http://10.0.0.1/x"),
                Map.of("kind", "http", "url", "http://169.254.169.254/latest/meta-data/"),
                Map.of("kind", "http", "url", "http://[::1]:" + port + "/x"),
                Map.of("kind", "http", "url", "http://localhost:" + port + "/x"),
                Map.of("kind", "http", "url", "http://[::ffff:127.0.0.1]/x"),
                Map.of("kind", "http", "url", "https://192.168.0.10/x"),
                Map.of("kind", "amqp", "uri", "amqp://guest:guest@127.0.0.1:5672/", "exchange", "x", "routingKey", "k"),
                Map.of("kind", "mqtt", "uri", "mqtt://10.1.1.1:1883", "topic", "t"),
                Map.of("kind", "nats", "url", "nats://localhost:4222", "subject", "s"),
                Map.of("kind", "kafka", "bootstrapServers", "8.8.8.8:9092,127.0.0.1:9092", "topic", "t"),
                Map.of("kind", "redis", "uri", "redis://169.254.169.254:6379", "stream", "s"));
        for (Map<String, Object> body : refused) {
            Api.Response r = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), body);
            assertThat(r.status()).as(body + " → " + r.text()).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        }
        assertThat(api.post("/api/chats/" + p.chat() + "/hooks", p.alice(),
                Map.of("kind", "http", "url", "http://169.254.169.254/")).body().get("message").asString()).contains("link-local");
        assertThat(api.post("/api/chats/" + p.chat() + "/hooks", p.alice(),
                Map.of("kind", "http", "url", "http://localhost:" + port + "/")).body().get("message").asString()).contains("loopback");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hooks WHERE chat_id = ?", Long.class, p.chat())).isZero();
    }

    @Test
    void aHookTo192_0_2_2OrToTheIpv6DocumentationPrefixOrAnyOtherSpecialPurposeRangeIsRefusedWhenCreated() {
        Api api = new Api(port);
        Api.Pair p = api.pair("ssrf-special");
        List<Map<String, Object>> refused = List.of(
                Map.of("kind", "http", "url", "http://192.0.2.2:9/x"),
                Map.of("kind", "http", "url", "http://[2001:db8::1]:9/x"),
                Map.of("kind", "http", "url", "http://198.51.100.7/x"),
                Map.of("kind", "http", "url", "http://203.0.113.1/x"),
                Map.of("kind", "http", "url", "http://[3fff::1]/x"),
                Map.of("kind", "http", "url", "http://192.88.99.1/x"),
                Map.of("kind", "http", "url", "http://[2002:808:808::1]/x"),
                Map.of("kind", "redis", "uri", "redis://192.0.2.2:6379", "stream", "s"),
                Map.of("kind", "kafka", "bootstrapServers", "[2001:db8::1]:9092", "topic", "t"));
        for (Map<String, Object> body : refused) {
            Api.Response r = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), body);
            assertThat(r.status()).as(body + " → " + r.text()).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        }
        assertThat(api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", "http://192.0.2.2:9/x"))
                .body().get("message").asString()).contains("TEST-NET-1");
        assertThat(api.post("/api/chats/" + p.chat() + "/hooks", p.alice(), Map.of("kind", "http", "url", "http://[2001:db8::1]:9/x"))
                .body().get("message").asString()).contains("documentation");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hooks WHERE chat_id = ?", Long.class, p.chat())).isZero();
    }

    @Test
    void everyAddressOfThisHostsOwnInterfacesIsRefusedWhenAHookIsCreated() throws Exception {
        Api api = new Api(port);
        Api.Pair p = api.pair("ssrf-own");
        List<String> accepted = new java.util.ArrayList<>();
        for (java.net.NetworkInterface i : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            for (java.net.InetAddress a : java.util.Collections.list(i.getInetAddresses())) {
                String host = AddressGuard.uriHost(java.net.InetAddress.getByAddress(a.getAddress()));
                Api.Response r = api.post("/api/chats/" + p.chat() + "/hooks", p.alice(),
                        Map.of("kind", "http", "url", "http://" + host + ":" + port + "/x"));
                if (r.status() != 400) {
                    accepted.add(i.getName() + " " + host + " → " + r.status());
                }
            }
        }
        assertThat(accepted).as("addresses of this host a hook was allowed to call").isEmpty();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM hooks WHERE chat_id = ?", Long.class, p.chat())).isZero();
    }

    @Test
    void aTargetThatResolvesToAForbiddenAddressAtCallTimeIsNotCalledAndItsDeliveryIsDead() {
        Api api = new Api(port);
        Api.Pair p = api.pair("ssrf-call");
        try (HookReceiver receiver = new HookReceiver(); WsClient alice = WsClient.connectWelcomed(port, p.alice())) {
            // as if the name had resolved to a public address when the hook was created
            String hookId = "01JSSRFCALLTIMEHOOK0000000";
            jdbc.update("INSERT INTO hooks (hook_id, chat_id, created_by, kind, target, events) VALUES (?, ?, ?, 'http', ?::jsonb, ARRAY['message'])",
                    hookId, p.chat(), "ssrf-call-alice", "{\"url\":\"" + receiver.url("/x") + "\"}");
            alice.sendMessage("m", p.chat(), "hello");
            assertThat(alice.answer("m").get("type").asString()).isEqualTo("accepted");

            await().atMost(Duration.ofSeconds(30)).until(() -> api.get("/api/hooks/" + hookId, p.alice()).body().get("dead").asLong() == 1);
            JsonNode dead = api.get("/api/hooks/" + hookId + "/dead", p.alice()).body().get("deliveries").get(0);
            assertThat(dead.get("lastError").asString()).contains("loopback");
            assertThat(receiver.requests()).isEmpty();
        }
    }
}
