package dev.waterline.load.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The REST calls the benchmarks make around what they time: tokens, a chat, JSON answers. */
final class BenchHttp {

    static final JsonMapper JSON = JsonMapper.builder().build();

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    final String base;

    BenchHttp(String base) {
        this.base = base.replaceAll("/+$", "");
    }

    /** A token of the zero-configuration mode's {@code /api/dev/tokens}. */
    String token(String user) throws IOException, InterruptedException {
        return post("/api/dev/tokens", null, Map.of("userId", user)).get("token").asString();
    }

    /** A chat of {@code owner} with {@code others}; its chatId. */
    String chat(String ownerToken, List<String> others) throws IOException, InterruptedException {
        return post("/api/chats", ownerToken, Map.of("members", others)).get("chatId").asString();
    }

    /** {@code count} chats of {@code owner}, chat i with partner i % partners, created 8 at a time; their ids by i. */
    List<String> chatsWithPartners(String ownerToken, List<String> partners, int count) throws Exception {
        List<java.util.concurrent.Future<String>> made = new java.util.ArrayList<>();
        try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < count; i++) {
                String partner = partners.get(i % partners.size());
                made.add(pool.submit(() -> chat(ownerToken, List.of(partner))));
            }
        }
        List<String> ids = new java.util.ArrayList<>(count);
        for (java.util.concurrent.Future<String> f : made) {
            ids.add(f.get());
        }
        return ids;
    }

    JsonNode post(String path, String token, Object body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        return json(b, token);
    }

    JsonNode get(String path, String token) throws IOException, InterruptedException {
        return json(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET(), token);
    }

    HttpResponse<String> send(HttpRequest.Builder b, String token) throws IOException, InterruptedException {
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode json(HttpRequest.Builder b, String token) throws IOException, InterruptedException {
        HttpResponse<String> r = send(b, token);
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(r.request().method() + " " + r.request().uri() + " answered " + r.statusCode() + " " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** The WebSocket URL of this server. */
    URI ws() {
        return URI.create(base.replaceFirst("^http", "ws") + "/ws");
    }
}
