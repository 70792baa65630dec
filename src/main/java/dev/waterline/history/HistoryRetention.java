package dev.waterline.history;

import java.time.Clock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Ages history out after {@code waterline.retention.history}.
 *
 * <p>Loop: every {@code purge-interval}, delete rows older than the cut-off in chunks of 10,000
 * until a chunk comes back short, so no single transaction holds many locks. On error: log and
 * wait for the next run; nothing else depends on it. Stops with the scheduler. Keeps I4: it only
 * ever deletes past a retention that the configuration forces to be far longer than the outbox's.
 */
@Component
class HistoryRetention {

    private static final Log log = LogFactory.getLog(HistoryRetention.class);
    private static final int CHUNK = 10_000;

    private final HistoryRepository history;
    private final RetentionProperties retention;
    private final Clock clock;

    HistoryRetention(HistoryRepository history, RetentionProperties retention, Clock clock) {
        this.history = history;
        this.retention = retention;
        this.clock = clock;
    }

    @Scheduled(fixedDelayString = "${waterline.retention.purge-interval:1m}", initialDelayString = "${waterline.retention.purge-interval:1m}")
    void purge() {
        try {
            var cutoff = clock.instant().minus(retention.history());
            int deleted;
            do {
                deleted = history.purgeOlderThan(cutoff, CHUNK);
            } while (deleted == CHUNK);
        }
        catch (RuntimeException e) {
            log.warn("history retention pass failed, retrying next run: " + e.getMessage());
        }
    }
}
