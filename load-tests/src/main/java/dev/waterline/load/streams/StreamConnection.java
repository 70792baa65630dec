package dev.waterline.load.streams;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.waterline.load.clients.WsLink;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One user's WebSocket in a streams run: a producer's appends go out on it; it acks its messages, hands
 * stream frames to its readers ({@link StreamReader}) and answers to its producer ({@link Appended},
 * {@link Refused}). What goes wrong is counted in the run's {@link StreamVerdict}.
 */
final class StreamConnection implements WsLink.Events {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    final String user;
    volatile WsLink link;
    final CompletableFuture<Void> welcomed = new CompletableFuture<>();
    final Map<String, StreamReader> readers = new ConcurrentHashMap<>();
    volatile Appended onAppended = (id, s) -> { };
    volatile Refused onRefused = (id, c, e, k) -> { };
    volatile long lastWrite = System.nanoTime();

    private final int chunkChars;
    private final StreamVerdict verdict;

    StreamConnection(String user, int chunkChars, StreamVerdict verdict) {
        this.user = user;
        this.chunkChars = chunkChars;
        this.verdict = verdict;
    }

    void send(String frame) {
        try {
            link.send(frame);
            lastWrite = System.nanoTime();
        }
        catch (Exception e) {
            verdict.count("write failed: " + e.getClass().getSimpleName());
        }
    }

    void append(ProducedStream s, long seq, long dueNanos) {
        StringBuilder data = new StringBuilder().append(s.dueOf(seq, dueNanos)).append(':');
        while (data.length() < chunkChars) {
            data.append('x');
        }
        send("{\"type\":\"append\",\"streamId\":\"" + s.id + "\",\"correlationId\":\"" + seq + "\",\"chunks\":[{\"seq\":" + seq
                + ",\"data\":\"" + data + "\"}]}");
    }

    void appendMany(ProducedStream s, long from, long to) {
        StringBuilder b = new StringBuilder("{\"type\":\"append\",\"streamId\":\"").append(s.id).append("\",\"correlationId\":\"")
                .append(from).append("\",\"chunks\":[");
        String pad = "x".repeat(Math.max(1, chunkChars - 12));
        for (long q = from; q <= to; q++) {
            if (q > from) {
                b.append(',');
            }
            b.append("{\"seq\":").append(q).append(",\"data\":\"r").append(q).append(pad).append("\"}");
        }
        send(b.append("]}").toString());
    }

    @Override
    public void onText(String frame) {
        if (frame.startsWith("{\"type\":\"chunk\"")) {
            // the most frequent frame, read without a JSON tree: the generator's own cost
            // per frame is what its CPU share on a shared box is made of
            StreamReader r = readers.get(stringField(frame, "streamId"));
            if (r != null) {
                r.chunk(Long.parseLong(numberField(frame, "seq")), stringField(frame, "data"));
            }
            return;
        }
        JsonNode f = JSON.readTree(frame);
        switch (f.path("type").asString()) {
            case "welcome" -> welcomed.complete(null);
            case "chunk" -> {
                StreamReader r = readers.get(f.path("streamId").asString());
                if (r != null) {
                    r.chunk(f.path("seq").asLong(), f.path("data").asString(null));
                }
            }
            case "stream" -> {
                StreamReader r = readers.get(f.path("streamId").asString());
                if (r != null) {
                    r.state(f.path("state").asString(), f.path("lastSeq").asLong());
                }
            }
            case "appended" -> onAppended.on(f.path("streamId").asString(), f.path("lastSeq").asLong());
            case "message" -> send("{\"type\":\"ack\",\"ids\":[" + f.path("deliveryId").asLong() + "]}");
            case "error" -> {
                JsonNode e = f.get("expectedSeq");
                if (f.has("streamId")) {
                    onRefused.on(f.path("streamId").asString(), f.path("code").asString(), e == null ? null : e.asLong(),
                            f.path("correlationId").asString(null));
                }
                else {
                    verdict.count("error: " + f.path("code").asString());
                }
            }
            default -> {
                // pong, sync, receipts: nothing to do
            }
        }
    }

    @Override
    public void onClose(int code) {
        if (code != 1000) {
            verdict.count("closed by the server: " + code);
        }
        welcomed.completeExceptionally(new IllegalStateException("closed " + code));
    }

    /** A producer's append answered: the stream's last stored seq. */
    interface Appended {
        void on(String streamId, long lastSeq);
    }

    /** A producer's append refused, with the seq the server expects when it names one. */
    interface Refused {
        void on(String streamId, String code, Long expectedSeq, String correlationId);
    }

    /** The value of a string field without escapes (ids, the harness's own data); null when absent. */
    static String stringField(String frame, String name) {
        String key = "\"" + name + "\":\"";
        int i = frame.indexOf(key);
        if (i < 0) {
            return null;
        }
        int from = i + key.length();
        return frame.substring(from, frame.indexOf('"', from));
    }

    static String numberField(String frame, String name) {
        String key = "\"" + name + "\":";
        int from = frame.indexOf(key) + key.length();
        int to = from;
        while (to < frame.length() && (Character.isDigit(frame.charAt(to)) || frame.charAt(to) == '-')) {
            to++;
        }
        return frame.substring(from, to);
    }
}
