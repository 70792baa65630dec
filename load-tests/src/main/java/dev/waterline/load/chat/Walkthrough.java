package dev.waterline.load.chat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code waterline-load walkthrough}: what a new client does first, step by step, each step
 * checked against PROTOCOL.md: two dev tokens, a chat, a WebSocket {@code send} answered
 * {@code accepted}, the {@code message} at the other member, its {@code ack}, the message in a
 * history page, and the §5 series on {@code /actuator/prometheus}. With {@code --prometheus}, also
 * that a Prometheus server scrapes this server as an {@code up} target and holds every §5
 * series. Exit code 0 when every step held, 1 at the first that did not (it says which).
 * {@code deploy/compose-smoke.sh} runs it against the compose stack.
 */
@Command(name = "walkthrough", mixinStandardHelpOptions = true, sortOptions = false,
        description = "A new client's first steps against a running server, each checked; optionally Prometheus's view of it.")
public final class Walkthrough implements Callable<Integer> {

    /** PROTOCOL.md §5: series a running server must export (the streams and hooks rows come with those capabilities). */
    public static final List<String> REQUIRED_SERIES = List.of(
            "waterline_messages_accepted_total", "waterline_deliveries_total", "waterline_acks_total",
            "waterline_outbox_depth", "waterline_outbox_oldest_age_seconds", "waterline_safe_delete_id",
            "waterline_reaper_withdrawals_total", "waterline_connections_active", "waterline_inbound_queue_depth",
            "waterline_sends_rejected_total", "waterline_send_accept_seconds_bucket", "waterline_delivery_seconds_bucket",
            "waterline_loop_errors_total", "waterline_cluster_nodes");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Option(names = "--url", defaultValue = "http://127.0.0.1:8080", description = "Server base URL. Default: ${DEFAULT-VALUE}")
    String url;

    @Option(names = "--peer-url", description = "Another node of the same cluster: the second user connects there, so the"
            + " message crosses from one node to the other (PROTOCOL.md §8).")
    String peerUrl;

    @Option(names = "--prometheus", description = "Also check this Prometheus (e.g. http://127.0.0.1:9090): the server is an up target, the §5 series are there.")
    String prometheus;

    @Option(names = "--job", defaultValue = "waterline", description = "The scrape job that names this server in Prometheus. Default: ${DEFAULT-VALUE}")
    String job;

    @Option(names = "--timeout", defaultValue = "PT90S", description = "Longest wait for any one step. Default: ${DEFAULT-VALUE}")
    Duration timeout;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final List<String> done = new ArrayList<>();

    @Override
    public Integer call() {
        try {
            run();
            System.out.println("walkthrough: all " + done.size() + " steps held");
            return 0;
        }
        catch (StepFailed e) {
            System.out.println("walkthrough: FAILED at: " + e.getMessage());
            return 1;
        }
        catch (Exception e) {
            System.out.println("walkthrough: FAILED after " + done.size() + " steps: " + e);
            return 1;
        }
        finally {
            http.shutdownNow();
        }
    }

    /** Every step, in order; throws {@link StepFailed} naming the first that did not hold. */
    public List<String> run() throws Exception {
        String base = url.replaceAll("/+$", "");
        String run = UUID.randomUUID().toString().substring(0, 8);
        String alice = "walk-alice-" + run;
        String bob = "walk-bob-" + run;

        String bobBase = peerUrl == null ? base : peerUrl.replaceAll("/+$", "");
        String aliceToken = devToken(base, alice);
        String bobToken = devToken(bobBase, bob);
        step("dev tokens for " + alice + " and " + bob + (peerUrl == null ? "" : " (" + bob + " on " + bobBase + ")"));

        HttpResponse<String> created = send(HttpRequest.newBuilder(URI.create(base + "/api/chats"))
                .header("Authorization", "Bearer " + aliceToken).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("members", List.of(bob), "title", "walkthrough")))));
        check(created.statusCode() == 201, "POST /api/chats answered " + created.statusCode() + " " + created.body());
        String chatId = JSON.readTree(created.body()).get("chatId").asString();
        step("chat " + chatId + " created");

        try (Socket bobWs = Socket.open(http, bobBase, bobToken); Socket aliceWs = Socket.open(http, base, aliceToken)) {
            JsonNode welcome = bobWs.next(f -> true, timeout);
            check("welcome".equals(welcome.path("type").asString()) && bob.equals(welcome.path("userId").asString()),
                    "bob's first frame was not his welcome: " + welcome);
            aliceWs.next(f -> "welcome".equals(f.path("type").asString()), timeout);
            step("both connected and welcomed");

            String correlationId = "walk-" + run;
            aliceWs.send(JSON.writeValueAsString(Map.of("type", "send", "chatId", chatId, "correlationId", correlationId,
                    "body", "hello from the walkthrough")));
            JsonNode accepted = aliceWs.next(f -> correlationId.equals(f.path("correlationId").asString()), timeout);
            check("accepted".equals(accepted.path("type").asString()), "the send was answered " + accepted);
            String messageId = accepted.get("messageId").asString();
            long seq = accepted.get("seq").asLong();
            step("send accepted as " + messageId + " (seq " + seq + ")");

            JsonNode message = bobWs.next(f -> "message".equals(f.path("type").asString()), timeout);
            check(messageId.equals(message.path("messageId").asString()) && alice.equals(message.path("senderId").asString())
                            && "hello from the walkthrough".equals(message.path("body").asString()) && message.path("seq").asLong() == seq,
                    "bob's message frame is not the accepted message: " + message);
            double acksBefore = counter(bobBase, "waterline_acks_total");
            bobWs.send(JSON.writeValueAsString(Map.of("type", "ack", "ids", List.of(message.get("deliveryId").asLong()))));
            bobWs.send("{\"type\":\"ping\"}");
            bobWs.next(f -> "pong".equals(f.path("type").asString()), timeout);
            // acks are recorded a moment after they are read; one that comes after its connection
            // closed is rightly dropped (the close withdrew the delivery), so wait for it while open
            awaitCounterAbove(bobBase, "waterline_acks_total", acksBefore);
            step("bob got the message and acked delivery " + message.get("deliveryId").asLong() + "; the server recorded the ack");
        }

        HttpResponse<String> page = send(HttpRequest.newBuilder(URI.create(bobBase + "/api/chats/" + enc(chatId) + "/messages?limit=10"))
                .header("Authorization", "Bearer " + bobToken).GET());
        check(page.statusCode() == 200, "the history page answered " + page.statusCode() + " " + page.body());
        JsonNode messages = JSON.readTree(page.body()).get("messages");
        check(messages.size() == 1 && "hello from the walkthrough".equals(messages.get(0).path("body").asString()),
                "the history page does not hold the message: " + page.body());
        step("history page holds it");

        HttpResponse<String> metrics = send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).GET());
        check(metrics.statusCode() == 200, "/actuator/prometheus answered " + metrics.statusCode());
        List<String> missing = REQUIRED_SERIES.stream().filter(s -> !metrics.body().contains("\n" + s)).toList();
        check(missing.isEmpty(), "/actuator/prometheus lacks " + missing);
        step("/actuator/prometheus exports the §5 series");

        if (prometheus != null) {
            String prom = prometheus.replaceAll("/+$", "");
            awaitQuery(prom, "up{job=\"" + job + "\"} == 1", "Prometheus sees job " + job + " up");
            step("Prometheus scrapes the server: job " + job + " is up");
            for (String series : REQUIRED_SERIES) {
                awaitQuery(prom, "count(" + series + "{job=\"" + job + "\"})", "Prometheus holds " + series);
            }
            awaitQuery(prom, "sum(waterline_acks_total{job=\"" + job + "\"}) >= 1", "Prometheus holds the walkthrough's ack");
            step("Prometheus holds every §5 series and the ack");
        }
        return List.copyOf(done);
    }

    /** The value of an unlabelled series on the server's /actuator/prometheus (0 when absent). */
    private double counter(String base, String series) throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus")).GET());
        check(r.statusCode() == 200, "/actuator/prometheus answered " + r.statusCode());
        for (String line : r.body().split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        return 0;
    }

    /** Waits until the server's {@code series} is above {@code before}, or fails the step. */
    private void awaitCounterAbove(String base, String series, double before) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (counter(base, series) <= before) {
            if (System.nanoTime() > deadline) {
                throw new StepFailed(series + " did not rise above " + before + " within " + timeout);
            }
            // a poll of the server under test, not a test's synchronisation
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /** Waits until an instant query has at least one result, or fails the step. */
    private void awaitQuery(String prom, String query, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (true) {
            try {
                HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(prom + "/api/v1/query?query=" + enc(query))).GET());
                last = r.statusCode() + " " + r.body();
                JsonNode result = r.statusCode() == 200 ? JSON.readTree(r.body()).at("/data/result") : null;
                if (result != null && result.isArray() && !result.isEmpty()) {
                    return;
                }
            }
            catch (java.io.IOException e) {
                last = e.toString();
            }
            if (System.nanoTime() > deadline) {
                throw new StepFailed(what + " (query " + query + " gave nothing within " + timeout + "; last answer " + last + ")");
            }
            // a poll of an external system, not a test's synchronisation: Prometheus scrapes every few seconds
            TimeUnit.MILLISECONDS.sleep(500);
        }
    }

    private String devToken(String base, String user) throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(base + "/api/dev/tokens"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("userId", user)))));
        check(r.statusCode() == 200, "POST /api/dev/tokens answered " + r.statusCode() + " " + r.body()
                + " (dev tokens must be on: waterline.auth.dev-tokens=true)");
        return JSON.readTree(r.body()).get("token").asString();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private void step(String what) {
        done.add(what);
        System.out.println("walkthrough: ok  " + what);
    }

    private static void check(boolean held, String otherwise) {
        if (!held) {
            throw new StepFailed(otherwise);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A step that did not hold. */
    public static final class StepFailed extends RuntimeException {
        StepFailed(String message) {
            super(message);
        }
    }

    /** One WebSocket with its received frames in a queue. */
    private static final class Socket implements WebSocket.Listener, AutoCloseable {
        private final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        private WebSocket ws;

        static Socket open(HttpClient http, String base, String token) throws Exception {
            Socket s = new Socket();
            s.ws = http.newWebSocketBuilder().header("Authorization", "Bearer " + token).connectTimeout(Duration.ofSeconds(10))
                    .buildAsync(URI.create(base.replaceFirst("^http", "ws") + "/ws"), s).get(30, TimeUnit.SECONDS);
            return s;
        }

        void send(String frame) {
            ws.sendText(frame, true).orTimeout(10, TimeUnit.SECONDS).join();
        }

        /** The next frame that matches, skipping others (pongs, read receipts); fails the step on timeout. */
        JsonNode next(Predicate<JsonNode> wanted, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                JsonNode f = frames.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (f == null) {
                    throw new StepFailed("no awaited frame within " + timeout);
                }
                if (f.has("closed")) {
                    throw new StepFailed("the server closed the connection: " + f);
                }
                if (wanted.test(f)) {
                    return f;
                }
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                frames.add(JSON.readTree(partial.toString()));
                partial.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            frames.add(JSON.createObjectNode().put("closed", statusCode).put("reason", reason));
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            frames.add(JSON.createObjectNode().put("closed", -1).put("reason", String.valueOf(error)));
        }

        @Override
        public void close() {
            ws.sendClose(WebSocket.NORMAL_CLOSURE, "walkthrough done").exceptionally(e -> null);
            ws.abort();
        }
    }
}
