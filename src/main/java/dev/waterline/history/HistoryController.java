package dev.waterline.history;

import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.waterline.auth.ApiAuthentication;
import dev.waterline.web.ApiException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * PROTOCOL.md §4. {@code since} is resolved to its seq within the chat; anything unresolvable
 * (unknown, purged, another chat's) pages from the beginning of retained history, so recovery
 * degrades to a full sync and never to a gap.
 */
@RestController
class HistoryController {

    record Page(List<HistoryMessage> messages, boolean hasMore) {
    }

    private final HistoryRepository history;
    private final Semaphore reads;
    private final long maxWaitNanos;

    HistoryController(HistoryRepository history, HistoryProperties properties) {
        this.history = history;
        this.reads = new Semaphore(properties.maxConcurrentReads(), true);
        this.maxWaitNanos = properties.maxWait().toNanos();
    }

    @GetMapping("/api/chats/{chatId}/messages")
    Page messages(HttpServletRequest request, @PathVariable String chatId,
                  @RequestParam(required = false) String since,
                  @RequestParam(required = false) String limit) {
        int pageSize = parseLimit(limit);
        acquire();
        try {
            List<HistoryMessage> rows = history.pageForMember(chatId, ApiAuthentication.userId(request), since, pageSize + 1)
                    .orElseThrow(ApiException::notFound);
            boolean hasMore = rows.size() > pageSize;
            return new Page(hasMore ? rows.subList(0, pageSize) : rows, hasMore);
        }
        finally {
            reads.release();
        }
    }

    /** One of the bounded turns at PostgreSQL (see {@link HistoryProperties#maxConcurrentReads}). */
    private void acquire() {
        try {
            if (reads.tryAcquire(maxWaitNanos, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "too many history reads at once; retry");
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
