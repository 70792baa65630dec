package dev.waterline.attachments;

import java.io.IOException;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.auth.ApiAuthentication;
import dev.waterline.auth.QueryToken;
import dev.waterline.blobs.Blobs;
import dev.waterline.input.InputGate;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.web.ApiException;
import dev.waterline.web.BodyAllowance;
import dev.waterline.web.BodyTooLarge;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import dev.waterline.web.Pace;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.UrlPathHelper;

/**
 * PROTOCOL.md §9's attachments over REST: the upload into a chat and the download. Who may upload
 * (a member of the chat) is settled, and the row begun, before any byte of the body is read; the
 * body is stored a part at a time within a transfer's turn ({@link Blobs#receive}); an upload that
 * fails or grows past {@code max-bytes} keeps nothing. A download is served as user content
 * ({@link Blobs#send}) to a reader {@link AttachmentRepository#readable} admits, and is 404 to
 * anyone else, as for an id that does not exist.
 */
@RestController
class AttachmentController {

    private static final Log log = LogFactory.getLog(AttachmentController.class);

    static final int MAX_CONTENT_TYPE = 255;
    static final int MAX_NAME = 255;

    private final AttachmentRepository store;
    private final Blobs blobs;
    private final AttachmentProperties properties;
    private final DatabaseTurns turns;
    private final AttachmentMetrics metrics;
    private final ThrottledLog dropLog = new ThrottledLog();
    private final ThrottledLog storeLog = new ThrottledLog();

    AttachmentController(AttachmentRepository store, Blobs blobs, AttachmentProperties properties, DatabaseTurns turns,
                         AttachmentMetrics metrics) {
        this.store = store;
        this.blobs = blobs;
        this.properties = properties;
        this.turns = turns;
        this.metrics = metrics;
    }

    /** The upload takes bodies up to {@code max-bytes}. */
    @Component
    static class AttachmentUploads implements BodyAllowance {

        private final long max;

        AttachmentUploads(AttachmentProperties properties) {
            this.max = properties.maxBytes().toBytes();
        }

        @Override
        public long maxBodyBytes(HttpServletRequest request) {
            if (!"POST".equals(request.getMethod())) {
                return -1;
            }
            String path = UrlPathHelper.defaultInstance.getLookupPathForRequest(request);
            return path.startsWith("/api/chats/") && path.endsWith("/attachments") && path.chars().filter(c -> c == '/').count() == 4
                    ? max : -1;
        }
    }

    /** The answer to an upload. */
    record Uploaded(String attachmentId, String contentType, long size, String sha256, String name) {
    }

    @Operation(summary = "Upload an attachment into a chat (members only); a send then names it by attachmentId",
            description = "Raw bytes with their Content-Type (default application/octet-stream), up to waterline.attachments.max-bytes"
                    + " (413 too_large beyond, and nothing is kept); an optional name (1-255 characters, no control characters)."
                    + " Membership is checked before the body is read. Until a send names it, only its uploader may read it; an"
                    + " attachment no send names within waterline.attachments.orphan-ttl is deleted.",
            requestBody = @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @Content(mediaType = "application/octet-stream")),
            responses = @ApiResponse(responseCode = "201", description = "the attachment",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Uploaded.class))))
    @PostMapping(path = "/api/chats/{chatId}/attachments", consumes = MediaType.ALL_VALUE)
    ResponseEntity<byte[]> upload(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                  @RequestParam(required = false) String name) throws IOException {
        String user = ApiAuthentication.userId(request);
        String type = request.getContentType() == null || request.getContentType().isBlank()
                ? MediaType.APPLICATION_OCTET_STREAM_VALUE : request.getContentType().strip();
        if (InputGate.idProblem(type, 1, MAX_CONTENT_TYPE) != null) {
            throw ApiException.invalid("Content-Type must be 1-" + MAX_CONTENT_TYPE + " characters without control characters");
        }
        if (name != null && InputGate.idProblem(name, 1, MAX_NAME) != null) {
            throw ApiException.invalid("name must be 1-" + MAX_NAME + " characters without control characters");
        }
        String attachmentId = UlidCreator.getMonotonicUlid().toString();
        AttachmentRepository.Upload upload = new AttachmentRepository.Upload(attachmentId, chatId, user, type, name);
        // who may upload, before a byte of the body is read
        if (!turns.run(() -> store.beginUpload(upload))) {
            metrics.upload(AttachmentMetrics.Upload.NOT_FOUND);
            throw ApiException.notFound();
        }
        long max = properties.maxBytes().toBytes();
        Blobs.Stored stored;
        try {
            stored = blobs.receive(attachmentId, user, request.getInputStream(), max);
        }
        catch (IOException | RuntimeException failed) {
            dropUpload(attachmentId);
            return refusal(failed, max);
        }
        if (!turns.run(() -> store.storeUpload(attachmentId, stored.size(), stored.sha256()))) {
            dropUpload(attachmentId);
            metrics.upload(AttachmentMetrics.Upload.NOT_FOUND);
            throw ApiException.notFound();
        }
        metrics.upload(AttachmentMetrics.Upload.STORED);
        return Json.answer(HttpStatus.CREATED, new Uploaded(attachmentId, type, stored.size(), stored.sha256(), name));
    }

    /** What an upload that failed is answered (nothing of it is kept), counted by outcome; thrown when it is an error. */
    private ResponseEntity<byte[]> refusal(Exception failed, long max) {
        if (failed instanceof Blobs.TooLarge || failed instanceof BodyTooLarge) {
            metrics.upload(AttachmentMetrics.Upload.TOO_LARGE);
            throw new ApiException(HttpStatus.CONTENT_TOO_LARGE, "too_large", "the attachment is larger than " + max + " bytes");
        }
        if (failed instanceof Pace.TooSlow || failed instanceof Blobs.TooLong) {
            // the rest of the body will not be read: the connection closes
            metrics.upload(AttachmentMetrics.Upload.TOO_SLOW);
            return ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).header(HttpHeaders.CONNECTION, "close")
                    .contentType(MediaType.APPLICATION_JSON).body(Json.answer(HttpStatus.REQUEST_TIMEOUT, java.util.Map.of(
                            "error", "too_slow", "message", failed.getMessage() + "; nothing was stored")).getBody());
        }
        if (failed instanceof ApiException refused) {
            // no transfer turn in time (503): nothing was read
            throw refused;
        }
        if (failed instanceof IOException) {
            // the client went away, or its body broke off: nothing is kept, and nobody may be listening
            metrics.upload(AttachmentMetrics.Upload.BROKEN);
            throw ApiException.invalid("the body ended before it was whole; nothing was stored");
        }
        metrics.upload(AttachmentMetrics.Upload.STORE_FAILED);
        long held = storeLog.admit();
        if (held >= 0) {
            log.warn("an attachment could not be written to the file store; answered unavailable" + ThrottledLog.more(held), failed);
        }
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "the file store failed; nothing was stored; retry", 1);
    }

    /**
     * An upload that did not finish: its row goes (erasing what it stored), and the removal of its
     * content is queued whether or not the row was still there to queue it.
     */
    private void dropUpload(String attachmentId) {
        try {
            turns.run(() -> {
                store.dropUpload(attachmentId);
                return null;
            });
            blobs.discard(attachmentId);
        }
        catch (RuntimeException e) {
            // the row stays uploading; the sweep drops it after waterline.blobs.upload-timeout
            metrics.dropFailed();
            long held = dropLog.admit();
            if (held >= 0) {
                log.warn("the row of failed attachment upload " + attachmentId + " could not be dropped now; the sweep will"
                        + ThrottledLog.more(held), e);
            }
        }
    }

    @Operation(summary = "An attachment's bytes, served as a download",
            description = "Readable by its uploader until a send names it, then by the members of its chat; 404 for anyone else."
                    + " As user content: Content-Disposition attachment (with its name), nosniff, a sandboxing Content-Security-Policy,"
                    + " the uploaded type only when it is passive (anything a browser could run is application/octet-stream)."
                    + " ETag (If-None-Match: 304) and one Range (206; 416 past the end) are honoured.",
            responses = @ApiResponse(responseCode = "200", description = "the bytes"))
    @QueryToken
    @GetMapping("/api/attachments/{attachmentId}")
    void download(@Parameter(hidden = true) HttpServletRequest request, @Parameter(hidden = true) HttpServletResponse response,
                  @PathVariable String attachmentId,
                  @RequestParam(name = "access_token", required = false) @Parameter(hidden = true) String accessToken) throws IOException {
        String user = ApiAuthentication.userId(request);
        AttachmentRepository.Stored a = turns.run(() -> store.readable(attachmentId, user)
                .orElseThrow(() -> new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such attachment")));
        blobs.send(new Blobs.File(a.blobId(), a.size(), a.sha256(), a.contentType(), a.name() == null ? attachmentId : a.name()),
                user, request, response);
    }
}
