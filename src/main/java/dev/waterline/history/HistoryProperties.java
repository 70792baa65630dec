package dev.waterline.history;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code waterline.history.*}.
 *
 * @param maxConcurrentReads history pages read from PostgreSQL at once; the rest wait their
 *                           turn. Default 8, half the connection pool, so that a reconnect storm's
 *                           resyncs never hold every pooled connection while the group commit
 *                           waits for one (it gives up after 2 s and answers {@code unavailable}).
 * @param maxWait how long a page waits for its turn before it is answered 503
 *                {@code unavailable} (the client retries). Default 30 s.
 */
@ConfigurationProperties("waterline.history")
public record HistoryProperties(
        @DefaultValue("8") int maxConcurrentReads,
        @DefaultValue("30s") Duration maxWait) {

    public HistoryProperties {
        if (maxConcurrentReads < 1) {
            throw new IllegalArgumentException("waterline.history.max-concurrent-reads must be at least 1");
        }
    }
}
