package dev.waterline.ingest;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.input.InputGate;
import dev.waterline.lifecycle.Loops;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.web.ApiException;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * PROTOCOL.md §9 over REST, for clients without a socket: edit, delete, and put on or take back a
 * reaction. Each request becomes the same entry a frame would ({@link SendRequest}), goes through
 * the same group commit, and is answered after it with the entry ({@code messageId}, {@code seq}).
 * The {@code Idempotency-Key} header is the entry's {@code correlationId}: a retry with the same key
 * within the idempotency window answers the entry the first made; without it each request has a
 * fresh key. Refusals answer as the frames' codes map to HTTP ({@code 403 forbidden},
 * {@code 404 not_found}, {@code 400 invalid}, {@code 413 too_large}, {@code 503 overloaded} or
 * {@code unavailable}); the REST rate limit counts every call, as it does any.
 */
@RestController
class EntryController {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    private final Ingest ingest;
    private final SendLimits limits;
    private final WaterlineMetrics metrics;
    private final Loops loops;
    private final long waitMillis;

    EntryController(Ingest ingest, SendLimits limits, InboundProperties inbound, WaterlineMetrics metrics, Loops loops) {
        this.ingest = ingest;
        this.limits = limits;
        this.metrics = metrics;
        this.loops = loops;
        // the answer comes after the commit: at most one timeout per attempt of the batch (a retry
        // after a key race), the linger and a margin
        this.waitMillis = inbound.commitTimeout().toMillis() * Math.max(1, inbound.retries()) + inbound.linger().toMillis() + 5_000;
    }

    @Operation(summary = "Edit a message (its sender only; text messages only): the edit entry (PROTOCOL.md §9)")
    @PatchMapping("/api/chats/{chatId}/messages/{messageId}")
    ResponseEntity<byte[]> edit(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                @PathVariable String messageId, @RequestHeader(name = "Idempotency-Key", required = false) String key,
                                @RequestBody(required = false) JsonNode body) {
        String user = ApiAuthentication.userId(request);
        JsonNode text = body == null ? null : body.get("body");
        if (text == null || !text.isString() || text.asString().isEmpty()) {
            throw ApiException.invalid("body must be a non-empty string");
        }
        if (text.asString().length() > limits.maxBodyChars()) {
            throw new ApiException(HttpStatus.CONTENT_TOO_LARGE, "too_large", "body longer than " + limits.maxBodyChars() + " characters");
        }
        String corr = correlation(key);
        return commit(reply -> SendRequest.edit(user, corr, chatId, id(messageId), text.asString(), reply), corr, messageId, user);
    }

    @Operation(summary = "Delete a message (its sender only): erases its text, its edits' and its files; the delete entry")
    @DeleteMapping("/api/chats/{chatId}/messages/{messageId}")
    ResponseEntity<byte[]> delete(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                  @PathVariable String messageId, @RequestHeader(name = "Idempotency-Key", required = false) String key) {
        String user = ApiAuthentication.userId(request);
        String corr = correlation(key);
        return commit(reply -> SendRequest.delete(user, corr, chatId, id(messageId), reply), corr, messageId, user);
    }

    @Operation(summary = "Put a reaction on a message (emoji percent-encoded): the reaction entry, or unchanged")
    @PutMapping("/api/chats/{chatId}/messages/{messageId}/reactions/{emoji}")
    ResponseEntity<byte[]> react(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                 @PathVariable String messageId, @PathVariable String emoji,
                                 @RequestHeader(name = "Idempotency-Key", required = false) String key) {
        return reaction(request, chatId, messageId, emoji, key, true);
    }

    @Operation(summary = "Take back a reaction: the reaction entry (on false), or unchanged")
    @DeleteMapping("/api/chats/{chatId}/messages/{messageId}/reactions/{emoji}")
    ResponseEntity<byte[]> unreact(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                   @PathVariable String messageId, @PathVariable String emoji,
                                   @RequestHeader(name = "Idempotency-Key", required = false) String key) {
        return reaction(request, chatId, messageId, emoji, key, false);
    }

    private ResponseEntity<byte[]> reaction(HttpServletRequest request, String chatId, String messageId, String emoji, String key,
                                            boolean on) {
        String user = ApiAuthentication.userId(request);
        if (!SendFrames.emoji(emoji)) {
            throw ApiException.invalid("emoji must be 1-" + SendFrames.MAX_EMOJI + " characters without control characters");
        }
        String corr = correlation(key);
        return commit(reply -> SendRequest.react(user, corr, chatId, id(messageId), emoji, on, reply), corr, messageId, user);
    }

    private static String id(String messageId) {
        if (InputGate.idProblem(messageId, 1, SendFrames.MAX_ID) != null) {
            throw ApiException.notFound();
        }
        return messageId;
    }

    private static String correlation(String key) {
        if (key == null) {
            return UlidCreator.getMonotonicUlid().toString();
        }
        if (InputGate.idProblem(key, 1, SendFrames.MAX_CORRELATION_ID) != null) {
            throw ApiException.invalid("Idempotency-Key must be 1-" + SendFrames.MAX_CORRELATION_ID
                    + " characters without control characters");
        }
        return key;
    }

    /**
     * Queues the entry {@code make} builds, waits for its commit and answers it, with the key it
     * was made under in the {@code Idempotency-Key} header (the server's own when the request had
     * none), so that a client whose answer was lost can retry without making a second entry.
     */
    private ResponseEntity<byte[]> commit(Function<SendReply, SendRequest> make, String key, String messageId, String user) {
        CompletableFuture<Map<String, Object>> answer = new CompletableFuture<>();
        SendRequest request = make.apply(new SendReply() {
            @Override
            public void accepted(String id, String chat, long seq, String sentAt) {
                answer.complete(entry(id, chat, seq, sentAt, false));
            }

            @Override
            public void unchanged(String id, String chat, long seq, String sentAt) {
                answer.complete(entry(id, chat, seq, sentAt, true));
            }

            @Override
            public void rejected(String code, String message) {
                answer.completeExceptionally(refusal(code, message));
            }
        });
        if (InputGate.idProblem(request.chatId(), 1, SendFrames.MAX_CHAT_ID) != null) {
            throw ApiException.notFound();
        }
        if (!ingest.offer(request)) {
            metrics.rejected(ingest.isRunning() ? "overloaded" : "unavailable").increment();
            throw ingest.isRunning()
                    ? new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "overloaded", "the server is saturated; retry later", 1)
                    : new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "the server is shutting down; retry", 1);
        }
        try {
            ResponseEntity<byte[]> ok = Json.answer(HttpStatus.OK, answer.get(waitMillis, TimeUnit.MILLISECONDS));
            return ResponseEntity.status(ok.getStatusCode()).headers(ok.getHeaders()).header(IDEMPOTENCY_KEY, key).body(ok.getBody());
        }
        catch (ExecutionException e) {
            metrics.rejected(((ApiException) e.getCause()).code()).increment();
            throw (ApiException) e.getCause();
        }
        catch (InterruptedException | TimeoutException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            loops.failed(Ingest.LOOP, "no answer to a REST entry of " + user + " on message " + messageId + " within "
                    + waitMillis + " ms", e);
            throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable",
                    "no answer in time; the outcome is unknown: retry with the header Idempotency-Key: " + key, 1);
        }
    }

    private static Map<String, Object> entry(String messageId, String chatId, long seq, String sentAt, boolean unchanged) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("messageId", messageId);
        out.put("chatId", chatId);
        out.put("seq", seq);
        out.put("sentAt", sentAt);
        if (unchanged) {
            out.put("unchanged", true);
        }
        return out;
    }

    private static ApiException refusal(String code, String message) {
        HttpStatus status = switch (code) {
            case "forbidden" -> HttpStatus.FORBIDDEN;
            case "not_found" -> HttpStatus.NOT_FOUND;
            case "too_large" -> HttpStatus.CONTENT_TOO_LARGE;
            case "rate_limited" -> HttpStatus.TOO_MANY_REQUESTS;
            case "unavailable", "overloaded" -> HttpStatus.SERVICE_UNAVAILABLE;
            default -> HttpStatus.BAD_REQUEST;
        };
        return status == HttpStatus.SERVICE_UNAVAILABLE ? new ApiException(status, code, message, 1) : new ApiException(status, code, message);
    }
}
