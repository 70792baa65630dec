package dev.waterline.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A plain HTTP client for the REST contract (PROTOCOL.md §1, §2, §4), as a third-party client would use it. */
public final class Api {

    public static final JsonMapper JSON = JsonMapper.builder().build();

    /** An answer: its status, its body as JSON (null when empty or not JSON), and its text. */
    public record Response(int status, JsonNode body, String text, java.net.http.HttpHeaders headers) {
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;

    public Api(int port) {
        this.port = port;
    }

    public int port() {
        return port;
    }

    public String token(String userId) {
        Response r = post("/api/dev/tokens", null, Map.of("userId", userId));
        if (r.status() != 200) {
            throw new IllegalStateException("dev token refused: " + r);
        }
        return r.body().get("token").asString();
    }

    /** Creates a chat as {@code token}'s user with these other members; returns its id. */
    public String createChat(String token, String... members) {
        Response r = post("/api/chats", token, Map.of("members", List.of(members)));
        if (r.status() != 201) {
            throw new IllegalStateException("chat not created: " + r);
        }
        return r.body().get("chatId").asString();
    }

    /** Tokens of {@code <prefix>-alice} and {@code <prefix>-bob} and the chat alice created with bob. */
    public record Pair(String alice, String bob, String chat) {
    }

    /** The most common test set-up: two users and their one-to-one chat. */
    public Pair pair(String prefix) {
        String alice = token(prefix + "-alice");
        String bob = token(prefix + "-bob");
        return new Pair(alice, bob, createChat(alice, prefix + "-bob"));
    }

    /** Every message of a chat after {@code since}, paging until hasMore is false. */
    public List<JsonNode> history(String token, String chatId, String since, int limit) {
        List<JsonNode> all = new ArrayList<>();
        String cursor = since;
        while (true) {
            Response r = get("/api/chats/" + chatId + "/messages?limit=" + limit + (cursor == null ? "" : "&since=" + cursor), token);
            if (r.status() != 200) {
                throw new IllegalStateException("history failed: " + r);
            }
            JsonNode page = r.body().get("messages");
            for (JsonNode m : page) {
                all.add(m);
                cursor = m.get("messageId").asString();
            }
            if (!r.body().get("hasMore").asBoolean()) {
                return all;
            }
        }
    }

    public Response get(String path, String token) {
        return send(request(path, token).GET());
    }

    public Response post(String path, String token, Object body) {
        return postRaw(path, token, JSON.writeValueAsString(body));
    }

    public Response delete(String path, String token) {
        return send(request(path, token).DELETE());
    }

    public Response postRaw(String path, String token, String body) {
        return send(request(path, token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    /**
     * Any call: {@code method} with a JSON {@code body} (or none when null) and extra headers given as
     * name, value pairs.
     */
    public Response call(String method, String path, String token, String body, String... headers) {
        HttpRequest.Builder b = request(path, token);
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        return send(b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)));
    }

    /** Any call with a raw text {@code body} of {@code contentType}. */
    public Response callRaw(String method, String path, String token, String body, String contentType) {
        return send(request(path, token).header("Content-Type", contentType)
                .method(method, HttpRequest.BodyPublishers.ofString(body)));
    }

    private HttpRequest.Builder request(String path, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private Response send(HttpRequest.Builder b) {
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode body = null;
            if (r.body() != null && !r.body().isBlank()
                    && r.headers().firstValue("Content-Type").orElse("").contains("json")) {
                body = JSON.readTree(r.body());
            }
            return new Response(r.statusCode(), body, r.body(), r.headers());
        }
        catch (IOException e) {
            throw new IllegalStateException(e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
