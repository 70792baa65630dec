package dev.waterline.hardening;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.waterline.auth.Tokens;
import dev.waterline.support.Api;
import dev.waterline.support.WaterlineIntegrationTest;
import dev.waterline.support.WsClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limits one client meets, with small values so that a test can reach them: the REST rate
 * (429 with Retry-After), the membership quota, read receipts counted against the send rate, the
 * per-address connection cap (while another address still gets in), the header timeout for a
 * connection that never sends a request, and 4001 when a session's token expires.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.api.requests-per-second=5",
        "waterline.api.burst=5",
        "waterline.chats.max-chats-per-user=3",
        "waterline.gateway.max-connections-per-address=20",
        "waterline.gateway.max-sends-per-second=5",
        "waterline.auth.clock-skew=0s",
        "waterline.embedded.database=limits",
        "spring.data.redis.database=12"})
class HardeningLimitsIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    Tokens tokens;

    @Value("${waterline.auth.jwt-secret}")
    String secret;

    Api api;

    @BeforeEach
    void setUp() {
        api = new Api(port);
    }

    /** Tokens minted here, not at the dev-token endpoint, whose per-address rate this context keeps low. */
    String token(String user) {
        return tokens.issue(user, Duration.ofHours(1));
    }

    @Test
    void restCallsOverTheUsersRateAre429WithRetryAfterAndOtherUsersAreServed() throws Exception {
        String alice = token("rate-alice");
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest list = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/chats"))
                .header("Authorization", "Bearer " + alice).build();
        List<HttpResponse<String>> answers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            answers.add(http.send(list, HttpResponse.BodyHandlers.ofString()));
        }
        List<HttpResponse<String>> limited = answers.stream().filter(r -> r.statusCode() == 429).toList();
        assertThat(limited).as("over a burst of 5").isNotEmpty();
        HttpResponse<String> first = limited.getFirst();
        assertThat(first.headers().firstValueAsLong("Retry-After")).isPresent();
        assertThat(first.headers().firstValueAsLong("Retry-After").getAsLong()).isBetween(1L, 60L);
        JsonNode body = Api.JSON.readTree(first.body());
        assertThat(body.get("error").asString()).isEqualTo("rate_limited");
        assertThat(api.get("/api/chats", token("rate-bob")).status()).as("another user").isEqualTo(200);
    }

    @Test
    void aUserAtTheMembershipQuotaCanNeitherCreateNorBeAddedToAChat() {
        String alice = token("quota-alice");
        for (int i = 0; i < 3; i++) {
            assertThat(api.post("/api/chats", alice, Map.of("members", List.of("quota-x" + i))).status()).isEqualTo(201);
        }
        Api.Response fourth = api.post("/api/chats", alice, Map.of("members", List.of("quota-y")));
        assertThat(fourth.status()).isEqualTo(429);
        assertThat(fourth.body().get("error").asString()).isEqualTo("rate_limited");

        String bob = token("quota-bob");
        Api.Response withAlice = api.post("/api/chats", bob, Map.of("members", List.of("quota-alice", "quota-z")));
        assertThat(withAlice.status()).as("a member at the quota").isEqualTo(429);
        String bobs = api.createChat(bob, "quota-w");
        Api.Response added = api.post("/api/chats/" + bobs + "/members", bob, Map.of("userId", "quota-alice"));
        assertThat(added.status()).isEqualTo(429);

        JsonNode bobChats = api.get("/api/chats", bob).body().get("chats");
        assertThat(bobChats).as("the refused chat was not created").hasSize(1);
        assertThat(bobChats.get(0).get("members")).extracting(JsonNode::asString).containsExactly("quota-bob", "quota-w");
    }

    @Test
    void readReceiptsAreCountedAgainstTheSendRate() {
        String alice = token("rr-alice");
        String chat = api.createChat(alice, "rr-bob");
        try (WsClient ws = WsClient.connectWelcomed(port, alice)) {
            for (int i = 0; i < 12; i++) {
                ws.send(Map.of("type", "read", "chatId", chat, "seq", 0));
            }
            ws.send(Map.of("type", "ping"));
            ws.next("pong");
            assertThat(ws.received()).filteredOn(f -> "error".equals(f.path("type").asString()))
                    .extracting(f -> f.get("code").asString()).as("over 5 a second").contains("rate_limited");
        }
    }

    @Test
    void oneAddressCannotHoldMoreThanItsShareOfConnectionsAndOthersStillGetIn() throws Exception {
        List<Socket> opened = new ArrayList<>();
        try {
            // Opened at once, well within the 10 s header timeout; each then read for 1 s, all at
            // once: one refused is closed by the server as it is accepted, one admitted stays open.
            for (int i = 0; i < 30; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                s.setSoTimeout(1000);
                opened.add(s);
            }
            List<java.util.concurrent.Future<Boolean>> closed = new ArrayList<>();
            try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                for (Socket s : opened) {
                    closed.add(pool.submit(() -> closedByServer(s)));
                }
            }
            long refused = 0;
            for (var f : closed) {
                refused += f.get() ? 1 : 0;
            }
            assertThat(opened.size() - refused).as("connections the address holds").isLessThanOrEqualTo(20);
            assertThat(refused).as("30 opened against a cap of 20").isGreaterThanOrEqualTo(10);

            HttpClient other = HttpClient.newBuilder().localAddress(InetAddress.getByName("127.0.0.2")).build();
            HttpResponse<String> health = other.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).as("another address still gets in").isEqualTo(200);
        }
        finally {
            for (Socket s : opened) {
                s.close();
            }
        }
        assertThat(api.get("/actuator/health", null).status()).as("closed connections free the address's share").isEqualTo(200);
    }

    /** The default header timeout (10 s; Tomcat's own is 60 s), not one set for this test. */
    @Test
    void aConnectionThatSendsNoRequestIsClosedByTheHeaderTimeout() throws Exception {
        try (Socket idle = new Socket()) {
            idle.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            idle.setSoTimeout(40_000);
            long start = System.nanoTime();
            int read;
            try {
                read = idle.getInputStream().read();
            }
            catch (SocketException reset) {
                read = -1;
            }
            assertThat(read).as("closed by the server, not by the 40 s read timeout").isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        }
    }

    @Test
    void aSessionIsClosedWith4001WhenItsTokenExpires() {
        String shortLived = tokens.issue("expiring-alice", Duration.ofSeconds(3));
        try (WsClient ws = WsClient.connectWelcomed(port, shortLived)) {
            assertThat(ws.awaitClose(Duration.ofSeconds(15))).isEqualTo(4001);
        }
        assertThat(WsClient.handshakeStatus(port, shortLived, null)).as("the same token no longer opens a session").isEqualTo(401);
    }

    /** Whether the server closed {@code s} at once (EOF or reset within the socket's timeout). */
    private static boolean closedByServer(Socket s) throws Exception {
        try {
            InputStream in = s.getInputStream();
            return in.read() == -1;
        }
        catch (SocketTimeoutException stillOpen) {
            return false;
        }
        catch (SocketException reset) {
            return true;
        }
    }
}
