package dev.waterline.history;

import java.util.List;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.web.ApiException;
import dev.waterline.web.ApiProperties;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * PROTOCOL.md §4. {@code since} is resolved to its seq within the chat; anything unresolvable
 * (unknown, purged, another chat's) pages from the beginning of retained history, so recovery
 * degrades to a full sync and never to a gap. A page is read and serialised within one of the
 * bounded turns at PostgreSQL ({@link DatabaseTurns}), and stops early (with {@code hasMore})
 * once its bodies pass {@code waterline.api.max-page-bytes}, so that however many clients resync
 * at once, the pages in memory are bounded.
 */
@RestController
class HistoryController {

    record Page(List<HistoryMessage> messages, boolean hasMore) {
    }

    private final HistoryRepository history;
    private final DatabaseTurns turns;
    private final long pageBytes;

    HistoryController(HistoryRepository history, DatabaseTurns turns, ApiProperties api) {
        this.history = history;
        this.turns = turns;
        this.pageBytes = api.maxPageBytes().toBytes();
    }

    @Operation(summary = "History after a message, in seq order (PROTOCOL.md §4)",
            description = "since: the last messageId the client has (unknown, purged or another chat's: from the "
                    + "beginning); limit 1-1000, default 100. A page may stop early (hasMore) at the byte budget.",
            responses = @ApiResponse(responseCode = "200", description = "a page of messages",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Page.class))))
    @GetMapping("/api/chats/{chatId}/messages")
    ResponseEntity<byte[]> messages(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                    @RequestParam(required = false) String since,
                                    @RequestParam(required = false) String limit) {
        int pageSize = parseLimit(limit);
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> {
            HistoryRepository.Rows rows = history.pageForMember(chatId, user, since, pageSize + 1, pageBytes)
                    .orElseThrow(ApiException::notFound);
            List<HistoryMessage> page = rows.messages().size() > pageSize ? rows.messages().subList(0, pageSize) : rows.messages();
            return Json.answer(HttpStatus.OK, new Page(page, rows.admitted() > page.size()));
        });
    }

    @Operation(summary = "One entry in its current state (PROTOCOL.md §9); 404 when unknown, of another chat, or not a member",
            responses = @ApiResponse(responseCode = "200", description = "the entry",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = HistoryMessage.class))))
    @GetMapping("/api/chats/{chatId}/messages/{messageId}")
    ResponseEntity<byte[]> message(@Parameter(hidden = true) HttpServletRequest request, @PathVariable String chatId,
                                   @PathVariable String messageId) {
        String user = ApiAuthentication.userId(request);
        return turns.run(() -> Json.answer(HttpStatus.OK, history.oneForMember(chatId, user, messageId)
                .orElseThrow(() -> new ApiException(HttpStatus.NOT_FOUND, "not_found", "no such message in a chat of yours"))));
    }

    private static int parseLimit(String limit) {
        if (limit == null) {
            return 100;
        }
        try {
            int n = Integer.parseInt(limit.strip());
            if (n >= 1 && n <= 1000) {
                return n;
            }
        }
        catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw ApiException.invalid("limit must be an integer from 1 to 1000");
    }
}
