package dev.waterline.hardening;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.apache.coyote.AbstractProtocol;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Resources one client's requests can take are bounded: the chat list is paged (and a page of
 * large chats stops early), history pages stop at a byte budget, an unchanged read receipt is
 * neither stored nor pushed to every member again, the connector holds fewer connections than
 * the process has descriptors, and the zero-configuration mode listens on loopback only.
 */
@WaterlineIntegrationTest
class BoundedResourcesIntegrationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @LocalServerPort
    int port;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    WebServerApplicationContext context;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    @Test
    void theChatListComesAPageAtATimeInCreationOrderWithACursor() {
        String alice = api.token("pages-alice");
        List<String> created = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            created.add(api.createChat(alice, "pages-bob-" + i));
        }
        List<String> seen = new ArrayList<>();
        String after = null;
        List<Integer> sizes = new ArrayList<>();
        do {
            Api.Response r = api.get("/api/chats?limit=3" + (after == null ? "" : "&after=" + after), alice);
            assertThat(r.status()).isEqualTo(200);
            JsonNode chats = r.body().get("chats");
            sizes.add(chats.size());
            chats.forEach(c -> seen.add(c.get("chatId").asString()));
            after = r.body().get("next").isNull() ? null : r.body().get("next").asString();
        } while (after != null);
        assertThat(seen).containsExactlyElementsOf(created);
        assertThat(sizes).containsExactly(3, 3, 1);
        assertThat(api.get("/api/chats", alice).body().get("chats")).as("default limit 100").hasSize(7);
        assertThat(api.get("/api/chats", alice).body().get("next").isNull()).isTrue();
        for (String bad : List.of("0", "501", "x", "-1")) {
            Api.Response r = api.get("/api/chats?limit=" + bad, alice);
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.body().get("error").asString()).isEqualTo("invalid");
        }
    }

    @Test
    void aPageOfLargeChatsStopsAtTheByteBudgetAndTheCursorCarriesOn() {
        String alice = api.token("bigchats-alice");
        List<String> members = IntStream.range(0, 499).mapToObj(i -> "bigchats-member-" + "m".repeat(90) + "-" + i).toList();
        List<String> created = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            Api.Response r = api.post("/api/chats", alice, Map.of("members", members));
            assertThat(r.status()).isEqualTo(201);
            created.add(r.body().get("chatId").asString());
        }
        Api.Response first = api.get("/api/chats?limit=500", alice);
        int firstPage = first.body().get("chats").size();
        assertThat(firstPage).as("~51 KB of member ids a chat against a 1 MiB budget").isBetween(1, 24);
        assertThat(first.body().get("next").isNull()).isFalse();

        List<String> seen = new ArrayList<>();
        String after = null;
        do {
            Api.Response r = api.get("/api/chats?limit=500" + (after == null ? "" : "&after=" + after), alice);
            r.body().get("chats").forEach(c -> {
                seen.add(c.get("chatId").asString());
                assertThat(c.get("members")).hasSize(500);
            });
            after = r.body().get("next").isNull() ? null : r.body().get("next").asString();
        } while (after != null);
        assertThat(seen).containsExactlyElementsOf(created);
    }

    @Test
    void aHistoryPageStopsAtTheByteBudgetWithHasMoreAndPagingGetsEverythingInOrder() {
        Api.Pair pair = api.pair("bigpage");
        String body = "b".repeat(4000);
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice())) {
            for (int i = 0; i < 300; i++) {
                alice.sendMessage("bp-" + i, pair.chat(), i + body.substring(String.valueOf(i).length()));
                assertThat(alice.answer("bp-" + i).get("seq").asLong()).isEqualTo(i + 1);
            }
        }
        Api.Response page = api.get("/api/chats/" + pair.chat() + "/messages?limit=1000", pair.bob());
        int n = page.body().get("messages").size();
        assertThat(n).as("4 KB bodies against a 1 MiB budget").isBetween(200, 299);
        assertThat(page.body().get("hasMore").asBoolean()).isTrue();
        List<JsonNode> all = api.history(pair.bob(), pair.chat(), null, 1000);
        assertThat(all).extracting(m -> m.get("seq").asLong()).containsExactlyElementsOf(
                IntStream.rangeClosed(1, 300).mapToObj(Long::valueOf).toList());
    }

    @Test
    void anUnchangedReadReceiptIsNeitherStoredNorPushedAgain() {
        Api.Pair pair = api.pair("amplify");
        String other = api.createChat(pair.alice(), "amplify-bob");
        try (WsClient alice = WsClient.connectWelcomed(port, pair.alice());
             WsClient bob = WsClient.connectWelcomed(port, pair.bob()).autoAck()) {
            for (String chat : List.of(pair.chat(), other)) {
                alice.sendMessage("amp-" + chat, chat, "hello");
                alice.answer("amp-" + chat);
            }
            alice.send(Map.of("type", "read", "chatId", pair.chat(), "seq", 1));
            assertThat(bob.next("read").get("seq").asLong()).isEqualTo(1);
            Object stamp = jdbc.queryForObject("SELECT updated_at FROM read_receipts WHERE chat_id = ? AND user_id = ?",
                    Object.class, pair.chat(), "amplify-alice");

            for (int i = 0; i < 30; i++) {
                alice.send(Map.of("type", "read", "chatId", pair.chat(), "seq", i % 2));
            }
            // a raise in the other chat, queued after the repeats: once bob sees it, they were all handled
            alice.send(Map.of("type", "read", "chatId", other, "seq", 1));
            JsonNode next = bob.next("read");
            assertThat(next.get("chatId").asString()).as("the repeats pushed nothing").isEqualTo(other);
            assertThat(bob.received()).filteredOn(f -> "read".equals(f.path("type").asString())).hasSize(2);
            assertThat(alice.received()).filteredOn(f -> "error".equals(f.path("type").asString())).isEmpty();
            assertThat(jdbc.queryForObject("SELECT updated_at FROM read_receipts WHERE chat_id = ? AND user_id = ?",
                    Object.class, pair.chat(), "amplify-alice")).as("nothing written for the repeats").isEqualTo(stamp);
        }
    }

    @Test
    void theConnectorHoldsFewerConnectionsThanTheProcessHasDescriptors() {
        TomcatWebServer server = (TomcatWebServer) context.getWebServer();
        var protocol = (AbstractProtocol<?>) server.getTomcat().getConnector().getProtocolHandler();
        long files = ((com.sun.management.UnixOperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getMaxFileDescriptorCount();
        assertThat((long) protocol.getMaxConnections()).isPositive().isLessThan(files);
        assertThat(protocol.getConnectionTimeout()).as("header timeout").isEqualTo(10_000);
    }

    /**
     * Half the heap at 40 KB a connection (an idle WebSocket measured ~30 KB, a connection still
     * sending its request head ~36 KB): the test JVM's 1 GB heap holds ~13,100, below the 19,000
     * that the open-file limit alone allowed, which filled a 512 MB heap in a probe.
     */
    @Test
    void theConnectorHoldsNoMoreConnectionsThanHalfTheHeapHoldsAtTheirMeasuredSize() {
        TomcatWebServer server = (TomcatWebServer) context.getWebServer();
        var protocol = (AbstractProtocol<?>) server.getTomcat().getConnector().getProtocolHandler();
        long heapBound = Runtime.getRuntime().maxMemory() / 2 / (40 * 1024);
        assertThat((long) protocol.getMaxConnections()).isPositive().isLessThanOrEqualTo(heapBound);
    }

    @Test
    void theZeroConfigurationModeListensOnLoopbackOnly() throws Exception {
        TomcatWebServer server = (TomcatWebServer) context.getWebServer();
        Object address = server.getTomcat().getConnector().getProperty("address");
        assertThat(address).isInstanceOf(InetAddress.class);
        assertThat(((InetAddress) address).isLoopbackAddress()).isTrue();
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (!a.isLoopbackAddress() && a instanceof java.net.Inet4Address) {
                    try (Socket s = new Socket()) {
                        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                                () -> s.connect(new InetSocketAddress(a, port), 2000)))
                                .as("connecting through " + a).isInstanceOf(java.net.ConnectException.class);
                    }
                }
            }
        }
    }

    @Test
    void aRestBodyOverTheLimitIs413WhetherDeclaredOrStreamed() throws Exception {
        String alice = api.token("bigbody-alice");
        String huge = "{\"members\":[\"" + "m".repeat(2 * 1024 * 1024) + "\"]}";
        Api.Response declared = api.postRaw("/api/chats", alice, huge);
        assertThat(declared.status()).isEqualTo(413);
        assertThat(declared.body().get("error").asString()).isEqualTo("too_large");

        java.net.http.HttpResponse<String> streamed = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/api/chats"))
                        .header("Authorization", "Bearer " + alice).header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(
                                () -> new java.io.ByteArrayInputStream(huge.getBytes(java.nio.charset.StandardCharsets.UTF_8))))
                        .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(streamed.statusCode()).as("chunked, no Content-Length").isEqualTo(413);
        assertThat(Api.JSON.readTree(streamed.body()).get("error").asString()).isEqualTo("too_large");
        assertThat(api.get("/api/chats", alice).body().get("chats")).isEmpty();
    }
}
