package dev.waterline.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;

/**
 * The streams contract (PROTOCOL.md §6) as a third-party client would use it: REST calls, and a
 * server-sent-events reader written from the event-stream format alone.
 */
public final class StreamClient {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Api api;

    public StreamClient(Api api) {
        this.api = api;
    }

    /** Opens a stream in {@code chatId}; returns the 201 answer's body. */
    public JsonNode open(String token, String chatId) {
        Api.Response r = api.post("/api/chats/" + chatId + "/streams", token, Map.of());
        if (r.status() != 201) {
            throw new IllegalStateException("stream not opened: " + r);
        }
        return r.body();
    }

    /** One chunk of text. */
    public static Map<String, Object> chunk(long seq, String data) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("seq", seq);
        c.put("data", data);
        return c;
    }

    /** Chunks {@code from..to}, each with data {@code prefix + seq}. */
    public static List<Map<String, Object>> chunks(long from, long to, String prefix) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(chunk(s, prefix + s));
        }
        return out;
    }

    public Api.Response append(String token, String streamId, List<Map<String, Object>> chunks) {
        return api.post("/api/streams/" + streamId + "/chunks", token, Map.of("chunks", chunks));
    }

    public Api.Response complete(String token, String streamId, long lastSeq) {
        return api.post("/api/streams/" + streamId + "/complete", token, Map.of("lastSeq", lastSeq));
    }

    public Api.Response abort(String token, String streamId, String reason) {
        return api.post("/api/streams/" + streamId + "/complete", token, Map.of("aborted", true, "reason", reason));
    }

    /** Every chunk from {@code fromSeq}, paging until hasMore is false. */
    public List<JsonNode> readAll(String token, String streamId, long fromSeq, int limit) {
        List<JsonNode> all = new ArrayList<>();
        long from = fromSeq;
        while (true) {
            Api.Response r = api.get("/api/streams/" + streamId + "/chunks?fromSeq=" + from + "&limit=" + limit, token);
            if (r.status() != 200) {
                throw new IllegalStateException("chunks failed: " + r);
            }
            for (JsonNode c : r.body().get("chunks")) {
                all.add(c);
                from = c.get("seq").asLong() + 1;
            }
            if (!r.body().get("hasMore").asBoolean()) {
                return all;
            }
        }
    }

    /** One server-sent event: its id (or null), its event name, its data. */
    public record Event(String id, String event, String data) {
    }

    /** An open event stream, read on a thread of its own until the response ends. */
    public static final class Events implements AutoCloseable {
        private final List<Event> events = new ArrayList<>();
        private final CompletableFuture<Integer> status = new CompletableFuture<>();
        private final CompletableFuture<Void> ended = new CompletableFuture<>();
        private volatile java.io.InputStream body;

        Events(HttpRequest request) {
            Thread.ofVirtual().start(() -> {
                try {
                    HttpResponse<java.io.InputStream> r = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
                    status.complete(r.statusCode());
                    body = r.body();
                    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                        String id = null;
                        String name = null;
                        StringBuilder data = null;
                        String line;
                        while ((line = in.readLine()) != null) {
                            if (line.isEmpty()) {
                                if (data != null) {
                                    add(new Event(id, name == null ? "message" : name, data.toString()));
                                }
                                id = null;
                                name = null;
                                data = null;
                            }
                            else if (line.startsWith(":")) {
                                continue;
                            }
                            else if (line.startsWith("id:")) {
                                id = line.substring(3).strip();
                            }
                            else if (line.startsWith("event:")) {
                                name = line.substring(6).strip();
                            }
                            else if (line.startsWith("data:")) {
                                String d = line.substring(5);
                                d = d.startsWith(" ") ? d.substring(1) : d;
                                data = data == null ? new StringBuilder(d) : data.append('\n').append(d);
                            }
                        }
                    }
                    ended.complete(null);
                }
                catch (IOException | InterruptedException e) {
                    status.complete(-1);
                    ended.complete(null);
                }
            });
        }

        private synchronized void add(Event e) {
            events.add(e);
            notifyAll();
        }

        public int status() {
            return status.orTimeout(10, TimeUnit.SECONDS).join();
        }

        /** Waits for the server to end the response. */
        public List<Event> awaitEnd(Duration timeout) {
            ended.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).join();
            return received();
        }

        /** Waits until at least {@code n} events arrived. */
        public synchronized List<Event> awaitAtLeast(int n, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (events.size() < n) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("fewer than " + n + " events within " + timeout + ": " + events);
                }
                try {
                    wait(left);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
            return List.copyOf(events);
        }

        public synchronized List<Event> received() {
            return List.copyOf(events);
        }

        public boolean ended() {
            return ended.isDone();
        }

        @Override
        public void close() {
            try {
                java.io.InputStream b = body;
                if (b != null) {
                    b.close();
                }
            }
            catch (IOException e) {
                // closing a stream the server may have ended already
            }
        }
    }

    /** Opens {@code GET /api/streams/{id}/events} with these query parameters and headers. */
    public Events events(String streamId, String query, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/api/streams/" + streamId
                + "/events" + (query == null ? "" : "?" + query))).header("Accept", "text/event-stream");
        headers.forEach(b::header);
        return new Events(b.GET().build());
    }
}
