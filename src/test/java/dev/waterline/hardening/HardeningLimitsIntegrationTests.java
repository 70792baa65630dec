package dev.waterline.hardening;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

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
 * connection that never sends a request, the total deadline for a request head however slowly it
 * trickles (kept-alive connections and WebSockets unaffected), and 4001 when a session's token
 * expires.
 */
@WaterlineIntegrationTest
@TestPropertySource(properties = {
        "waterline.api.requests-per-second=5",
        "waterline.api.burst=5",
        "waterline.chats.max-chats-per-user=3",
        "waterline.chats.max-chats-added-by-others=1",
        "waterline.gateway.max-connections-per-address=20",
        "waterline.gateway.max-sends-per-second=5",
        "waterline.auth.clock-skew=0s",
        "waterline.gateway.head-deadline=4s",
        "waterline.blobs.slow-transfer-grace=2s",
        "waterline.api.body-rate-window=2s",
        "waterline.blobs.min-transfer-rate=1MB",
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

    /**
     * Others may fill only their share of a user's quota (one chat of three here): a probe's twenty
     * throwaway identities filled a victim's whole quota by adding them, and the victim could then
     * neither create nor join a chat.
     */
    @Test
    void othersCannotSpendAUsersMembershipQuotaForThem() {
        String victim = token("spent-victim");
        String first = api.createChat(token("spent-mallory-1"), "spent-victim");
        Api.Response second = api.post("/api/chats", token("spent-mallory-2"), Map.of("members", List.of("spent-victim")));
        assertThat(second.status()).as("past the share others may fill").isEqualTo(429);
        String mallorys = api.createChat(token("spent-mallory-3"), "spent-someone");
        assertThat(api.post("/api/chats/" + mallorys + "/members", token("spent-mallory-3"), Map.of("userId", "spent-victim")).status())
                .isEqualTo(429);

        assertThat(api.post("/api/chats", victim, Map.of("members", List.of("spent-friend-1"))).status())
                .as("the rest of the quota is the victim's own").isEqualTo(201);
        assertThat(api.post("/api/chats", victim, Map.of("members", List.of("spent-friend-2"))).status()).isEqualTo(201);
        assertThat(api.post("/api/chats", victim, Map.of("members", List.of("spent-friend-3"))).status())
                .as("and the whole quota still holds").isEqualTo(429);
        assertThat(api.get("/api/chats", victim).body().get("chats")).hasSize(3);
        assertThat(api.get("/api/chats/" + first, victim).status()).isEqualTo(200);
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

    /**
     * One header byte a second keeps Tomcat's per-read timeout (10 s) from ever firing: the head
     * deadline (4 s here) closes the connection anyway. This held sockets, and ~36 KB of heap each,
     * for as long as the client liked.
     */
    @Test
    void aClientTricklingItsRequestHeadIsClosedAtTheHeadDeadlineHoweverOftenItSends() throws Exception {
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (Socket slow = new Socket()) {
            slow.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            slow.setSoTimeout(30_000);
            long start = System.nanoTime();
            OutputStream out = slow.getOutputStream();
            out.write("GET /actuator/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            trickle.scheduleAtFixedRate(() -> {
                try {
                    out.write('a');
                    out.flush();
                }
                catch (IOException closed) {
                    throw new UncheckedIOException(closed);   // ends the schedule
                }
            }, 1, 1, TimeUnit.SECONDS);
            int read;
            try {
                read = slow.getInputStream().read();
            }
            catch (SocketException reset) {
                read = -1;
            }
            Duration lived = Duration.ofNanos(System.nanoTime() - start);
            assertThat(read).as("closed by the server, without an answer").isEqualTo(-1);
            assertThat(lived).as("by the 4 s head deadline, not the 10 s per-read timeout (which never fires)")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(3)).isLessThan(Duration.ofSeconds(9));
        }
        finally {
            trickle.shutdownNow();
        }
        assertThat(api.get("/actuator/health", null).status()).isEqualTo(200);
    }

    /** The deadline is per request head: a kept-alive connection serves requests for longer than it. */
    @Test
    void aKeptAliveConnectionMayGoOnMakingRequestsForLongerThanTheHeadDeadline() throws Exception {
        ScheduledExecutorService pace = Executors.newSingleThreadScheduledExecutor();
        try (Socket conn = new Socket()) {
            conn.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            conn.setSoTimeout(10_000);
            OutputStream out = conn.getOutputStream();
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(conn.getInputStream(), StandardCharsets.US_ASCII));
            byte[] request = "GET /actuator/health HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            long start = System.nanoTime();
            List<String> statuses = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                // 2.5 s apart: each head well within the deadline, the four together well past it
                pace.schedule(() -> null, i == 0 ? 0 : 2_500, TimeUnit.MILLISECONDS).get();
                out.write(request);
                out.flush();
                statuses.add(in.readLine());
                skipResponse(in);
            }
            assertThat(statuses).allSatisfy(status -> assertThat(status).startsWith("HTTP/1.1 200"));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofSeconds(7));
        }
        finally {
            pace.shutdownNow();
        }
    }

    /** The deadline is armed again for each head on a kept-alive connection: the second head may not trickle either. */
    @Test
    void theSecondHeadOnAKeptAliveConnectionIsHeldToItsDeadlineToo() throws Exception {
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (Socket conn = new Socket()) {
            conn.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            conn.setSoTimeout(30_000);
            OutputStream out = conn.getOutputStream();
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(conn.getInputStream(), StandardCharsets.US_ASCII));
            out.write("GET /actuator/health HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(in.readLine()).startsWith("HTTP/1.1 200");
            skipResponse(in);
            long start = System.nanoTime();
            out.write("GET /actuator/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            trickle.scheduleAtFixedRate(() -> {
                try {
                    out.write('a');
                    out.flush();
                }
                catch (IOException closed) {
                    throw new UncheckedIOException(closed);
                }
            }, 1, 1, TimeUnit.SECONDS);
            int read;
            try {
                read = conn.getInputStream().read();
            }
            catch (SocketException reset) {
                read = -1;
            }
            assertThat(read).isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(9));
        }
        finally {
            trickle.shutdownNow();
        }
    }

    /**
     * A request body trickled a byte at a time held its connection (and its request's thread) as a
     * trickled head did: slower than the body's pace (16 KB/s over 2 s windows here) is 408, and the
     * connection closes.
     */
    @Test
    void aRequestBodyTrickledSlowerThanItsPaceIs408AndItsConnectionCloses() throws Exception {
        String alice = token("body-trickle-alice");
        ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
        try (Socket conn = new Socket()) {
            conn.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            conn.setSoTimeout(30_000);
            OutputStream out = conn.getOutputStream();
            out.write(("POST /api/chats HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + alice
                    + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"members\":[\"").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            trickle.scheduleAtFixedRate(() -> {
                try {
                    out.write('b');
                    out.flush();
                }
                catch (IOException closed) {
                    throw new UncheckedIOException(closed);
                }
            }, 500, 500, TimeUnit.MILLISECONDS);
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(conn.getInputStream(), StandardCharsets.US_ASCII));
            assertThat(in.readLine()).startsWith("HTTP/1.1 408");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(9));
            String line;
            boolean close = false;
            while ((line = in.readLine()) != null && !line.isEmpty()) {
                close |= line.equalsIgnoreCase("Connection: close");
            }
            assertThat(close).isTrue();
        }
        finally {
            trickle.shutdownNow();
        }
        assertThat(api.get("/api/chats", alice).body().get("chats")).isEmpty();
    }

    @Test
    void aWebSocketIsNotHeldToTheHeadDeadline() throws Exception {
        ScheduledExecutorService pace = Executors.newSingleThreadScheduledExecutor();
        try (WsClient ws = WsClient.connectWelcomed(port, token("deadline-ws"))) {
            pace.schedule(() -> ws.send(Map.of("type", "ping")), 6, TimeUnit.SECONDS).get();
            assertThat(ws.next("pong").get("type").asString()).isEqualTo("pong");
            assertThat(ws.isClosed()).isFalse();
        }
        finally {
            pace.shutdownNow();
        }
    }

    /**
     * A download read more slowly than the minimum pace (1 MB/s here, after 2 s) gives its turn
     * back: the answer stops short of its length and the connection closes, so the client cannot
     * take the rest for the next answer's bytes. Twelve slow downloads of one blob used to hold
     * twelve copies of it in the heap for as long as their clients liked.
     */
    @Test
    void aDownloadReadSlowerThanTheMinimumPaceIsCutOffAndItsConnectionClosed() throws Exception {
        String alice = token("pace-alice");
        String chat = api.createChat(alice, "pace-bob");
        String stream = api.post("/api/chats/" + chat + "/streams", alice, Map.of()).body().get("streamId").asString();
        int size = 24 * 1024 * 1024;
        HttpResponse<String> up = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + port + "/api/streams/" + stream + "/blobs"))
                .header("Authorization", "Bearer " + alice).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[size])).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(up.statusCode()).isEqualTo(201);
        String blob = Api.JSON.readTree(up.body()).get("blobId").asString();

        try (Socket slow = new Socket()) {
            slow.setReceiveBufferSize(4096);
            slow.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            slow.setSoTimeout(30_000);
            slow.getOutputStream().write(("GET /api/blobs/" + blob + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                    + token("pace-bob") + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = slow.getInputStream();
            byte[] buffer = new byte[4096];
            long read = 0;
            long start = System.nanoTime();
            // about 400 KB/s: well under the pace once the socket buffers' first megabytes are spent
            for (int n; (n = in.read(buffer)) > 0; ) {
                read += n;
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
            assertThat(read).as("cut off short of the body").isLessThan(size);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        }
        assertThat(api.get("/actuator/prometheus", null).text()).contains("waterline_blob_transfers_active 0.0")
                .containsPattern("waterline_blob_transfers_aborted_total\\{outcome=\"too_slow\"} [1-9]");
    }

    @Test
    void aSessionIsClosedWith4001WhenItsTokenExpires() {
        String shortLived = tokens.issue("expiring-alice", Duration.ofSeconds(3));
        try (WsClient ws = WsClient.connectWelcomed(port, shortLived)) {
            assertThat(ws.awaitClose(Duration.ofSeconds(15))).isEqualTo(4001);
        }
        assertThat(WsClient.handshakeStatus(port, shortLived, null)).as("the same token no longer opens a session").isEqualTo(401);
    }

    /**
     * An event stream ends when its token does, as a WebSocket session ends with 4001: a probe's
     * stream went on 73 s past its token's exp (and would have for as long as the stream lived).
     */
    @Test
    void aServerSentEventStreamEndsWhenItsTokenExpires() throws Exception {
        String alice = token("sse-alice");
        String chat = api.createChat(alice, "sse-bob");
        String stream = api.post("/api/chats/" + chat + "/streams", alice, Map.of()).body().get("streamId").asString();
        String shortLived = tokens.issue("sse-bob", Duration.ofSeconds(3));
        long start = System.nanoTime();
        HttpResponse<java.util.stream.Stream<String>> events = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + port + "/api/streams/" + stream + "/events?access_token=" + shortLived))
                .timeout(Duration.ofSeconds(40)).build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(events.statusCode()).isEqualTo(200);
        List<String> lines;
        try (java.util.stream.Stream<String> body = events.body()) {
            lines = body.toList();   // to the end of the response
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("ended at the token's exp, the stream still open")
                .isLessThan(Duration.ofSeconds(15));
        assertThat(lines).anyMatch(l -> l.startsWith(": token expired"));
        assertThat(api.get("/api/streams/" + stream, alice).body().get("state").asString()).isEqualTo("open");
    }

    /** Reads the rest of one response after its status line: headers, then a body by length or in chunks. */
    private static void skipResponse(java.io.BufferedReader in) throws IOException {
        String line;
        long length = 0;
        boolean chunked = false;
        while (!(line = in.readLine()).isEmpty()) {
            String header = line.toLowerCase(java.util.Locale.ROOT);
            if (header.startsWith("content-length:")) {
                length = Long.parseLong(header.substring(15).strip());
            }
            chunked |= header.startsWith("transfer-encoding:") && header.contains("chunked");
        }
        if (!chunked) {
            skip(in, length);
            return;
        }
        for (long size; (size = Long.parseLong(in.readLine().strip(), 16)) > 0; ) {
            skip(in, size);
            in.readLine();
        }
        in.readLine();
    }

    private static void skip(java.io.Reader in, long chars) throws IOException {
        for (long skipped = 0; skipped < chars; ) {
            skipped += in.skip(chars - skipped);
        }
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
