package dev.waterline.streams;

import java.util.concurrent.CompletableFuture;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.ingest.Ingest;
import dev.waterline.ingest.SendReply;
import dev.waterline.ingest.SendRequest;
import org.springframework.stereotype.Component;

/**
 * What REST, the WebSocket frames and the dev bot do with streams: open one (through the group
 * commit, as a chat message of kind {@code stream}), and queue its appends and completions.
 */
@Component
class Streams {

    private final Ingest ingest;
    private final Appender appender;
    private final StreamMetrics metrics;

    Streams(Ingest ingest, Appender appender, StreamMetrics metrics) {
        this.ingest = ingest;
        this.appender = appender;
        this.metrics = metrics;
    }

    /**
     * Opens a stream in {@code chatId} for {@code producerId}: completes with the opening message's
     * id once it is committed (or was, by an earlier open with the same {@code correlationId}), or
     * with a {@link Refusal}.
     */
    CompletableFuture<Object> open(String producerId, String chatId, String title, String correlationId) {
        String streamId = UlidCreator.getMonotonicUlid().toString();
        String corr = correlationId != null ? correlationId : "stream-" + streamId;
        CompletableFuture<Object> done = new CompletableFuture<>();
        SendRequest request = new SendRequest(producerId, corr, chatId, title == null ? "" : title, new SendReply() {
            @Override
            public void accepted(String messageId, String chat, long seq, String sentAt) {
                done.complete(messageId);
            }

            @Override
            public void rejected(String code, String message) {
                done.complete(switch (code) {
                    case "not_found" -> new Refusal("not_found", org.springframework.http.HttpStatus.NOT_FOUND, "no such chat", null);
                    case "invalid" -> Refusal.invalid(message);
                    case "overloaded" -> Refusal.overloaded();
                    default -> Refusal.unavailable(message);
                });
            }
        }, SendRequest.STREAM, streamId);
        if (!ingest.offer(request)) {
            done.complete(ingest.isRunning() ? Refusal.overloaded() : Refusal.unavailable("the server is shutting down; retry"));
        }
        return done;
    }

    /** Queues {@code request}; a full queue or a stopping server answers it at once. */
    void submit(AppendRequest request) {
        if (!appender.offer(request)) {
            Refusal why = appender.isAccepting() ? Refusal.overloaded()
                    : Refusal.unavailable("the server is shutting down; nothing stored, retry");
            metrics.refused(why.code());
            request.reply().refused(why);
        }
    }

    /** A reply that completes a future with the stream ({@link StreamView}) or the {@link Refusal}. */
    static AppendRequest.Reply future(CompletableFuture<Object> f) {
        return new AppendRequest.Reply() {
            @Override
            public void done(StreamView stream) {
                f.complete(stream);
            }

            @Override
            public void refused(Refusal why) {
                f.complete(why);
            }
        };
    }
}
