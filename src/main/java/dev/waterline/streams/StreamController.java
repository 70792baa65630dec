package dev.waterline.streams;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.auth.QueryToken;
import dev.waterline.blobs.Blobs;
import dev.waterline.input.InputGate;
import dev.waterline.web.ApiException;
import dev.waterline.web.ApiProperties;
import dev.waterline.web.BodyAllowance;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.UrlPathHelper;
import tools.jackson.databind.JsonNode;

/**
 * PROTOCOL.md §6 over REST: open, append, upload a blob, complete or abort, read a stream, page its
 * chunks, follow it as server-sent events, fetch a blob. Appends and completions go through the
 * appender's group commit and are answered after it; every read takes one of the bounded turns at
 * PostgreSQL ({@link DatabaseTurns}).
 */
@RestController
class StreamController {

    static final int MAX_TITLE = 200;
    static final int MAX_REASON = 500;
    static final int MAX_CORRELATION_ID = 64;
    static final int MAX_CONTENT_TYPE = 255;

    private final Streams streams;
    private final StreamRepository store;
    private final Blobs blobs;
    private final StreamProperties properties;
    private final DatabaseTurns turns;
    private final EventStreams events;
    private final Answers answers;
    private final long pageBytes;

    StreamController(Streams streams, StreamRepository store, Blobs blobs, StreamProperties properties, DatabaseTurns turns,
                     EventStreams events, ApiProperties api, Answers answers) {
        this.streams = streams;
        this.store = store;
        this.blobs = blobs;
        this.properties = properties;
        this.turns = turns;
        this.events = events;
        this.answers = answers;
        this.pageBytes = api.maxPageBytes().toBytes();
    }

    /** The blob upload takes bodies up to {@code max-blob-bytes}. */
    @Component
    static class BlobUploads implements BodyAllowance {

        private final long max;

        BlobUploads(StreamProperties properties) {
            this.max = properties.maxBlobBytes().toBytes();
        }

        @Override
        public long maxBodyBytes(HttpServletRequest request) {
            if (!"POST".equals(request.getMethod())) {
                return -1;
            }
            String path = UrlPathHelper.defaultInstance.getLookupPathForRequest(request);
            return path.startsWith("/api/streams/") && path.endsWith("/blobs") && path.chars().filter(c -> c == '/').count() == 4
                    ? max : -1;
        }
    }

    @Operation(summary = "Open a stream in a chat (PROTOCOL.md §6); its opening message (kind stream) is committed first",
            description = "Any member may open a stream; correlationId (optional, 1-64 characters) makes a retry return the same stream.",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"title\":\"reply\"}"))),
            responses = @ApiResponse(responseCode = "201", description = "the stream",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = StreamView.class))))
    @PostMapping("/api/chats/{chatId}/streams")
    ResponseEntity<byte[]> open(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                @RequestBody(required = false) JsonNode body) {
        String user = ApiAuthentication.userId(request);
        String title = null;
        String correlationId = null;
        if (body != null && !body.isNull()) {
            title = Json.optionalString(body, "title", MAX_TITLE);
            correlationId = Json.optionalString(body, "correlationId", MAX_CORRELATION_ID);
            if (correlationId != null && InputGate.idProblem(correlationId, 1, MAX_CORRELATION_ID) != null) {
                throw ApiException.invalid("correlationId must be 1-" + MAX_CORRELATION_ID + " characters without control characters");
            }
        }
        Object outcome = await(streams.open(user, chatId, title, correlationId));
        if (outcome instanceof Refusal r) {
            return refusal(r);
        }
        String messageId = (String) outcome;
        return turns.run(() -> {
            StreamView view = store.byMessage(messageId).orElse(null);
            if (view == null) {
                return refusal(new Refusal("conflict", HttpStatus.CONFLICT,
                        "correlationId was used by a message that opened no stream", null));
            }
            return Json.answer(HttpStatus.CREATED, view);
        });
    }

    record Appended(String streamId, long lastSeq) {
    }

    @Operation(summary = "Append chunks (only the producer); 200 after commit",
            description = "The first seq must be lastSeq + 1 and the seqs consecutive; a chunk at or below lastSeq is a retry "
                    + "(acknowledged if equal, 409 conflict if not); above lastSeq + 1 is 409 gap; a closed stream is 409 closed.",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/json",
                    schema = @Schema(example = "{\"chunks\":[{\"seq\":1,\"data\":\"Hel\"},{\"seq\":2,\"data\":\"lo\"}]}"))),
            responses = @ApiResponse(responseCode = "200", description = "the stream's last seq",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Appended.class))))
    @PostMapping("/api/streams/{streamId}/chunks")
    ResponseEntity<byte[]> append(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String streamId,
                                  @RequestBody(required = false) JsonNode body) {
        String user = ApiAuthentication.userId(request);
        List<NewChunk> chunks;
        try {
            chunks = ChunkInput.parse(Json.object(body).get("chunks"), properties);
        }
        catch (ChunkInput.Refused e) {
            return refusal(e.refusal);
        }
        CompletableFuture<Object> done = new CompletableFuture<>();
        streams.submit(AppendRequest.append(streamId, user, chunks, Streams.future(done)));
        Object outcome = await(done);
        if (outcome instanceof Refusal r) {
            return refusal(r);
        }
        StreamView v = (StreamView) outcome;
        return Json.answer(HttpStatus.OK, new Appended(v.streamId(), v.lastSeq()));
    }

    @Operation(summary = "Complete ({\"lastSeq\":n}) or abort ({\"aborted\":true,\"reason\":\"…\"}) a stream (only the producer)",
            responses = @ApiResponse(responseCode = "200", description = "the stream",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = StreamView.class))))
    @PostMapping("/api/streams/{streamId}/complete")
    ResponseEntity<byte[]> complete(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String streamId,
                                    @RequestBody(required = false) JsonNode body) {
        String user = ApiAuthentication.userId(request);
        JsonNode b = Json.object(body);
        JsonNode aborted = b.get("aborted");
        JsonNode lastSeq = b.get("lastSeq");
        CompletableFuture<Object> done = new CompletableFuture<>();
        if (aborted != null && !aborted.isNull()) {
            if (!aborted.isBoolean() || !aborted.asBoolean()) {
                throw ApiException.invalid("aborted must be true (or absent, to complete with lastSeq)");
            }
            if (lastSeq != null && !lastSeq.isNull()) {
                throw ApiException.invalid("give lastSeq to complete or aborted to abort, not both");
            }
            String reason = Json.optionalString(b, "reason", MAX_REASON);
            streams.submit(AppendRequest.abort(streamId, user, reason, Streams.future(done)));
        }
        else {
            if (lastSeq == null || !lastSeq.isIntegralNumber() || !lastSeq.canConvertToLong() || lastSeq.asLong() < 0) {
                throw ApiException.invalid("lastSeq must be an integer of at least 0 (or aborted: true)");
            }
            streams.submit(AppendRequest.complete(streamId, user, lastSeq.asLong(), Streams.future(done)));
        }
        Object outcome = await(done);
        if (outcome instanceof Refusal r) {
            return refusal(r);
        }
        return Json.answer(HttpStatus.OK, outcome);
    }

    record BlobStored(String blobId, long size, String contentType, String sha256) {
    }

    @Operation(summary = "Upload a blob to a stream (only the producer, open streams); a chunk then names it by blobId",
            description = "Raw bytes of any Content-Type, up to waterline.streams.max-blob-bytes (413 too_large beyond). Who may"
                    + " upload is checked before the body is read; the body is stored a part at a time.",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/octet-stream")),
            responses = @ApiResponse(responseCode = "201", description = "the blob",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = BlobStored.class))))
    @PostMapping(path = "/api/streams/{streamId}/blobs", consumes = MediaType.ALL_VALUE)
    ResponseEntity<byte[]> upload(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String streamId)
            throws java.io.IOException {
        String user = ApiAuthentication.userId(request);
        String type = request.getContentType() == null || request.getContentType().isBlank()
                ? MediaType.APPLICATION_OCTET_STREAM_VALUE : request.getContentType().strip();
        if (type.length() > MAX_CONTENT_TYPE || InputGate.idProblem(type, 1, MAX_CONTENT_TYPE) != null) {
            throw ApiException.invalid("Content-Type must be 1-" + MAX_CONTENT_TYPE + " printable characters");
        }
        long max = properties.maxBlobBytes().toBytes();
        String blobId = UlidCreator.getMonotonicUlid().toString();
        // who may upload, and whether the stream takes blobs, before a byte of the body is read
        ResponseEntity<byte[]> refused = turns.run(() -> {
            StreamRepository.Access access = store.access(streamId, user).orElse(null);
            if (access == null || !access.member()) {
                return refusal(Refusal.notFound());
            }
            if (!access.stream().producerId().equals(user)) {
                return refusal(Refusal.forbidden());
            }
            if (access.stream().closed() || !store.beginUpload(blobId, streamId, user, type)) {
                return refusal(Refusal.closed(access.stream().closed() ? access.stream().state() : "closed"));
            }
            return null;
        });
        if (refused != null) {
            return refused;
        }
        Blobs.Stored stored;
        try {
            stored = blobs.receive(blobId, user, request.getInputStream(), max);
        }
        catch (java.io.IOException | RuntimeException failed) {
            dropUpload(blobId);
            if (failed instanceof Blobs.TooLarge || failed instanceof dev.waterline.web.BodyTooLarge) {
                return refusal(new Refusal("too_large", HttpStatus.CONTENT_TOO_LARGE, "the blob is larger than " + max + " bytes", null));
            }
            if (failed instanceof dev.waterline.web.Pace.TooSlow || failed instanceof Blobs.TooLong) {
                return ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).header(HttpHeaders.CONNECTION, "close")
                        .contentType(MediaType.APPLICATION_JSON).body(refusal(new Refusal("too_slow", HttpStatus.REQUEST_TIMEOUT,
                                failed.getMessage() + "; nothing was stored", null)).getBody());
            }
            if (failed instanceof java.io.IOException) {
                // the client went away, or its body broke off: nothing is kept, and nobody may be listening
                throw ApiException.invalid("the body ended before it was whole; nothing was stored");
            }
            throw failed;
        }
        boolean kept = turns.run(() -> store.storeUpload(blobId, stored.size(), stored.sha256()));
        if (!kept) {
            dropUpload(blobId);
            return refusal(Refusal.closed("closed"));
        }
        return Json.answer(HttpStatus.CREATED, new BlobStored(blobId, stored.size(), type, stored.sha256()));
    }

    /**
     * An upload that did not finish: its row goes, and the removal of whatever it stored is queued
     * whether or not the row was still there (the sweep of abandoned uploads may have taken it, and
     * its trigger then queued only what was stored by that time).
     */
    private void dropUpload(String blobId) {
        try {
            store.dropUpload(blobId);
            blobs.discard(blobId);
        }
        catch (RuntimeException e) {
            // the row stays uploading; the sweep of abandoned uploads removes it after waterline.blobs.upload-timeout
            answers.uploadNotDropped(blobId, e);
        }
    }

    @Operation(summary = "One stream (members of its chat only)",
            responses = @ApiResponse(responseCode = "200", description = "the stream",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = StreamView.class))))
    @GetMapping("/api/streams/{streamId}")
    ResponseEntity<byte[]> get(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String streamId) {
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> Json.answer(HttpStatus.OK, store.forMember(streamId, user).orElseThrow(StreamController::noStream)));
    }

    record ChunkPage(List<Chunk> chunks, String state, long lastSeq, boolean hasMore) {
    }

    @Operation(summary = "A page of a stream's chunks from fromSeq, in seq order",
            description = "fromSeq default 1; limit 1-1000, default 100. A page may stop early (hasMore) at the byte budget.",
            responses = @ApiResponse(responseCode = "200", description = "a page",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = ChunkPage.class))))
    @GetMapping("/api/streams/{streamId}/chunks")
    ResponseEntity<byte[]> chunks(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String streamId,
                                  @RequestParam(required = false) String fromSeq, @RequestParam(required = false) String limit) {
        String user = ApiAuthentication.userId(request);
        long from = parseLong(fromSeq, 1, "fromSeq must be an integer of at least 1");
        long rows = parseLong(limit, 100, "limit must be an integer from 1 to 1000");
        if (from < 1) {
            throw ApiException.invalid("fromSeq must be an integer of at least 1");
        }
        if (rows < 1 || rows > 1000) {
            throw ApiException.invalid("limit must be an integer from 1 to 1000");
        }
        return turns.run(() -> {
            StreamView s = store.forMember(streamId, user).orElseThrow(StreamController::noStream);
            List<Chunk> page = store.chunks(s, from, s.lastSeq(), (int) rows, pageBytes);
            long last = page.isEmpty() ? from - 1 : page.getLast().getSeq();
            // an empty page below the head: those chunks are past retention, and there is no more to page
            return Json.answer(HttpStatus.OK, new ChunkPage(page, s.state(), s.lastSeq(), !page.isEmpty() && last < s.lastSeq()));
        });
    }

    @Operation(summary = "Follow a stream as server-sent events from fromSeq (or Last-Event-ID + 1, which wins)",
            description = "Each chunk as id: <seq>, event: chunk; the state as event: stream, first and on every change; the "
                    + "response ends after the stream event of a completed or aborted stream. Token by header or access_token.",
            responses = @ApiResponse(responseCode = "200", description = "text/event-stream",
                    content = @Content(mediaType = "text/event-stream")))
    @QueryToken
    @GetMapping(path = "/api/streams/{streamId}/events")
    void events(@Parameter(hidden = true) HttpServletRequest request, @Parameter(hidden = true) HttpServletResponse response,
                @PathVariable String streamId, @RequestParam(required = false) String fromSeq,
                @RequestParam(name = "access_token", required = false) @Parameter(hidden = true) String accessToken,
                @RequestHeader(name = "Last-Event-ID", required = false) String lastEventId) throws java.io.IOException {
        String user = ApiAuthentication.userId(request);
        long from;
        if (lastEventId != null && !lastEventId.isBlank()) {
            from = parseLong(lastEventId, 0, "Last-Event-ID must be the seq of the last chunk received") + 1;
            if (from < 1) {
                throw ApiException.invalid("Last-Event-ID must be the seq of the last chunk received");
            }
        }
        else {
            from = parseLong(fromSeq, 1, "fromSeq must be an integer of at least 1");
            if (from < 1) {
                throw ApiException.invalid("fromSeq must be an integer of at least 1");
            }
        }
        StreamView s = turns.run(() -> store.forMember(streamId, user).orElseThrow(StreamController::noStream));
        events.serve(s, from, ApiAuthentication.goodUntilMillis(request), response);
    }

    @Operation(summary = "A blob's bytes (members of its stream's chat only), served as a download",
            description = "As user content: Content-Disposition attachment, nosniff, a sandboxing Content-Security-Policy, and"
                    + " the recorded type only when it is passive (anything a browser could run is application/octet-stream)."
                    + " ETag (If-None-Match: 304) and one Range (206; 416 past the end) are honoured.",
            responses = @ApiResponse(responseCode = "200", description = "the bytes"))
    @QueryToken
    @GetMapping("/api/blobs/{blobId}")
    void blob(@Parameter(hidden = true) HttpServletRequest request, @Parameter(hidden = true) HttpServletResponse response,
              @PathVariable String blobId,
              @RequestParam(name = "access_token", required = false) @Parameter(hidden = true) String accessToken) throws java.io.IOException {
        String user = ApiAuthentication.userId(request);
        StreamRepository.Blob b = turns.run(() -> store.blobForMember(blobId, user)
                .orElseThrow(() -> new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such blob")));
        blobs.send(new Blobs.File(blobId, b.size(), b.sha256(), b.contentType(), blobId), user, request, response);
    }

    private static ApiException noStream() {
        return new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such stream");
    }

    private Object await(CompletableFuture<Object> f) {
        return answers.await(f);
    }

    /** A refusal as PROTOCOL.md answers it: its status, {@code {"error","message"}}, and {@code expectedSeq} for gap and conflict. */
    static ResponseEntity<byte[]> refusal(Refusal r) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", r.code());
        body.put("message", InputGate.printable(r.message()));
        if (r.expectedSeq() != null) {
            body.put("expectedSeq", r.expectedSeq());
        }
        ResponseEntity<byte[]> answer = Json.answer(r.status(), body);
        if (r.status() == HttpStatus.SERVICE_UNAVAILABLE || r.status() == HttpStatus.TOO_MANY_REQUESTS) {
            return ResponseEntity.status(r.status()).header(HttpHeaders.RETRY_AFTER, "1")
                    .contentType(MediaType.APPLICATION_JSON).body(answer.getBody());
        }
        return answer;
    }

    private static long parseLong(String value, long absent, String problem) {
        if (value == null) {
            return absent;
        }
        try {
            return Long.parseLong(value.strip());
        }
        catch (NumberFormatException e) {
            throw ApiException.invalid(problem);
        }
    }
}
