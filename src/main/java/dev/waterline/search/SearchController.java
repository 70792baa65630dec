package dev.waterline.search;

import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.web.ApiException;
import dev.waterline.web.DatabaseTurns;
import dev.waterline.web.Json;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * PROTOCOL.md §10 search. The request is checked before anything reaches PostgreSQL ({@code q}
 * present, not blank, at most {@code max-query-chars}; {@code limit} 1–100; {@code before} a cursor
 * this server gave), then the search takes one of {@code max-concurrent} permits (503 with
 * {@code Retry-After} when none frees up within the statement timeout) and a REST turn at
 * PostgreSQL, and runs under the statement timeout: stopped by it, the answer is 503
 * {@code unavailable} saying so (the same query may succeed on a quieter server, or with a
 * {@code chatId} or rarer words), logged at most once a second and counted. A {@code q} with no
 * word left once parsed (punctuation alone, or stop words of the configuration) is 400
 * {@code invalid}; a {@code chatId} the caller is not in is 404, as everywhere. Like every
 * {@code /api} request, it is counted against the caller's REST rate before it gets here.
 */
@RestController
class SearchController {

    /** One match, as the wire carries it. {@code highlights}: {@code [start, end)} ranges of {@code snippet}. */
    record Result(String chatId, String messageId, long seq, String senderId, String sentAt, String snippet,
                  List<int[]> highlights) {
    }

    /** A page of matches, newest first; {@code next} is the cursor of the page below, or null on the last. */
    record Page(List<Result> results, String next) {
    }

    static final int DEFAULT_LIMIT = 20;
    static final int MAX_LIMIT = 100;

    private static final Log log = LogFactory.getLog(SearchController.class);

    private final SearchRepository repository;
    private final DatabaseTurns turns;
    private final SearchProperties properties;
    private final Semaphore permits;
    private final SecureRandom random = new SecureRandom();
    private final Counter timeouts;
    private final Counter busy;
    private final Timer latency;
    private final ThrottledLog timeoutLog = new ThrottledLog();

    SearchController(SearchRepository repository, DatabaseTurns turns, SearchProperties properties, WaterlineMetrics metrics) {
        this.repository = repository;
        this.turns = turns;
        this.properties = properties;
        this.permits = new Semaphore(properties.maxConcurrent(), true);
        this.timeouts = metrics.counter("waterline.search.timeouts",
                "searches stopped by waterline.search.statement-timeout (answered 503)");
        this.busy = metrics.counter("waterline.search.busy",
                "searches refused because waterline.search.max-concurrent were running for longer than the statement timeout (503)");
        this.latency = metrics.latencyTimer("waterline.search", "time a search spent at PostgreSQL, from its permit to its page");
    }

    @Operation(summary = "Search the caller's chats, newest first (PROTOCOL.md §10)",
            description = "q: 1 to waterline.search.max-query-chars characters, web-search syntax (words, \"a phrase\", or, -word);"
                    + " chatId: only this chat (404 if not a member); limit 1-100, default 20; before: the next cursor of the"
                    + " page above. 503 when the search runs past waterline.search.statement-timeout.",
            responses = @ApiResponse(responseCode = "200", description = "a page of results",
                    content = @Content(mediaType = "application/json", schema = @Schema(implementation = Page.class))))
    @GetMapping("/api/search")
    ResponseEntity<byte[]> search(@Parameter(hidden = true) HttpServletRequest request, @RequestParam(required = false) String q,
                                  @RequestParam(required = false) String chatId, @RequestParam(required = false) String limit,
                                  @RequestParam(required = false) String before) {
        String user = ApiAuthentication.userId(request);
        SearchRepository.Query query = new SearchRepository.Query(user, checkedQuery(q), checkedChat(chatId),
                before == null ? null : SearchCursor.decode(before)
                        .orElseThrow(() -> ApiException.invalid("before must be a next cursor this server gave")),
                Json.limit(limit, DEFAULT_LIMIT, MAX_LIMIT), Snippet.markers(random));
        acquire();
        try {
            long start = System.nanoTime();
            ResponseEntity<byte[]> answer = turns.run(() -> answer(repository.search(query), query));
            latency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            return answer;
        }
        finally {
            permits.release();
        }
    }

    private ResponseEntity<byte[]> answer(SearchRepository.Outcome outcome, SearchRepository.Query query) {
        return switch (outcome) {
            case SearchRepository.Found found -> {
                List<Result> results = found.hits().stream().map(h -> {
                    Snippet s = Snippet.of(h.headline(), query.markers());
                    return new Result(h.chatId(), h.messageId(), h.seq(), h.senderId(), h.sentAt().toString(), s.text(), s.highlights());
                }).toList();
                SearchRepository.Hit last = found.more() ? found.hits().getLast() : null;
                yield Json.answer(HttpStatus.OK, new Page(results,
                        last == null ? null : new SearchCursor(last.sentAt(), last.chatId(), last.seq()).encode()));
            }
            case SearchRepository.NotMember notMember -> throw ApiException.notFound();
            case SearchRepository.NoWords noWords -> throw ApiException.invalid(
                    "q has no word to search for (punctuation alone, or only words the search ignores)");
            case SearchRepository.TimedOut timedOut -> {
                timeouts.increment();
                long held = timeoutLog.admit();
                if (held >= 0) {
                    log.warn("a search ran past waterline.search.statement-timeout (" + properties.statementTimeout()
                            + ") and was stopped" + ThrottledLog.more(held));
                }
                throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "the search ran past "
                        + properties.statementTimeout().toMillis() + " ms and was stopped; name a chatId or rarer words,"
                        + " or try again later");
            }
        };
    }

    private String checkedQuery(String q) {
        if (q == null || q.isBlank()) {
            throw ApiException.invalid("q is required: the words to search for");
        }
        if (q.length() > properties.maxQueryChars()) {
            throw ApiException.invalid("q is longer than " + properties.maxQueryChars() + " characters");
        }
        return q;
    }

    private static String checkedChat(String chatId) {
        if (chatId == null) {
            return null;
        }
        if (chatId.isEmpty() || chatId.length() > 128) {
            throw ApiException.invalid("chatId must be 1 to 128 characters");
        }
        return chatId;
    }

    private void acquire() {
        try {
            if (permits.tryAcquire(properties.statementTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
                return;
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        busy.increment();
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable",
                "too many searches at once; retry", Math.max(1, properties.statementTimeout().toSeconds()));
    }
}
